#!/usr/bin/env python3
"""What `zeinspect explain` costs against a plain compile of the same kernel on one target.

For each (kernel, target) below, medians of 3 runs: a plain `ocloc compile` with the options
explain uses (OpenCL C: -g; a Triton SPIR-V: its build's options); `zeinspect inspect` of the
same build with the cache off (a plain compile through zeinspect: Python's start-up, compiler
discovery, the zebin read); `zeinspect explain` with the cache off (the dumping compile, the
dump reading, the liveness pass); and explain again with a warm cache.  Goal: explain costs
at most 1.5x a plain compile.
Usage: .venv/bin/python bench/explain.py [--compiler ID] [--spirv FILE --spirv-options OPTS]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

from zeinspect.toolchain.compilers import discover  # noqa: E402
from zeinspect.toolchain.ocloc import Flags, compile_argv  # noqa: E402

CASES = [("kernels/sg32_accumulate.cl", "dg2-g10", "-g"), ("kernels/fma_tile.cl", "bmg-g21", "-g"),
         ("kernels/fma_tile.cl", "tgllp", "-g")]


def _median(run, times: int = 3) -> float:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compiler", default=None)
    parser.add_argument("--spirv", default=None, help="Also measure a SPIR-V module (e.g. a Triton artifact).")
    parser.add_argument("--spirv-target", default="bmg-g21")
    parser.add_argument("--spirv-options", default="")
    args = parser.parse_args()
    compilers = discover()
    compiler = next(c for c in compilers if args.compiler in (None, c.id))
    cases = [(ROOT / f, t, o, False) for f, t, o in CASES]
    if args.spirv:
        cases.append((Path(args.spirv), args.spirv_target, args.spirv_options, True))
    print(f"compiler {compiler.id}")
    print(f"{'kernel':<28} {'target':<8} {'ocloc s':>8} {'inspect s':>9} {'explain s':>9} {'/ocloc':>7} "
          f"{'/inspect':>8} {'warm s':>7}")
    rows = []
    for file, target, options, spirv in cases:
        with tempfile.TemporaryDirectory() as tmp:
            argv = compile_argv(compiler, str(file), target, spirv_input=spirv, out_dir=tmp,
                                flags=Flags(options))
            plain = _median(lambda argv=argv, tmp=tmp: subprocess.run(argv, cwd=tmp, capture_output=True, check=True))
            given = ["-t", target, "--compiler", compiler.id, "--json", "--options", options]
            explain = [sys.executable, "-m", "zeinspect", "explain", str(file)] + (
                given if spirv else given[:-2])
            inspect = [sys.executable, "-m", "zeinspect", "inspect", str(file), "--no-cache"] + given
            cold_env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(Path(tmp) / "cache"))
            through = _median(lambda inspect=inspect, env=cold_env: subprocess.run(
                inspect, capture_output=True, check=False, env=env, cwd=ROOT))
            cold = _median(lambda explain=explain, env=cold_env: subprocess.run(
                explain + ["--no-cache"], capture_output=True, check=True, env=env, cwd=ROOT))
            warm_env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(Path(tmp) / "warm"))
            subprocess.run(explain, capture_output=True, check=True, env=warm_env, cwd=ROOT)
            warm = _median(lambda explain=explain, env=warm_env: subprocess.run(
                explain, capture_output=True, check=True, env=env, cwd=ROOT))
        print(f"{file.name[:28]:<28} {target:<8} {plain:>8.2f} {through:>9.2f} {cold:>9.2f} {cold / plain:>7.2f} "
              f"{cold / through:>8.2f} {warm:>7.2f}")
        rows.append({"kernel": file.name, "target": target, "ocloc (s)": round(plain, 2),
                     "inspect, no cache (s)": round(through, 2), "explain, no cache (s)": round(cold, 2),
                     "x ocloc": round(cold / plain, 2), "x inspect": round(cold / through, 2),
                     "explain, warm (s)": round(warm, 2)})
    record.write("explain", f"What `zeinspect explain` costs against a plain compile ({compiler.id})", rows,
                 note="Medians of 3. Goal: explain at most 1.5 x a plain compile.")


if __name__ == "__main__":
    main()
