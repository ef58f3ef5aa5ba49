#!/usr/bin/env python3
"""What `--cost` adds to an audit of a real library, and which of its spills matter, on one target:
oneMKL RNG 2026.2.0 (SPIR-V images, built here) or vLLM's attention library (native images).

`--cost` makes a dumping compile (IGC's ISA) of each module that holds a scratch user, for
the targets where it uses scratch, and reads the dump; a kernel read from a native image is
costed from its own code, disassembled (probes.costs.attach_costs); both are cached like any
compile.  This bench inspects the library (downloaded with pip, bench/wheels.py) as
`zeinspect inspect --json` does:
  - without `--cost`, warm (the build cache filled by a first run);
  - with `--cost`, the first time (the dumping compiles cold, the plain ones warm);
  - with `--cost` again, warm;
each in a process of its own, and prints the times and the ratios to the plain audit, with the
number of scratch users and of those whose traffic sits in loops.  The issue's goal: at most
1.3x the audit without it.

Usage: .venv/bin/python bench/cost.py [--library onemkl-rng|vllm] [-t bmg-g21] [--repeat 3]
Writes bench/results/cost[_vllm].json and cost_families[_vllm].json (the docs render them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

LIBRARIES = {
    "onemkl-rng": ("oneMKL RNG 2026.2.0", "onemkl-sycl-rng", "2026.2.0", "libmkl_sycl_rng.so", ""),
    "vllm": ("vLLM's attention library (vllm-xpu-kernels 0.1.16.2, libattn_kernels_xe_2.so)", "vllm-xpu-kernels",
             "0.1.16.2", "libattn_kernels_xe_2.so", "_vllm"),
}
"""--library: (title, package, version, library file, results suffix)."""


def timed(argv: list[str], env: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "zeinspect", *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1, 3):  # 3: an incident (a crashed disassembly), said in the JSON
        raise SystemExit(f"zeinspect {' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return seconds, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--target", default="bmg-g21")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--library", choices=sorted(LIBRARIES), default="onemkl-rng")
    ap.add_argument("--cold", action="store_true",
                    help="Also time both from an empty build cache (a native library's images are disassembled, not "
                         "compiled: minutes for oneMKL's SPIR-V, seconds for vLLM's native images).")
    args = ap.parse_args()
    title, package, version, name, suffix = LIBRARIES[args.library]
    lib = wheels.library(package, version, name)
    # The user's build cache: warm for the plain compiles after a first run; the first --cost
    # run is cold for its dumps only if no earlier run made them (the row says "the first run").
    env = dict(os.environ)
    base = ["inspect", str(lib), "-t", args.target, "-q", "--json"]
    timed(base, env)  # fills the build cache if it is cold
    plain = [timed(base, env)[0] for _ in range(args.repeat)]
    first, doc = timed([*base, "--cost"], env)
    warm = [timed([*base, "--cost"], env)[0] for _ in range(args.repeat)]
    users = [r for r in doc["reports"] if r.get("cost") is not None]
    in_loops = [r for r in users if r["cost"]["in_loops"]]
    # Families (the kernel's name without its template arguments, zeinspect.names.family) ranked
    # by the most scratch a member moves per loop iteration; then the ten costliest kernels, by
    # the names zeinspect shows (formats.labels: what tells a family's members apart).
    sys.path.insert(0, str(ROOT))
    from zeinspect import names
    from zeinspect.formats.labels import labels as label_of

    def per_iteration(r: dict) -> int:
        return r["cost"]["per_iteration_bytes"]

    families: dict[str, list[dict]] = {}
    for r in users:
        families.setdefault(names.family(r["kernel"]), []).append(r)
    ranked = sorted(families.items(), key=lambda kv: -max(map(per_iteration, kv[1])))
    labels = label_of([r["kernel"] for r in users])
    costliest = sorted(users, key=per_iteration, reverse=True)[:10]
    family_rows = [{"family": family, "scratch users": len(members),
             "with traffic in loops": sum(1 for r in members if r["cost"]["in_loops"]),
             "most bytes per loop iteration": max(map(per_iteration, members))} for family, members in ranked]
    kernel_rows = [{"kernel": labels[r["kernel"]], "family": names.family(r["kernel"]),
              "bytes per loop iteration": per_iteration(r), "loop depth": r["cost"]["loop_depth"],
              "scratch bytes": (r["spill_bytes"] or 0) + (r["private_bytes"] or 0)} for r in costliest]
    scratch_users = {names.family(r["kernel"]) + "\0" + r["kernel"] for r in doc["reports"]
                     if (r["spill_bytes"] or 0) + (r["private_bytes"] or 0)}
    unmeasured = len(scratch_users) - len({names.family(r["kernel"]) + "\0" + r["kernel"] for r in users})
    record.write(f"cost_families{suffix}", f"Which spills of {title} matter on {args.target} (--cost)",
                 family_rows[:10] + kernel_rows,
                 note=f"{len(users)} scratch users measured in {len(families)} families ({unmeasured} not measured: "
                      f"see the incidents), {len(in_loops)} of them moving scratch inside loops: the ten families "
                      "with the most a member moves per loop iteration, then the ten costliest kernels.")
    p = statistics.median(plain)
    rows = [{"run": f"inspect --json, warm (median of {args.repeat})", "s": round(p, 2)},
            {"run": "with --cost, the bench's first run (cold only where no earlier run cached its dumps and costs)",
             "s": round(first, 1), "x the audit": round(first / p, 2)},
            {"run": f"with --cost, warm (median of {args.repeat})", "s": round(statistics.median(warm), 2),
             "x the audit": round(statistics.median(warm) / p, 2), "goal": "at most 1.3 x"}]
    if args.cold:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="zeinspect-bench-") as empty:
            cold_plain = timed(base, {**env, "ZEINSPECT_CACHE_DIR": empty})[0]
        with tempfile.TemporaryDirectory(prefix="zeinspect-bench-") as empty:
            cold_cost = timed([*base, "--cost"], {**env, "ZEINSPECT_CACHE_DIR": empty})[0]
        rows += [{"run": "inspect --json, from an empty build cache", "s": round(cold_plain, 1)},
                 {"run": "with --cost, from an empty build cache", "s": round(cold_cost, 1),
                  "x the audit": round(cold_cost / cold_plain, 2)}]
    for row in rows:
        print(row)
    print(f"{len(users)} scratch users measured, {len(in_loops)} with traffic in loops")
    record.write(f"cost{suffix}", f"What --cost adds to an audit: {title} on {args.target}", rows,
                 note=f"{len(doc['reports'])} reports; {len(users)} scratch users measured, {len(in_loops)} of them "
                      "with scratch traffic inside loops. The plain compiles were cached before the first run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
