#!/usr/bin/env python3
"""The shared build cache on a new machine: an empty local cache, a warm shared store.

Starts a real S3-compatible server on the loopback address (moto's server mode, from the
package index: the zeinspect[test] extra), fills a bucket from one "machine" (a local cache
of its own) and measures another machine's audit with an empty local cache against it, next
to the local-only figures (no --cache-url), for:
  - the small module (one OpenCL C kernel) on the 19 default targets (goal: warm from the
    store in at most 0.5 s);
  - with --library, oneMKL RNG (from the package index) on the 19 default targets (goal: at
    most 60 s warm from the store, against 19 min cold; filling the store is a cold audit).
Also: the same from a shared folder, and reads one object at a time (ZEINSPECT_FETCH_BATCH=1)
against the batched reads zeinspect makes, to show why they are batched.

Usage: .venv/bin/python bench/shared_cache.py [--library [--library-targets T1,T2] [--seed-from DIR]] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

ZEINSPECT = [str(ROOT / ".venv" / "bin" / "zeinspect")]
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, int]:
    port = free_port()
    moto = shutil.which("moto_server", path=str(ROOT / ".venv" / "bin")) or "moto_server"
    proc = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise SystemExit("moto_server did not start")


def audit(path: Path, env: dict, url: str | None, targets: str = "default") -> tuple[float, dict]:
    argv = ZEINSPECT + ["inspect", str(path), "-t", targets, "-q", "--json"] + (["--cache-url", url] if url else [])
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audit failed: {proc.stderr[-600:]}")
    return seconds, json.loads(proc.stdout)["stats"]


def seed(store_url: str, local: Path, port: int) -> int:
    """Upload a local cache's entries (a cold audit's, kept from an earlier run) to the store
    under their own names: a store as an older zeinspect, writing entries only, left it."""
    from concurrent.futures import ThreadPoolExecutor

    s3 = client(port)
    bucket, _, prefix = store_url.removeprefix("s3://").partition("/")
    files = sorted(local.rglob("*.entry"))
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: s3.put_object(Bucket=bucket, Key=f"{prefix}/{p.relative_to(local)}",
                                              Body=p.read_bytes()), files))
    return len(files)


def client(port: int):
    """The bench's own client of the server (boto3, moto's), not zeinspect's store."""
    import boto3

    return boto3.client("s3", aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"], region_name="us-east-1",
                        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                        endpoint_url=f"http://127.0.0.1:{port}")


def measure(name: str, path: Path, work: Path, base_env: dict, url: str, repeat: int,
            seeded: Path | None = None, port: int = 0, one_by_one: bool = True, targets: str = "default") -> dict:
    env = dict(base_env, ZEINSPECT_CACHE_DIR=str(work / f"{name}-filler"))
    extra = {}
    if seeded is not None:
        # The store holds entries only (no bundles): the first new machine reads them one by
        # one and writes the bundles; the machines after it are answered by the bundles.
        env = dict(base_env, ZEINSPECT_CACHE_DIR=str(seeded))
        start = time.perf_counter()
        extra["seeded_entries"] = seed(url, seeded, port)
        extra["seeding_seconds"] = time.perf_counter() - start
        cold, filled = float("nan"), {"compiles": 0}
        first = dict(base_env, ZEINSPECT_CACHE_DIR=str(work / f"{name}-first"))
        extra["first_new_machine_entries_only"], got = audit(path, first, url, targets)
        assert got["compiles"] == 0, got
    else:
        cold, filled = audit(path, env, url, targets)  # machine A: fills its cache and the store
    warm_local, _ = audit(path, env, None, targets)  # machine A again, local only
    runs, batch1 = [], []
    for n in range(repeat):
        fresh = dict(base_env, ZEINSPECT_CACHE_DIR=str(work / f"{name}-new-{n}"))
        seconds, got = audit(path, fresh, url, targets)
        assert got["compiles"] == 0, got
        runs.append(seconds)
    one = dict(base_env, ZEINSPECT_CACHE_DIR=str(work / f"{name}-one"), ZEINSPECT_FETCH_BATCH="1")
    batch1.append(audit(path, one, url, targets)[0] if one_by_one else float("nan"))
    return {**extra, "cold_filling": cold, "compiles": filled["compiles"], "warm_local": warm_local,
            "new_machine_warm_store": statistics.median(runs), "one_object_per_request": batch1[0],
            "remote_bytes": got["remote_bytes"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", action="store_true", help="also oneMKL RNG on the 19 default targets (long)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed-from", type=Path, default=None, metavar="DIR",
                    help="with --library: fill the store from this local cache (a cold audit's) instead of a cold audit")
    ap.add_argument("--no-one-by-one", action="store_true", help="skip the one-object-per-request run")
    ap.add_argument("--library-targets", default="default",
                    help="the library's targets (default: the 19 default ones; a local cache of a cold audit on "
                         "these, --seed-from, saves the cold fill)")
    args = ap.parse_args()
    server, port = start_server()
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="zeinspect-shared-bench-") as tmp:
            work = Path(tmp)
            env = dict(os.environ, **CREDENTIALS, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
            client(port).create_bucket(Bucket="zeinspect-bench")
            small = work / "small.cl"
            small.write_text("__kernel void scale(__global float* x, float a) { x[get_global_id(0)] *= a; }\n")
            results["small, S3"] = measure("small-s3", small, work, env, "s3://zeinspect-bench/small", args.repeat)
            results["small, folder"] = measure("small-dir", small, work, env, str(work / "store"), args.repeat)
            if args.library:
                lib = wheels.library("onemkl-sycl-rng", "2026.2.0", "libmkl_sycl_rng.so")
                results["oneMKL RNG, S3"] = measure("rng-s3", lib, work, env, "s3://zeinspect-bench/rng", args.repeat,
                                                    args.seed_from, port, not args.no_one_by_one, args.library_targets)
    finally:
        server.terminate()
    for name, r in results.items():
        if "seeded_entries" in r:
            print(f"{name}: store seeded with {r['seeded_entries']} entries in {r['seeding_seconds']:.0f} s; "
                  f"first new machine (entries only, writes the bundles) {r['first_new_machine_entries_only']:.1f} s")
        print(f"{name}: filling (cold, {r['compiles']} compiles) {r['cold_filling']:.1f} s; warm, local only "
              f"{r['warm_local']:.2f} s; new machine, warm store {r['new_machine_warm_store']:.2f} s "
              f"({r['remote_bytes'] / 2**20:.1f} MiB); one object per request {r['one_object_per_request']:.2f} s")
    def seconds(value: float, digits: int = 2) -> float | str:
        return "-" if value != value else round(value, digits)  # NaN: not measured in this mode

    rows = [{"input, store": name, "compiles": r["compiles"] or "-", "filling, cold (s)": seconds(r["cold_filling"], 1),
             "store seeded with entries only; first new machine (s)":
                 seconds(r.get("first_new_machine_entries_only", float("nan")), 1),
             "warm, local cache only (s)": seconds(r["warm_local"]),
             "new machine, warm store (s)": seconds(r["new_machine_warm_store"]),
             "fetched (MiB)": round(r["remote_bytes"] / 2**20, 1),
             "one object per request (s)": seconds(r["one_object_per_request"])} for name, r in results.items()]
    record.write("shared_cache", "A build cache shared through a store (--cache-url)", rows,
                 note=f"Medians of {args.repeat}. The small module on 19 targets (goal: a new machine with a warm "
                      "store within 0.5 s)" + (f"; oneMKL RNG 2026.2.0 on {args.library_targets}, its store seeded from "
                                               "a local cache of a cold audit" if args.library else "") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
