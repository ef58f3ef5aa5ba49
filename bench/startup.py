#!/usr/bin/env python3
"""Start-up at the floor: what zeinspect adds to a command that has nothing to compile.

Measured in one run, on this machine:
  (a) Python's own start (`python -c pass`, the interpreter of the .venv);
  (b) `zeinspect --version`;
  (c) `zeinspect audit kernels/ -t default` warm (everything in the build cache: nothing to
      compile, all of zeinspect's own work: reading, judging, printing);
  (d) one ocloc fat build of kernels/ for the same 19 targets (`ocloc compile -device
      <19 targets>` of each module, one after another): what the audit stands in for;
  (e) each module that builds, alone: `zeinspect audit kernels/M.cl -t default` warm against
      that module's own fat build (the worst module's ratio is the figure: a user's edit-build
      loop is one module).
Goals (issues 49, 62): (b) at most 0.03 s, (c) at most 0.02 x (d'), (e) at most 0.02 x.  Medians
over repeats.

Usage: .venv/bin/python bench/startup.py [--repeats N]
Writes bench/results/startup.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

from zeinspect.toolchain.compilers import discover  # noqa: E402
from zeinspect.toolchain.targets import DEFAULT_TARGETS  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
ZEINSPECT = str(ROOT / ".venv" / "bin" / "zeinspect")


def timed(argv: list[str], env: dict | None = None, cwd: Path | None = None, ok: tuple[int, ...] = (0, 1)) -> float:
    return record.measured(argv, env, cwd, ok)[0]


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args()
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "zeinspect")], capture_output=True)
    compiler = discover()[0]
    modules = sorted((ROOT / "kernels").glob("*.cl"))
    with tempfile.TemporaryDirectory(prefix="zeinspect-startup-") as tmp:
        env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(Path(tmp) / "cache"))
        audit = [ZEINSPECT, "audit", str(ROOT / "kernels"), "-t", "default", "--ratchet",
                 str(ROOT / "scratch_ratchet.txt"), "-q", "--compiler", compiler.id]
        timed(audit, env)  # fills the cache
        python = [timed([PYTHON, "-c", "pass"]) for _ in range(args.repeats)]
        version = [timed([ZEINSPECT, "--version"]) for _ in range(args.repeats)]
        warm = [timed(audit, env) for _ in range(args.repeats)]
        alone = {m.name: [*audit[:2], str(m), *audit[3:]] for m in modules if m.name != "ptss_overflow.cl"}
        warm_alone = {name: median([timed(argv, env) for _ in range(args.repeats)]) for name, argv in alone.items()}
        fat, built, fat_alone = [], [], {}
        for _ in range(max(1, args.repeats // 5)):
            each = {m.name: timed([compiler.path, "compile", "-file", str(m), "-device", ",".join(DEFAULT_TARGETS),
                                   "-out_dir", str(Path(tmp) / "fat"), "-q"], cwd=Path(tmp),
                                  ok=(0, record.CL_BUILD_PROGRAM_FAILURE)) for m in modules}
            fat.append(sum(each.values()))
            for name in alone:
                fat_alone.setdefault(name, []).append(each[name])
            # The demanding baseline: without the module that cannot build (its cliff alone costs
            # ocloc most of the fat build), which a user's fat build would not contain.
            built.append(sum(t for name, t in each.items() if name != "ptss_overflow.cl"))
    rows = [
        {"measure": "(a) python -c pass", "median s": round(median(python), 4)},
        {"measure": "(b) zeinspect --version", "median s": round(median(version), 4), "goal": "0.03 s",
         "met": median(version) <= 0.03},
        {"measure": "(c) zeinspect audit kernels/ -t default, warm", "median s": round(median(warm), 3),
         "ratio to (d)": round(median(warm) / median(fat), 4),
         "ratio to (d')": round(median(warm) / median(built), 4), "goal": "0.02 x (d')",
         "met": median(warm) / median(built) <= 0.02},
        {"measure": f"(d) ocloc fat build of kernels/ ({len(modules)} modules, 19 targets)",
         "median s": round(median(fat), 1)},
        {"measure": "(d') the same without ptss_overflow.cl (it cannot build)", "median s": round(median(built), 1)},
    ]
    ratios = {name: warm_alone[name] / median(fat_alone[name]) for name in alone}
    worst = max(ratios, key=ratios.__getitem__)
    rows += [{"measure": f"(e) zeinspect audit {name} -t default, warm, against its own fat build",
              "median s": round(warm_alone[name], 3), "fat build s": round(median(fat_alone[name]), 2),
              "ratio": round(ratios[name], 4), "goal": "0.02 x", "met": ratios[name] <= 0.02,
              **({"worst": True} if name == worst else {})} for name in sorted(alone)]
    for row in rows:
        print(row)
    record.write("startup", "Start-up: --version and a warm audit against Python's start and an ocloc fat build",
                 rows, note=f"{args.repeats} repeats each ({max(1, args.repeats // 5)} of the fat build); "
                            f"{compiler.id}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
