#!/usr/bin/env python3
"""What occupancy costs an audit: oneMKL RNG inspected on one target, with and without it.

The occupancy model adds no compile: it is arithmetic on figures every report already has
(zeinspect.occupancy.of).  This bench measures that claim on a real library: it inspects
oneMKL's RNG library (downloaded with pip, bench/wheels.py) as `zeinspect inspect --json`
does, in-process, `--repeat` times with a warm build cache (the strictest case: a cold audit
is minutes of ocloc, which occupancy does not touch), once writing the JSON as it is and once
with the occupancy model switched off (`occupancy.of` returning None, for this bench only),
and prints the median times and their ratio.  The goal is at most 1.02x.

Usage: .venv/bin/python bench/occupancy.py [-t bmg-g21] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
import wheels  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from zeinspect import occupancy  # noqa: E402
from zeinspect.cli import cli  # noqa: E402


def one_run(lib: Path, target: str) -> tuple[float, dict]:
    """`zeinspect inspect LIB -t TARGET -q --json`, in this process."""
    start = time.perf_counter()
    res = CliRunner().invoke(cli, ["inspect", str(lib), "-t", target, "-q", "--json"], catch_exceptions=False)
    seconds = time.perf_counter() - start
    if res.exit_code not in (0, 1):
        raise SystemExit(f"inspect failed ({res.exit_code}): {res.output[-500:]}")
    return seconds, json.loads(res.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--target", default="bmg-g21")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    lib = wheels.library("onemkl-sycl-rng", "2026.2.0", "libmkl_sycl_rng.so")
    first, doc = one_run(lib, args.target)  # fills the build cache if it is cold
    print(f"first run (may compile): {first:.1f} s")
    real_of = occupancy.of
    timings: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(args.repeat):
        for mode in ("with", "without"):
            occupancy.of = real_of if mode == "with" else (lambda report, wg_size=None: None)
            seconds, got = one_run(lib, args.target)
            assert all((r["occupancy"] is None) == (mode == "without") for r in got["reports"] if r["grf"])
            timings[mode].append(seconds)
    occupancy.of = real_of
    reports = doc["reports"]
    figures = [r for r in reports if r["grf"] and r["simd"]]
    start = time.perf_counter()
    for r in figures:
        occupancy.limits(r["ip"], grf_count=r["grf"], simd=r["simd"], slm_bytes=r["slm_bytes"] or 0,
                         eu_thread_count=r["eu_thread_count"])
    per_report = (time.perf_counter() - start) / max(1, len(figures))
    with_s, without_s = statistics.median(timings["with"]), statistics.median(timings["without"])
    print(f"oneMKL RNG on {args.target}: {len(reports)} reports, warm cache, median of {args.repeat}")
    print(f"  inspect --json with occupancy:    {with_s:.2f} s")
    print(f"  inspect --json without occupancy: {without_s:.2f} s")
    print(f"  ratio: {with_s / without_s:.3f}x (goal: at most 1.02x); the model: {per_report * 1e6:.1f} us per report")
    record.write("occupancy", f"The occupancy model's cost: oneMKL RNG 2026.2.0 on {args.target}, warm", [
        {"reports": len(reports), "inspect --json with occupancy (s)": round(with_s, 2),
         "without (s)": round(without_s, 2), "ratio": round(with_s / without_s, 3), "goal": "at most 1.02 x",
         "the model per report (us)": round(per_report * 1e6, 1)}], note=f"Medians of {args.repeat} runs.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
