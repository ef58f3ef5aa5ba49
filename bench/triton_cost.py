#!/usr/bin/env python3
"""What `--cost` adds to a Triton screen: `triton --from-cache` on the Inductor cache of a GPT-2
training step (realworld inductor-gpt2, 67 specializations, 134 builds on bmg-g21 and arl-s),
cold, with and without `--cost`, in the same run.

With `--cost`, every SPIR-V the screen builds is built once, as a dumping compile (IGC's ISA
dump on): its zebin and log are the plain compile's, and the ISA of the builds that may use
scratch is kept for the costs (probes.executor Job.dump); without it, the plain compiles.  The
pairs alternate (plain, cost, plain, cost, ...) so that a slow stretch of the machine falls on
both.  Each run in a fresh process with an empty build cache.  Goal (issue 62): at most 1.3x
the screen without `--cost`.  Also checked: the figures and costs of the two runs agree (the
same reports, scratch users with a cost each).

Usage: .venv/bin/python bench/triton_cost.py [--targets bmg-g21,arl-s] [--repeats 2]
Writes bench/results/triton_cost.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
from triton_cache import realworld  # noqa: E402

ZEINSPECT = str(ROOT / ".venv" / "bin" / "zeinspect")
FIGURES = ("input", "kernel", "target", "status", "spill_bytes", "private_bytes", "scratch_bytes")


def screen(cache: Path, targets: str, build_cache: Path, *extra: str) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([ZEINSPECT, "triton", "--from-cache", str(cache), "-t", targets, "-q", "--json", *extra],
                          capture_output=True, text=True, env=dict(os.environ, ZEINSPECT_CACHE_DIR=str(build_cache)))
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"zeinspect triton {' '.join(extra)}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return seconds, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", default="bmg-g21,arl-s")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    plain: list[float] = []
    costed: list[float] = []
    with tempfile.TemporaryDirectory(prefix="zeinspect-triton-cost-") as tmp:
        with tarfile.open(realworld() / "inductor-gpt2" / "gpt2-step.tar.xz") as tar:
            tar.extractall(tmp, filter="data")
        cache = Path(tmp) / "ind_gpt2"
        for n in range(args.repeats):
            seconds, without = screen(cache, args.targets, Path(tmp) / f"plain{n}")
            plain.append(seconds)
            seconds, cost = screen(cache, args.targets, Path(tmp) / f"cost{n}", "--cost")
            costed.append(seconds)
    same = [[r[k] for k in FIGURES] for r in without["reports"]] == [[r[k] for k in FIGURES] for r in cost["reports"]]
    users = [r for r in cost["reports"] if r["spill_bytes"] or r["private_bytes"] or r["scratch_space_bytes"]]
    measured = sum(1 for r in users if r["cost"] is not None)
    if not same or not users:
        raise SystemExit(f"the two screens disagree (same figures: {same}) or nothing uses scratch ({len(users)})")
    ratio = statistics.median(costed) / statistics.median(plain)
    rows = [
        {"measure": f"zeinspect triton --from-cache, cold, without --cost ({len(without['reports'])} reports)",
         "median s": round(statistics.median(plain), 1), "runs": [round(s, 1) for s in plain]},
        {"measure": f"the same with --cost ({measured} of {len(users)} scratch users costed; "
                    f"{cost['stats']['compiles']} compiles against {without['stats']['compiles']})",
         "median s": round(statistics.median(costed), 1), "runs": [round(s, 1) for s in costed],
         "ratio": round(ratio, 2), "goal": "1.3 x without", "met": ratio <= 1.3},
    ]
    for row in rows:
        print(row)
    record.write("triton_cost", "--cost on a Triton cache: the GPT-2 step's Inductor cache, cold", rows,
                 note=f"targets {args.targets}; {args.repeats} runs each, alternating, each in a fresh process "
                      "with an empty build cache.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
