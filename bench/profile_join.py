#!/usr/bin/env python3
"""Joining a large profile: a 100 MB PyTorch trace read and joined with a run's reports, against
reading the same file with Python's own JSON reader.

The trace is the real GPT-2 training step's (realworld inductor-gpt2: 1,280 kernel events
among its CPU and runtime events), its events repeated, each repeat shifted in time, until the
file is 100 MB: the shape of a longer run's trace.  The reports are one per kernel of the
trace and target, as a `triton --from-cache` run gives (the join reads only their names and
figures).  Each measure runs in a fresh process: its wall time and its peak resident memory.
Reading the file is timed two ways, Python's json and msgspec's untyped decode (the fastest
JSON reader at hand); the ratio is to the faster.  Goals (issue 48): the join at most 2x the
time of reading the file, in under 250 MB.

Usage: .venv/bin/python bench/profile_join.py [--megabytes 100]
Writes bench/results/profile_join.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")

READ = """
import json, resource, sys, time
start = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    doc = json.load(f)
kernels = sum(1 for e in doc["traceEvents"] if e.get("cat") == "kernel")
print(json.dumps({"seconds": time.perf_counter() - start, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "kernel_events": kernels}))
"""

FAST_READ = """
import json, resource, sys, time
import msgspec
start = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    doc = msgspec.json.decode(f.read())
kernels = sum(1 for e in doc["traceEvents"] if e.get("cat") == "kernel")
print(json.dumps({"seconds": time.perf_counter() - start, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "kernel_events": kernels}))
"""

JOIN = """
import json, resource, sys, time
from zeinspect.inputs.profile import read_profile
from zeinspect.judge.profile import join
reports = json.load(open(sys.argv[2]))
start = time.perf_counter()
joined = join(read_profile(sys.argv[1]), reports)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "launches": sum(k.launches for k in joined.kernels), "matched": len(joined.matched)}))
"""

BASE = """
import json, resource, sys
from zeinspect.inputs.profile import read_profile
from zeinspect.judge.profile import join
reports = json.load(open(sys.argv[2]))
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def realworld() -> Path:
    for candidate in (os.environ.get("ZEINSPECT_REALWORLD"), ROOT.parent / "shared" / "realworld",
                      "/work/shared/realworld"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("no realworld folder (set $ZEINSPECT_REALWORLD)")


def grown_trace(tmp: Path, megabytes: int) -> tuple[Path, list[dict]]:
    with tarfile.open(realworld() / "inductor-gpt2" / "gpt2-step.tar.xz") as tar:
        member = tar.extractfile("trace_gpt2.json")
        assert member is not None
        trace = json.load(member)
    events = trace["traceEvents"]
    span = max(e.get("ts", 0) + e.get("dur", 0) for e in events) - min(e.get("ts", 0) for e in events)
    one = len(json.dumps(events))
    repeats = max(1, megabytes * 1024 * 1024 // one)
    path = tmp / "trace.json"
    with path.open("w") as out:
        out.write('{"deviceProperties": ' + json.dumps(trace["deviceProperties"]) + ', "traceEvents": [')
        for n in range(repeats):
            shifted = [dict(e, ts=e["ts"] + n * span) if "ts" in e else e for e in events]
            out.write((", " if n else "") + json.dumps(shifted)[1:-1])
        out.write("]}")
    names = {e["name"] for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"}
    reports = [{"kernel": f"{n}[1024]", "target": t, "status": "ok", "scratch_bytes": 64 * (i % 3), "cost": None,
                "cause": "spill" if i % 3 else None}
               for i, n in enumerate(sorted(names)) for t in ("bmg-g21", "arl-s")]
    return path, reports


def run(script: str, *args: Path) -> dict:
    proc = subprocess.run([PYTHON, "-c", script, *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--megabytes", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="zeinspect-profile-") as tmp:
        trace, reports = grown_trace(Path(tmp), args.megabytes)
        (Path(tmp) / "reports.json").write_text(json.dumps(reports))
        size = trace.stat().st_size / 1024 / 1024
        reads = [run(READ, trace) for _ in range(args.repeats)]
        fast = [run(FAST_READ, trace) for _ in range(args.repeats)]
        joins = [run(JOIN, trace, Path(tmp) / "reports.json") for _ in range(args.repeats)]
        base = run(BASE, trace, Path(tmp) / "reports.json")
    read_s = min(sorted(r["seconds"] for r in reads)[len(reads) // 2],
                 sorted(r["seconds"] for r in fast)[len(fast) // 2])
    join_s = sorted(j["seconds"] for j in joins)[len(joins) // 2]
    rss = max(j["rss_mb"] for j in joins)
    rows = [
        {"measure": f"read: json.load of the {size:.0f} MB trace", "median s": round(read_s, 2),
         "peak MB": round(max(r["rss_mb"] for r in reads)), "kernel events": reads[0]["kernel_events"]},
        {"measure": "read: msgspec's untyped decode of the same file",
         "median s": round(sorted(r["seconds"] for r in fast)[len(fast) // 2], 2),
         "peak MB": round(max(r["rss_mb"] for r in fast))},
        {"measure": "join: read_profile + join with the reports", "median s": round(join_s, 2),
         "ratio to the faster read": round(join_s / read_s, 2), "goal": "2 x read", "met": join_s <= 2 * read_s,
         "peak MB": round(rss), "memory goal": "250 MB", "memory met": rss < 250,
         "launches": joins[0]["launches"], "kernels with reports": joins[0]["matched"]},
        {"measure": "the process before the join (Python, zeinspect, the reports)", "peak MB": round(base["rss_mb"])},
    ]
    for row in rows:
        print(row)
    record.write("profile_join", "Joining a 100 MB profile: its read and join against Python's own JSON read",
                 rows, note=f"{args.repeats} runs each, each in a fresh process; the real GPT-2 step's trace grown "
                            f"to {size:.0f} MB by repeating its events.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
