#!/usr/bin/env python3
"""A standing sweep of the real SYCL ecosystem: every library audited as a user would.

Downloads with pip (bench/wheels.py; nothing is vendored) and runs `zeinspect inspect LIB -t
TARGET --json` once per library and target:
  - every oneMKL SYCL domain library on the package index (blas, lapack, sparse, dft, rng,
    stats, vm, datafitting);
  - dpnp's SYCL extension modules (every shared object of the wheel that holds device images);
  - dpctl (its shared objects, as installed with this project);
  - packages no Intel team made, as the wheels users install (the `.whl` itself): vllm-xpu-kernels
    0.1.16.2 (vLLM's kernels: every library; native images for pvc, bmg-g21, bmg-g31 and an
    Xe3P IP, so bmg-g21 reads them as shipped and the other targets name what they lack) and
    xpu-kernels 0.3.0 (its SYCL int8 library, SPIR-V compiled for every target);
on a target matrix that covers each family's constraints: tgllp (sub-groups 8/16/32, no
fp64), dg2-g10 (no fp64), bmg-g21 (no sub-group 8), lnl-m, arl-s.

It prints and writes (bench/results/realworld.json, realworld.md) per library and target:
kernels, findings by status, not-applicable pairs by unmet requirement, build failures
grouped by cause (kernel names and numbers folded), wall time and peak RSS; and per target
(a "column") the sum of times.  Results are cached in zeinspect's build cache, so a rerun is
minutes; `--cold` uses a fresh cache in a temporary folder to measure a cold column.

Each run merges its rows into the results already written (a row per library and target, marked
cold or warm), so columns measured in separate runs end in one table.  `--cache-dir DIR` keeps
the build cache of a cold run (DIR must be empty) for a warm run after it.

Usage: .venv/bin/python bench/realworld.py [-t bmg-g21,tgllp] [--only sparse,lapack] [--cold]
                                           [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

ZEINSPECT = [str(ROOT / ".venv" / "bin" / "zeinspect")]
TARGETS = ("tgllp", "dg2-g10", "bmg-g21", "lnl-m", "arl-s")
ONEMKL_VERSION = "2026.2.0"
ONEMKL = ("blas", "lapack", "sparse", "dft", "rng", "stats", "vm", "datafitting")


FILE_NAMES = {"datafitting": "data_fitting"}  # the wheel's name and its library's differ


def onemkl(domain: str) -> list[Path]:
    return [wheels.library(f"onemkl-sycl-{domain}", ONEMKL_VERSION,
                           f"libmkl_sycl_{FILE_NAMES.get(domain, domain)}.so")]


def dpnp() -> list[Path]:
    """dpnp's shared objects that hold SYCL device images (the others are host code only)."""
    whl = wheels.wheel("dpnp")
    out = wheels.store() / whl.stem
    found = []
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if not re.search(r"\.so(\.\d+)*$", name):
                continue
            dest = out / name
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                data = z.read(name)
                if b"__CLANG_OFFLOAD_BUNDLE__" not in data and b".tgtimg" not in data:
                    continue
                dest.write_bytes(data)
            found.append(dest)
    return sorted(found)


def dpctl() -> list[Path]:
    import dpctl as installed  # a runtime dependency of zeinspect

    root = Path(installed.__file__).parent
    return sorted(p for p in root.rglob("*.so") if b".tgtimg" in p.read_bytes())


def as_shipped(package: str, version: str) -> list[Path]:
    """A package as users install it: the wheel itself, read member by member by zeinspect."""
    return [wheels.wheel(package, version)]


LIBRARIES = {**{d: (lambda d=d: onemkl(d)) for d in ONEMKL}, "dpnp": dpnp, "dpctl": dpctl,
             "vllm-xpu-kernels": lambda: as_shipped("vllm-xpu-kernels", "0.1.16.2"),
             "xpu-kernels": lambda: as_shipped("xpu-kernels", "0.3.0")}


def _fold(reason: str) -> str:
    """A failure's cause without the kernel it names, its numbers or the IR instruction IGC
    quotes: failures group by cause (the VC back end's "Intrinsic is not supported by the
    <XeLP> platform" keeps the intrinsic's family, `lsc.load.ugm`)."""
    text = reason or ""
    unsupported = re.search(r"@llvm\.vc\.internal\.([a-z]+\.[a-z]+\.[a-z]+).*?>: (Intrinsic is not supported "
                            r"by the <\w+> platform)", text)
    if unsupported:
        return f"VC back end: {unsupported.group(1)}: {unsupported.group(2)}"
    text = re.sub(r"in kernel '[^']*'", "in kernel K", text)
    text = re.sub(r"kernel \S+", "kernel K", text)
    text = re.sub(r"\S*\[\.tgtimg\[\d+\]\]", "IMAGE", text)
    text = re.sub(r"\b\d+\b", "N", text)
    return text[:200]


def audit(paths: list[Path], target: str, env: dict) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(ZEINSPECT + ["inspect", *map(str, paths), "-t", target, "-q", "--json"],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    try:  # exit 3 (a compiler crashed or hung) still writes the document: the crash is a finding
        doc = json.loads(proc.stdout)
    except ValueError:
        return {"error": (proc.stderr or proc.stdout).strip()[-500:], "seconds": round(seconds, 1)}
    reports = doc["reports"]
    status = collections.Counter(r["status"] for r in reports)
    na = collections.Counter(u for r in reports if r["status"] == "not_applicable" for u in r["unmet_requirements"])
    unchecked = collections.Counter(u for r in reports if r["status"] != "not_applicable"
                                    for u in r.get("unchecked_requirements", []))
    failures = collections.Counter(_fold(r["reason"]) for r in reports if r["status"] == "build_failed")
    users = sum(1 for r in reports if r["status"] == "ok" and ((r["spill_bytes"] or 0) or (r["private_bytes"] or 0)))
    esimd_zero = sum(1 for r in reports if r["status"] == "ok" and "-vc-codegen" in (r.get("options") or "")
                     and any("Spill memory used" in line for line in r["log"]) and not r["spill_bytes"])
    return {"kernels": len({r["kernel"] for r in reports}), "reports": len(reports), "status": dict(status),
            "scratch_users": users, "not_applicable": dict(na.most_common()), "unchecked": dict(unchecked.most_common()),
            "build_failures": dict(failures.most_common()), "esimd_spills_reported_zero": esimd_zero,
            "seconds": round(seconds, 1), "peak_rss_mib": round(doc["stats"].get("peak_rss_bytes", 0) / 2**20),
            "compiles": doc["stats"].get("compiles"), "compiler": [c["id"] for c in doc.get("compilers", [])],
            "exit": proc.returncode, "incidents": collections.Counter(_fold(i) for i in doc.get("incidents", []))}


def _findings(runs: dict) -> dict:
    """The run of a library and target whose findings the tables show: the cold one, else the
    warm one; a run that lost its document gives way to one that kept it (cold and warm agree)."""
    kept = [runs[m] for m in ("cold", "warm") if m in runs]
    return next((r for r in kept if "status" in r), kept[0])


def markdown(results: dict, targets: list[str]) -> str:
    """The findings of each library and target (_findings) with the cold and warm times
    measured; then each column's sums, cold and warm, and its findings."""
    lines = ["| library | target | kernels | ok | scratch users | build failed | overflow | n/a | n/a by reason "
             "| cold | warm | peak RSS |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for lib, by_target in results.items():
        for target in targets:
            runs = by_target.get(target)
            if not runs:
                continue
            r = _findings(runs)
            times = [f"{runs[m]['seconds']} s" if m in runs else "-" for m in ("cold", "warm")]
            if "error" in r:
                lines.append(f"| {lib} | {target} | error: {r['error'][:80]} | | | | | | | {times[0]} | {times[1]} | |")
                continue
            s = r["status"]
            reasons = "; ".join(f"{k}: {v}" for k, v in r["not_applicable"].items()) or "-"
            lines.append(f"| {lib} | {target} | {r['kernels']} | {s.get('ok', 0)} | {r['scratch_users']} | "
                         f"{s.get('build_failed', 0)} | {s.get('scratch_overflow', 0)} | {s.get('not_applicable', 0)} | "
                         f"{reasons} | {times[0]} | {times[1]} | {r['peak_rss_mib']} MiB |")
    lines += ["", "| column | libraries | cold | warm | scratch users | not applicable, by unmet requirement "
              "| build failed | of which crashed (exit 3) |", "|---|---|---|---|---|---|---|---|"]
    for target in targets:
        rows = [by[target] for by in results.values() if target in by]
        cells = [str(len(rows))]
        for mode in ("cold", "warm"):
            times = [runs[mode]["seconds"] for runs in rows if mode in runs]
            cells.append(f"{sum(times):,.0f} s ({sum(times) / 60:.1f} min)" if len(times) == len(results)
                         else f"{len(times)} of {len(results)} libraries")
        found = [r for r in map(_findings, rows) if "status" in r]
        na: collections.Counter = collections.Counter()
        for r in found:
            na.update(r["not_applicable"])
        reasons = "; ".join(f"{k}: {v:,}" for k, v in na.most_common())
        cells += [f"{sum(r['scratch_users'] for r in found):,}", f"{sum(na.values()):,}" + (f" ({reasons})" if na else ""),
                  str(sum(r["status"].get("build_failed", 0) for r in found)),
                  str(sum(sum(r.get("incidents", {}).values()) for r in found))]
        lines.append(f"| {target} | " + " | ".join(cells) + " |")
    failures = [(lib, t, cause, n) for lib, by in results.items() for t, runs in by.items()
                for cause, n in _findings(runs).get("build_failures", {}).items()]
    if failures:
        lines += ["", "Build failures by cause:", ""]
        lines += [f"- {lib} on {t}: {n} x `{cause}`" for lib, t, cause, n in failures]
    crashes = [(lib, t, cause, n) for lib, by in results.items() for t, runs in by.items()
               for cause, n in _findings(runs).get("incidents", {}).items()]
    if crashes:
        lines += ["", "Compiler crashes and hangs (exit 3; each also a finding):", ""]
        lines += [f"- {lib} on {t}: {n} x `{cause}`" for lib, t, cause, n in crashes]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--targets", default=",".join(TARGETS))
    ap.add_argument("--only", help="comma-separated libraries (" + ", ".join(LIBRARIES) + ")")
    ap.add_argument("--cold", action="store_true", help="a fresh build cache: cold times")
    ap.add_argument("--cache-dir", type=Path, help="the build cache to use (empty with --cold)")
    ap.add_argument("--fresh", action="store_true", help="start a new results table, not merge")
    args = ap.parse_args()
    if args.cold and args.cache_dir and args.cache_dir.exists() and any(args.cache_dir.iterdir()):
        ap.error(f"{args.cache_dir}: --cold needs an empty build cache")
    targets = args.targets.split(",")
    chosen = args.only.split(",") if args.only else list(LIBRARIES)
    unknown = [c for c in chosen if c not in LIBRARIES]
    if unknown:
        ap.error(f"unknown libraries: {', '.join(unknown)}")
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = out_dir / "realworld.json"
    results: dict = {}
    if saved.exists() and not args.fresh:
        doc = json.loads(saved.read_text())
        results = doc["results"] if doc.get("format") == 2 else {}  # an older table is started anew
    with tempfile.TemporaryDirectory(prefix="zeinspect-realworld-") as tmp:
        env = dict(os.environ)
        if args.cache_dir:
            args.cache_dir.mkdir(parents=True, exist_ok=True)
            env["ZEINSPECT_CACHE_DIR"] = str(args.cache_dir.resolve())
        elif args.cold:
            env["ZEINSPECT_CACHE_DIR"] = tmp
        inputs = {lib: LIBRARIES[lib]() for lib in chosen}  # every download before the first timing
        for lib, paths in inputs.items():
            results.setdefault(lib, {})
            for target in targets:
                r = audit(paths, target, env)
                r["measured"] = time.strftime("%Y-%m-%d %H:%M")
                results[lib].setdefault(target, {})["cold" if args.cold else "warm"] = r
                print(f"{lib:12} {target:8} " + (f"error {r['error'][:100]}" if "error" in r else
                      f"{r['kernels']:6} kernels {r['status']} n/a {sum(r['not_applicable'].values())} "
                      f"failed {r['status'].get('build_failed', 0)} {r['seconds']:7.1f} s {r['peak_rss_mib']} MiB"),
                      flush=True)
                saved.write_text(json.dumps({"format": 2, "results": results}, indent=1))  # kept if cut short
    every = [t for t in TARGETS if any(t in by for by in results.values())]
    every += sorted({t for by in results.values() for t in by} - set(every))
    measured = sorted(m for by in results.values() for runs in by.values() for r in runs.values()
                      if (m := r.get("measured")))
    when = f"{measured[0]} to {measured[-1]}" if measured else "not recorded"
    text = (f"`bench/realworld.py` (cold: `--cold --cache-dir DIR`, an empty DIR; warm: `--cache-dir DIR` after it), "
            f"measured {when}, on {record.machine()}.\n\n" + markdown(results, every))
    (out_dir / "realworld.md").write_text(text)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
