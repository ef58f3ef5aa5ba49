"""Triton libraries as they run: each library's ops called by a short script (bench/scripts/) on CPU
tensors, captured and screened with `zeinspect triton --run` on four targets; per library, the
kernels reached, screened, spilling and failing, and the time.

    .venv/bin/python bench/triton_libraries.py

Needs the CPU build of torch scripts/setup.sh installs into build/torch-cpu.  The libraries come
from the package index (pip, bench/wheels.py): xpu-kernels 0.3.0 and Liger-Kernel 0.8.5.
Writes bench/results/triton_libraries.json (the docs' benchmarks page shows it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import record  # noqa: E402
import wheels  # noqa: E402

TARGETS = "arl-s,dg2-g10,lnl-m,bmg-g21"
LIBRARIES = (("xpu-kernels", "0.3.0", "xpu_kernels/", "xpu_kernels_ops.py"),
             ("liger-kernel", "0.8.5", "liger_kernel/", "liger_ops.py"))


def main() -> None:
    rows = []
    for package, version, folder, script in LIBRARIES:
        library = wheels.unpacked(package, version, folder.rstrip("/")).parent
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library)))}
        argv = [sys.executable, "-m", "zeinspect", "triton", "--run", "-t", TARGETS, "--json", "-q", "--",
                sys.executable, str(HERE / "scripts" / script)]
        started = time.monotonic()
        res = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
        seconds = time.monotonic() - started
        doc = json.loads(res.stdout) if res.stdout else {}
        reports = doc.get("reports", [])
        kernels = {s["kernel"] for s in doc.get("capture", {}).get("specializations", [])}
        screened = {r["kernel"] for r in reports}
        spilling = {r["kernel"] for r in reports if r.get("scratch_bytes")}
        failing = {r["kernel"] for r in reports if r.get("status") not in ("ok", "not_applicable")}
        rows.append({"library": f"{package} {version}", "kernels reached": len(kernels),
                     "specializations screened": len(screened), "spilling somewhere": len(spilling),
                     "failing somewhere": len(failing), "seconds": round(seconds, 1), "exit": res.returncode})
        print(rows[-1], flush=True)
    record.write("triton_libraries", f"Triton libraries as they run, on {TARGETS}", rows,
                 note="Each library's ops called by bench/scripts/ on CPU tensors, captured with "
                      "`zeinspect triton --run`.")


if __name__ == "__main__":
    main()
