#!/usr/bin/env python3
"""A real SYCL library, side by side in one run: zeinspect against ocloc once per image.

The library is one of oneMKL's SYCL libraries from the Python package index (`--domain`:
rng by default, `onemkl-sycl-rng`, `libmkl_sycl_rng.so.6`: thousands of zstd-compressed
SPIR-V images; dft, blas, ...), downloaded with pip when this runs (kept in
~/.cache/zeinspect/bench).  On the same machine, cores and target:

  anchor  every SPIR-V image with kernels extracted once, then one `ocloc compile
          -spirv_input` per image, as many at once as there are cores (what a user would
          script without zeinspect; images are compiled whatever their aspects);
  distinct the anchor on each distinct image once (issue 46's measure: at most 0.5x);
  same    the anchor on only the compiles zeinspect makes (each distinct image once, none
          the target cannot run, each with the options the SYCL runtime builds it with: the
          image's own, `-vc-codegen` for ESIMD, as zeinspect builds it): the ratio to it is
          zeinspect's own overhead;
  floor   the same compiles with nothing else: already extracted, IGC in long-lived processes
          (the images in `ocloc multi` lists, `cores` at once, split into one list per core and
          into four per core, the faster of the two; no process start per image, no reading, no
          judging): what no audit can beat on these
          cores (issue 62's goal: zeinspect cold within 10 % of it);
  cold    `zeinspect audit LIB -t TARGET` with an empty build cache (modules built alone
          go several to one `ocloc multi` process: probes/executor.py);
  single  the same with ZEINSPECT_MULTI=0 (one ocloc process per build, as before batching);
  warm    the same again (everything cached).

`--all-targets` adds the 19 default targets, cold and warm (long: hours on 2 cores cold).
Prints the figures, zeinspect's peak RSS, its verdict counts, and writes
bench/results/sycl_library-DOMAIN-TARGET.json (one file per domain and target: a run of another
leaves the others' figures).  `--no-anchors`: zeinspect alone, cold then warm.  Usage:
  .venv/bin/python bench/sycl_library.py [--domain rng] [--target dg2-g10] [--all-targets] [--version 2026.2.0]
      [--pairs N]
  .venv/bin/python bench/sycl_library.py --domain rng --target bmg-g21 --no-anchors [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

from zeinspect.inputs.offload import find_images  # noqa: E402
from zeinspect.inputs.spirv import read_module  # noqa: E402
from zeinspect.inputs.sycl_image import options_for_target  # noqa: E402
from zeinspect.toolchain.compilers import discover  # noqa: E402
from zeinspect.toolchain.ocloc import multi_line  # noqa: E402
from zeinspect.toolchain.requirements import check  # noqa: E402

ZEINSPECT = [str(ROOT / ".venv" / "bin" / "zeinspect")]
FILE_NAMES = {"datafitting": "data_fitting"}


def library(domain: str, version: str) -> Path:
    """The library from the wheel, downloaded with pip (the system's pip settings apply)."""
    return wheels.library(f"onemkl-sycl-{domain}", version or None,
                          f"libmkl_sycl_{FILE_NAMES.get(domain, domain)}.so")


def timed(argv, env=None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, proc


def anchor(compiler, lib: Path, target: str, tmp: Path, *, distinct: bool = False,
           applicable: bool = False, floor: bool = False) -> tuple[float, int, int]:
    """(seconds, images compiled, failures): one ocloc per SPIR-V image, `cores` at once.

    With `distinct`, each distinct image once (the issue's measure: plain ocloc per distinct
    image); with `applicable` too, none the target cannot run (its required aspects missing),
    each built with the options the runtime builds it with (`runtime_options`): the compiles
    zeinspect itself makes, so the ratio is zeinspect's own overhead per compile.
    With `floor`, those files are built by `cores` long-lived `ocloc multi` processes instead."""
    images = [img for img in find_images(lib.read_bytes(), str(lib)) if img.kind == "spirv" and not img.skipped]
    files: list[tuple[Path, str]] = []
    seen = set()
    ip = compiler.ips(target)[0]
    for i, img in enumerate(images):
        if not read_module(img.data, str(i)).kernel_names():
            continue
        if distinct:
            if img.data in seen or (applicable and img.info and check(img.info, target, ip, [compiler]).unmet):
                continue
            seen.add(img.data)
        path = tmp / f"{i:05d}.spv"
        path.write_bytes(img.data)
        files.append((path, runtime_options(img, target) if applicable else ""))

    def one(file: tuple[Path, str]) -> int:
        path, options = file
        return subprocess.run([compiler.path, *_compile_args(path, options, target, tmp / "out" / path.stem)],
                              capture_output=True, cwd=tmp).returncode

    cores = os.cpu_count() or 1
    if floor:
        return _floor(compiler, files, target, tmp, cores)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        codes = list(pool.map(one, files))
    return time.perf_counter() - start, len(files), sum(1 for c in codes if c != 0)


def _compile_args(path: Path, options: str, target: str, out: Path) -> list[str]:
    """`ocloc compile`'s arguments for one image, alone or as a line of an `ocloc multi` list."""
    return ["compile", "-spirv_input", "-file", str(path), "-device", target, "-out_dir", str(out), "-q",
            *(["-options", options] if options else [])]


def runtime_options(img, target: str) -> str:
    """The options the SYCL runtime builds an image with on `target` (what zeinspect builds it
    with: the image's own compile and link options, `-vc-codegen` for an ESIMD image; measured on
    oneMKL DFT for bmg-g21, these builds take 4.3-4.8 s on 2 cores against 4.4-5.1 s without them)."""
    info = img.info
    if info is None:
        return ""
    tokens, _ = options_for_target(info.compile_options, info.link_options, (target,), esimd=info.is_esimd,
                                   grf_size=info.grf_size, opt_level=info.opt_level)
    return " ".join(tokens)


def _floor(compiler, files: list[tuple[Path, str]], target: str, tmp: Path, cores: int) -> tuple[float, int, int]:
    """The files built by long-lived `ocloc multi` processes (a line per build: the arguments
    after `ocloc compile`, quoted as zeinspect quotes them, toolchain.ocloc.multi_line), `cores`
    at once, split two ways: one list per core of about equal size in bytes (no process start
    but one per core), and four lists per core taken by whichever core is free (what evens out
    lists whose compile times differ: with its images' options, oneMKL DFT's ESIMD images take
    longer per byte, and one list per core left a core idle for up to 2 s of 5).  The faster of
    the two is the floor."""
    runs = [_multi_lists(compiler, files, target, tmp / f"floor-{count}", cores, count) for count in (cores, 4 * cores)]
    return min(seconds for seconds, _ in runs), len(files), len(files) - runs[-1][1]


def _multi_lists(compiler, files: list[tuple[Path, str]], target: str, tmp: Path, cores: int,
                 count: int) -> tuple[float, int]:
    """(seconds, builds made): `files` in `count` lists of about equal size (the largest first,
    each to the lightest list), built by `cores` at a time, the heaviest lists first."""
    lists: list[list[tuple[Path, str]]] = [[] for _ in range(count)]
    sizes = [0] * count
    for path, options in sorted(files, key=lambda f: -f[0].stat().st_size):
        k = sizes.index(min(sizes))
        lists[k].append((path, options))
        sizes[k] += path.stat().st_size
    tmp.mkdir(parents=True, exist_ok=True)
    listings = []
    for k in sorted(range(count), key=lambda k: -sizes[k]):
        if lists[k]:
            listing = tmp / f"list-{k}.txt"
            listing.write_text("".join(multi_line(["ocloc", *_compile_args(f, options, target, tmp / "out" / f.stem)])
                                       + "\n" for f, options in lists[k]))
            listings.append(listing)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        runs = list(pool.map(lambda listing: subprocess.run([compiler.path, "multi", str(listing)],
                                                            capture_output=True, text=True, cwd=tmp), listings))
    seconds = time.perf_counter() - start
    built = sum(1 for f, _ in files if any((tmp / "out" / f.stem).glob("*.bin")))
    if any(r.returncode not in (0, 1) for r in runs) and not built:
        raise SystemExit(f"ocloc multi failed: {runs[0].stderr[-400:] or runs[0].stdout[-400:]}")
    return seconds, built


def audit(lib: Path, targets: str, cache: Path, *, single: bool = False) -> tuple[float, dict]:
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(cache), **({"ZEINSPECT_MULTI": "0"} if single else {}))
    seconds, proc = timed(ZEINSPECT + ["audit", str(lib), "-t", targets, "--ratchet", os.devnull, "-q",
                                       "--format", "json"], env=env)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"zeinspect audit failed: {proc.stderr[-800:]}")
    return seconds, json.loads(proc.stdout)


def describe(doc: dict) -> dict:
    s = doc["summary"]
    return {"kernels": s["kernels"], "targets": s["targets"], "verdicts": s["verdicts"], "passed": doc["passed"],
            "compiles": doc["stats"].get("compiles"), "cache_hits": doc["stats"].get("cache_hits"),
            "peak_rss_mib": round(doc["stats"]["peak_rss_bytes"] / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="rng", help="the oneMKL domain: rng, dft, blas, ...")
    parser.add_argument("--target", default="dg2-g10")
    parser.add_argument("--all-targets", action="store_true", help="also the 19 default targets, cold and warm")
    parser.add_argument("--version", default="2026.2.0", help="the wheel's version ('' for the newest)")
    parser.add_argument("--no-anchors", action="store_true",
                        help="zeinspect alone: cold, then warm `--repeats` times "
                             "(bench/results/sycl_library_warm-DOMAIN-TARGET.json)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=1,
                        help="the floor and the cold audit measured this many times, one after the other; the "
                             "ratio to the floor is the median of the pairs' (the machine's speed drifts)")
    args = parser.parse_args()
    lib = library(args.domain, args.version)
    compiler = discover()[0]
    print(f"{lib.name} ({lib.stat().st_size / 2**20:.1f} MiB), compiler {compiler.id}, {os.cpu_count()} cores")
    result: dict = {"library": lib.name, "compiler": compiler.id, "cores": os.cpu_count(), "target": args.target}
    if args.no_anchors:
        return warm_only(lib, args, result)
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-sycl-") as name:
        tmp = Path(name)
        seconds, count, failed = anchor(compiler, lib, args.target, tmp)
        result["anchor"] = {"seconds": seconds, "images": count, "failed": failed}
        print(f"anchor: ocloc once per image, {count} images on {args.target}: {seconds:.1f} s ({failed} failed)")
        distinct, distinct_count, distinct_failed = anchor(compiler, lib, args.target, tmp, distinct=True)
        result["anchor_distinct"] = {"seconds": distinct, "images": distinct_count, "failed": distinct_failed}
        print(f"anchor, ocloc once per distinct image: {distinct_count} images: {distinct:.1f} s "
              f"({distinct_failed} failed)")
        same, same_count, same_failed = anchor(compiler, lib, args.target, tmp, distinct=True, applicable=True)
        result["anchor_same_compiles"] = {"seconds": same, "images": same_count, "failed": same_failed}
        print(f"anchor, the compiles zeinspect makes (distinct, applicable images): {same_count} images: "
              f"{same:.1f} s ({same_failed} failed)")
        floor, floor_count, floor_failed = anchor(compiler, lib, args.target, tmp, distinct=True, applicable=True,
                                                  floor=True)
        result["floor"] = {"seconds": floor, "images": floor_count, "failed": floor_failed}
        print(f"floor, the same compiles in long-lived ocloc multi processes, {os.cpu_count()} at once: {floor:.1f} s "
              f"({floor_failed} failed)")
        single, single_doc = audit(lib, args.target, tmp / "cache-single", single=True)
        cold, doc = audit(lib, args.target, tmp / "cache")
        warm, warm_doc = audit(lib, args.target, tmp / "cache")
        result["cold_single_process"] = {"seconds": single, **describe(single_doc)}
        result["cold"] = {"seconds": cold, **describe(doc)}
        result["warm"] = {"seconds": warm, **describe(warm_doc)}
        same_reports = single_doc["summary"] == doc["summary"] and single_doc.get("verdicts") == doc.get("verdicts")
        result["batched_equals_single"] = same_reports
        print(f"zeinspect audit, cold, one ocloc per build: {single:.1f} s = {single / same:.2f} x the same "
              f"compiles by ocloc alone")
        print(f"zeinspect audit, cold, batched: {cold:.1f} s = {cold / seconds:.2f} x the anchor, "
              f"{cold / distinct:.2f} x ocloc per distinct image (goal 0.5), "
              f"{cold / same:.2f} x the same compiles by ocloc alone, {cold / floor:.2f} x the floor (goal 1.1); "
              f"{doc['stats'].get('multi_batches')} ocloc multi batches; peak RSS {result['cold']['peak_rss_mib']} MiB; "
              f"verdicts identical to one process per build: {same_reports}")
        print(f"zeinspect audit, warm: {warm:.1f} s")
        if args.pairs > 1:
            result["pairs"] = pairs(compiler, lib, args, tmp, (cold, floor))
        print(f"  {doc['summary']['text']}")
        print(f"  verdicts: {doc['summary']['verdicts']}")
        if args.all_targets:
            cold, doc = audit(lib, "default", tmp / "cache-all")
            warm, warm_doc = audit(lib, "default", tmp / "cache-all")
            result["default_targets"] = {"cold": {"seconds": cold, **describe(doc)},
                                         "warm": {"seconds": warm, **describe(warm_doc)}}
            print(f"19 default targets: cold {cold:.0f} s (compiles {doc['stats'].get('compiles')}), "
                  f"warm {warm:.1f} s (goal 15 s); peak RSS {result['default_targets']['cold']['peak_rss_mib']} MiB")
            print(f"  {doc['summary']['text']}")
            print(f"  verdicts: {doc['summary']['verdicts']}")
    _write(f"sycl_library-{args.domain}-{args.target}", result)


def pairs(compiler, lib: Path, args: argparse.Namespace, tmp: Path, first: tuple[float, float]) -> dict:
    """The floor, then the cold audit (a new cache), `args.pairs` times in all (the run's own pair
    first): on a machine whose speed drifts by a third within the hour, one pair says little; the
    pairs' median ratio says more."""
    import statistics

    measured = [first]
    for n in range(1, args.pairs):
        where = tmp / f"pair-{n}"
        where.mkdir()
        floor, _, _ = anchor(compiler, lib, args.target, where, distinct=True, applicable=True, floor=True)
        cold, _ = audit(lib, args.target, where / "cache")
        measured.append((cold, floor))
        print(f"pair {n + 1}: audit {cold:.2f} s, floor {floor:.2f} s: {cold / floor:.2f} x")
    ratios = [cold / floor for cold, floor in measured]
    print(f"{len(ratios)} pairs: median {statistics.median(ratios):.2f} x the floor (goal 1.1), "
          f"from {min(ratios):.2f} to {max(ratios):.2f}")
    return {"audit_seconds": [round(c, 2) for c, _ in measured], "floor_seconds": [round(f, 2) for _, f in measured],
            "ratios": [round(r, 3) for r in ratios], "median": round(statistics.median(ratios), 3)}


def _write(name: str, result: dict) -> None:
    """bench/results/NAME.json: the command, date and machine, then the run's figures."""
    record.write_doc(name, {**record.stamp(), **result})


def warm_only(lib: Path, args: argparse.Namespace, result: dict) -> None:
    """The audit cold, then warm `--repeats` times: what a warm audit of a library of thousands
    of images costs beyond reading it (oneMKL RNG: 5,204 images)."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-sycl-") as name:
        cold, doc = audit(lib, args.target, Path(name) / "cache")
        warms = [audit(lib, args.target, Path(name) / "cache")[0] for _ in range(args.repeats)]
    result.update(images=len(find_images(lib.read_bytes(), str(lib))), cold={"seconds": cold, **describe(doc)},
                  warm={"seconds": sorted(warms)})
    print(f"{result['images']} images; zeinspect audit cold {cold:.1f} s, warm {', '.join(f'{w:.2f}' for w in warms)} s")
    _write(f"sycl_library_warm-{args.domain}-{args.target}", result)


if __name__ == "__main__":
    main()
