"""Triton libraries as they run: each library's ops called by a short script (bench/scripts/) on CPU
tensors, captured and screened with `zeinspect triton --run` on its targets; per library, the
launches captured, the specializations, how many were screened and how many were not (the goal:
0; a specialization not screened fails the run, exit 3), those spilling or failing somewhere,
and the time.

The capture's own cost: the command alone, timed in the capture (triton.app.library.capture, the
process `--run` starts, with no screen beside it), with each launch's specialization taken
through Triton's front end in the command (triton.capture.first_stage), against the same capture with
that front end off (ZEINSPECT_TRITON_CAPTURE_FRONT_END=0: each launch answered at Triton's hook
with nothing compiled).  Without a GPU the command cannot run without the capture at all (its
launches need a driver), so that is the run "without zeinspect" here.  Goal: under 1.5x.

    .venv/bin/python bench/triton_libraries.py [--only fla-core] [--overhead-only]

`--overhead-only` measures the capture's cost and leaves the screen out (fla-core's full screen,
572 specializations on 2 targets, takes more than half an hour cold on 2 cores).

Needs the CPU build of torch scripts/setup.sh installs into build/torch-cpu.  The libraries come
from the package index (pip, bench/wheels.py): xpu-kernels 0.3.0, Liger-Kernel 0.8.5, fla-core
0.6.0 (with einops, its one dependency beside torch and Triton), SGLang 0.5.23 (with what its
decode-attention module imports: SGLANG_IMPORTS).
Writes bench/results/triton_libraries.json (the docs' benchmarks page shows it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
import wheels  # noqa: E402

SGLANG_IMPORTS = ("orjson==3.13.0", "pybase64==1.5.1", "pillow==13.0.0", "starlette==1.10.0", "anyio==4.16.0",
                  "pyzmq==27.3.0", "tqdm==4.70.1", "ipython==9.19.1", "traitlets==5.16.1", "aiohttp==3.14.5",
                  "multidict==7.2.1", "yarl==1.25.1", "propcache==0.5.4", "aiohappyeyeballs==2.7.1",
                  "aiosignal==1.4.0", "frozenlist==1.8.0")
"""What SGLang's decode-attention module imports through sglang.srt.utils, beside torch and Triton
(its declared dependencies are a CUDA serving stack: flashinfer, sgl-kernel, xgrammar, ...);
each installed without its own.  Found by importing the module until it imported."""

LIBRARIES = (
    # (package, version, its folder, the script, its dependencies from the index, the targets)
    ("xpu-kernels", "0.3.0", "xpu_kernels", "xpu_kernels_ops.py", (), "arl-s,dg2-g10,lnl-m,bmg-g21"),
    ("liger-kernel", "0.8.5", "liger_kernel", "liger_ops.py", (), "arl-s,dg2-g10,lnl-m,bmg-g21"),
    ("fla-core", "0.6.0", "fla", "fla_ops.py", (("einops", None, "einops"),), "bmg-g21,arl-s"),
    ("sglang", "0.5.23", "sglang", "sglang_ops.py", SGLANG_IMPORTS, "bmg-g21,arl-s"),
)
REPEATS = 3


def python_path(package: str, version: str, folder: str, extra: tuple) -> str:
    """The CPU torch, the library and its dependencies, as the command's PYTHONPATH: `extra`, wheels
    to unpack ((package, version, folder) each), or requirements to install with pip beside the
    library (strings: triton_libraries.SGLANG_IMPORTS)."""
    if extra and isinstance(extra[0], str):
        return os.pathsep.join(map(str, (ROOT / "build" / "torch-cpu", wheels.installed(package, version, only=extra))))
    paths = [ROOT / "build" / "torch-cpu", wheels.unpacked(package, version, folder).parent]
    paths += [wheels.unpacked(p, v, f).parent for p, v, f in extra]
    return os.pathsep.join(map(str, paths))


def capture_seconds(script: Path, path: str, targets: str, front_end: bool) -> float:
    """The command alone, in the capture (no screen), the fastest of REPEATS runs."""
    from zeinspect.app.session import open_session
    from zeinspect.settings import resolve
    from zeinspect.triton.app.library import capture, capture_target

    config = resolve({"targets": tuple(targets.split(","))})
    # The front end's switch is decided in zeinspect's process (capture_target reads the
    # environment variable there), so it is set on the target itself for each measurement.
    target = {**capture_target(config, open_session(config)), "front_end": front_end}
    env = {"PYTHONPATH": os.pathsep.join((path, str(ROOT)))}
    from unittest import mock

    best = float("inf")
    for _ in range(REPEATS):
        with mock.patch.dict(os.environ, env):
            started = time.monotonic()
            capture([sys.executable, str(script)], target=target)
            best = min(best, time.monotonic() - started)
    return round(best, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated packages")
    ap.add_argument("--overhead-only", action="store_true", help="the capture's cost only, no screen")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for package, version, folder, script, extra, targets in LIBRARIES:
        if only and package not in only:
            continue
        path = python_path(package, version, folder, extra)
        with_front, without = (capture_seconds(HERE / "scripts" / script, path, targets, on) for on in (True, False))
        row = {"library": f"{package} {version}", "targets": targets,
               "command in the capture (s)": with_front, "without the front end (s)": without,
               "capture overhead": f"{with_front / without:.2f}x"}
        if args.overhead_only:
            rows.append(row)
            print(row, flush=True)
            continue
        cold = tempfile.mkdtemp(prefix="zeinspect-bench-")  # an empty build cache: the screen cold
        env = {**os.environ, "PYTHONPATH": path, "ZEINSPECT_CACHE_DIR": cold}
        argv = [sys.executable, "-m", "zeinspect", "triton", "--run", "-t", targets, "--json", "-q", "--",
                sys.executable, str(HERE / "scripts" / script)]
        started = time.monotonic()
        res = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
        seconds = time.monotonic() - started
        shutil.rmtree(cold, ignore_errors=True)
        doc = json.loads(res.stdout) if res.stdout else {}
        reports = doc.get("reports", [])
        capture = doc.get("capture", {})
        specs = capture.get("specializations", [])
        total = (doc.get("coverage") or {}).get("total") or {}
        spilling = {r["kernel"] for r in reports if r.get("scratch_bytes")}
        failing = {r["kernel"] for r in reports if r.get("status") not in ("ok", "not_applicable")}
        rows.append({**row, "launches": capture.get("launches"),
                     "kernels": len({s["kernel"] for s in specs}), "specializations": len(specs),
                     "screened": total.get("reported"), "not screened": total.get("unread"),
                     "spilling somewhere": len(spilling), "failing somewhere": len(failing),
                     "seconds (cold)": round(seconds, 1), "exit": res.returncode})
        print(rows[-1], flush=True)
    if only:  # the other libraries keep their last rows
        rows = record.keep_others("triton_libraries", rows, lambda r: r["library"])
    record.write("triton_libraries", "Triton libraries as they run", rows,
                 note="Each library's ops called by bench/scripts/ on CPU tensors, captured with `zeinspect triton "
                      "--run`: every specialization screened from the TTIR the run's own front end wrote (goal: 0 not "
                      "screened); the capture overhead is the command with the front end in the hook against the same "
                      "capture without it (goal: under 1.5x).  `seconds (cold)`: the whole --run with an empty "
                      "build cache of its own.")


if __name__ == "__main__":
    main()
