#!/usr/bin/env python3
"""Triton as the ecosystem writes it: loading, listing and screening real modules.

Measures, on Triton's own tutorials (../shared/realworld/triton-tutorials/, in place) and three
Triton kernel libraries with Intel XPU support from the package index (downloaded with pip,
bench/wheels.py; never vendored):
  - loading a module, no compile (goal: at most 0.5 s each), median of 5;
  - listing a package's kernels and what each needs, no compile (goal: a 50-module package in
    at most 10 s);
  - a warm re-screen of a tutorial kernel through the CLI (goal: at most 2 s);
  - per library: modules, launched kernels, ready to screen, needing values, not loading; and
    the ready ones screened on bmg-g21 (`--signature '*fp16'`), with the outcome per kernel.

Usage: .venv/bin/python bench/triton_modules.py [--no-screen]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

ZEINSPECT = [str(ROOT / ".venv" / "bin" / "zeinspect")]
TUTORIALS = ROOT.parent / "shared" / "realworld" / "triton-tutorials"
LIBRARIES = (("liger-kernel", "0.8.5", "liger_kernel/ops"), ("fla-core", "0.6.0", "fla/ops"),
             ("bitsandbytes", "0.50.2", "bitsandbytes/backends/triton"))
TARGET = "bmg-g21"


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def load_times() -> dict[str, float]:
    from triton.backends.compiler import GPUTarget

    from zeinspect.triton.build.context import offline
    from zeinspect.triton.load import loader

    target = GPUTarget("xpu", {"name": TARGET, "arch": "bmg", "sub_group_sizes": [16, 32]}, 32)
    out = {}
    for path in sorted(TUTORIALS.glob("*.py")):
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            with offline():
                loader.load(str(path), target)
            runs.append(time.perf_counter() - start)
        out[path.name] = statistics.median(runs)
    return out


def listing(folder: Path) -> tuple[float, dict]:
    seconds, proc = timed(ZEINSPECT + ["triton", str(folder), "--list", "--signature", "*fp16", "-t", TARGET,
                                       "-q", "--json"])
    return seconds, json.loads(proc.stdout) if proc.stdout.strip() else {"error": proc.stderr.strip()[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-screen", action="store_true", help="list the libraries only, compile nothing")
    args = ap.parse_args()
    results: dict = {}
    loads = load_times()
    results["load_seconds"] = loads
    print(f"loading a tutorial (median of 5): max {max(loads.values()):.3f} s "
          f"({max(loads, key=loads.get)}), median {statistics.median(loads.values()):.3f} s; goal 0.5 s")
    spec = TUTORIALS / "02-fused-softmax.py:softmax_kernel"
    timed(ZEINSPECT + ["triton", str(spec), "--signature", "*fp32", "-t", TARGET, "-q"])  # warm it
    warm, _ = timed(ZEINSPECT + ["triton", str(spec), "--signature", "*fp32", "-t", TARGET, "-q"])
    results["warm_rescreen_seconds"] = warm
    print(f"warm re-screen of {spec.name}: {warm:.2f} s; goal 2 s")
    results["libraries"] = {}
    for package, version, folder in LIBRARIES:
        path = wheels.unpacked(package, version, folder)
        seconds, doc = listing(path)
        if "error" in doc:
            print(f"{package} {version}: {doc['error']}")
            continue
        row = {"modules": len(list(path.rglob("*.py"))), "list_seconds": round(seconds, 2),
               "launched": len(doc["screened"]) + len(doc["unscreened"]), "ready": doc["screened"],
               "need_values": [u for u in doc["unscreened"] if u["needs"]],
               "cannot_build": [u for u in doc["unscreened"] if not u["needs"]], "load_errors": doc["load_errors"]}
        results["libraries"][package] = row
        print(f"{package} {version} ({folder}): {row['modules']} modules listed in {seconds:.1f} s; "
              f"{row['launched']} launched kernels: {len(row['ready'])} ready, {len(row['need_values'])} need values, "
              f"{len(row['load_errors'])} modules did not load")
        if args.no_screen:
            continue
        secs, proc = timed(ZEINSPECT + ["triton", str(path), "--signature", "*fp16", "-t", TARGET, "-q", "--json"])
        if proc.returncode not in (0, 1):
            print(f"  screen: {proc.stderr.strip()[-300:]}")
            continue
        doc = json.loads(proc.stdout)
        statuses: dict[str, set] = {}
        for r in doc["reports"]:
            statuses.setdefault(r["input"].split("[")[0], set()).add(r["status"])
        row["screen_seconds"] = round(secs, 1)
        row["screened"] = {k: sorted(v) for k, v in statuses.items()}
        row["cannot_build"] = [u for u in doc["unscreened"] if not u["needs"]]
        print(f"  screened on {TARGET} in {secs:.1f} s: {len(statuses)} kernels with figures "
              f"({sum(1 for v in statuses.values() if v == {'ok'})} build), {len(row['cannot_build'])} cannot build here")
        for u in row["cannot_build"]:
            print(f"    cannot build: {u['kernel'].replace(str(path.parent) + '/', '')}: {u['reason'][:160]}")
    rows = [{"library": f"{package} {version} (`{folder}`)", "modules": r["modules"], "launched kernels": r["launched"],
             "ready": len(r["ready"]), "need values": len(r["need_values"]), "cannot build here": len(r["cannot_build"]),
             "modules not loading": len(r["load_errors"]), "listing (s)": r["list_seconds"],
             f"screened on {TARGET} (s)": r.get("screen_seconds", "")}
            for package, version, folder in LIBRARIES if (r := results["libraries"].get(package))]
    record.write("triton_modules", "Triton kernel libraries' modules as their authors write them, listed", rows,
                 note=f"Loading a tutorial module: at most {max(loads.values()):.3f} s (goal 0.5 s); a warm re-screen of "
                      f"a tutorial kernel: {warm:.2f} s (goal 2 s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
