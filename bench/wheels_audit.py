"""Products as they ship, measured: the whole vllm-xpu-kernels wheel on bmg-g21, read from the
`.whl` cold (an empty build cache) and warm, beside its largest library read as a plain file,
and a diff of two releases' wheels; wall time and zeinspect's own peak RSS (os.wait4).

    .venv/bin/python bench/wheels_audit.py [--target bmg-g21] [--old 0.1.16.1] [--new 0.1.16.2]

Writes bench/results/wheels_audit.json (the docs' benchmarks page shows it).  The goals of the
issue that asked for it: the wheel <= 60 s cold and <= 5 s warm, RSS <= 250 MB; a diff of two
releases <= 2x one audit, RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import record  # noqa: E402
import wheels  # noqa: E402

ZEINSPECT = [sys.executable, "-m", "zeinspect"]


def measure(argv: list[str], env: dict) -> tuple[float, float, int]:
    """(seconds, zeinspect's peak RSS in MB, exit code) of one run."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=HERE.parent)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.monotonic() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="bmg-g21")
    parser.add_argument("--old", default="0.1.16.1")
    parser.add_argument("--new", default="0.1.16.2")
    args = parser.parse_args()
    new, old = wheels.wheel("vllm-xpu-kernels", args.new), wheels.wheel("vllm-xpu-kernels", args.old)
    rows = []
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-") as tmp:
        env = {**os.environ, "ZEINSPECT_CACHE_DIR": str(Path(tmp) / "cache")}
        lib = Path(tmp) / "libattn_kernels_xe_2.so"
        # Streamed, not read whole: a child's peak RSS (wait4) counts from the parent's size at
        # fork, so this process must stay small for the figures to be zeinspect's own.
        with zipfile.ZipFile(new) as z, z.open("vllm_xpu_kernels/libattn_kernels_xe_2.so") as src, \
                lib.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        runs = [
            ("the wheel, cold", [*ZEINSPECT, "inspect", str(new), "-t", args.target, "--json", "-q"]),
            ("the wheel, warm", [*ZEINSPECT, "inspect", str(new), "-t", args.target, "--json", "-q"]),
            ("libattn_kernels_xe_2.so (330 MB) as a plain file, warm",
             [*ZEINSPECT, "inspect", str(lib), "-t", args.target, "--json", "-q"]),
            (f"diff of the {args.old} and {args.new} wheels, {args.old} cold",
             [*ZEINSPECT, "diff", str(old), str(new), "-t", args.target, "--json"]),
            (f"diff of the {args.old} and {args.new} wheels, warm",
             [*ZEINSPECT, "diff", str(old), str(new), "-t", args.target, "--json"]),
        ]
        for label, argv in runs:
            seconds, rss, code = measure(argv, env)
            rows.append({"run": label, "seconds": round(seconds, 1), "peak RSS (MB)": round(rss), "exit": code})
            print(f"{label}: {seconds:.1f} s, {rss:.0f} MB, exit {code} (this script: "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)", flush=True)
    record.write("wheels_audit", f"vllm-xpu-kernels {args.new} as it ships, on {args.target}", rows,
                 note="Goals: the wheel <= 60 s cold, <= 5 s warm, RSS <= 250 MB; a diff of two releases <= 2x "
                      "one audit (warm diff against warm audit), RSS <= 300 MB.  Peak RSS is the child's own "
                      "(os.wait4), this script kept small so that it does not count.")


if __name__ == "__main__":
    main()
