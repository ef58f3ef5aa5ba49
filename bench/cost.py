#!/usr/bin/env python3
"""What `--cost` adds to an audit of a real library: oneMKL RNG 2026.2.0 on one target.

`--cost` makes a dumping compile (IGC's ISA) of each module that holds a scratch user, for
the targets where it uses scratch, and reads the dump (app.inspect.attach_costs); the dumps
are cached like any compile.  This bench inspects the library (downloaded with pip,
bench/wheels.py) as `zeinspect inspect --json` does:
  - without `--cost`, warm (the build cache filled by a first run);
  - with `--cost`, the first time (the dumping compiles cold, the plain ones warm);
  - with `--cost` again, warm;
each in a process of its own, and prints the times and the ratios to the plain audit, with the
number of scratch users and of those whose traffic sits in loops.  The issue's goal: at most
1.3x the audit without it.

Usage: .venv/bin/python bench/cost.py [-t bmg-g21] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402


def timed(argv: list[str], env: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "zeinspect", *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"zeinspect {' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return seconds, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--target", default="bmg-g21")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lib = wheels.library("onemkl-sycl-rng", "2026.2.0", "libmkl_sycl_rng.so")
    # The user's build cache: warm for the plain compiles after a first run; the first --cost
    # run is cold for its dumps only if no earlier run made them (the row says "the first run").
    env = dict(os.environ)
    base = ["inspect", str(lib), "-t", args.target, "-q", "--json"]
    timed(base, env)  # fills the build cache if it is cold
    plain = [timed(base, env)[0] for _ in range(args.repeat)]
    first, doc = timed([*base, "--cost"], env)
    warm = [timed([*base, "--cost"], env)[0] for _ in range(args.repeat)]
    users = [r for r in doc["reports"] if r.get("cost") is not None]
    in_loops = [r for r in users if r["cost"]["in_loops"]]
    # Families (the kernel's name without its template arguments, zeinspect.names.family) ranked
    # by the most scratch a member moves per loop iteration; then the ten costliest kernels, by
    # the names zeinspect shows (names.labels: what tells a family's members apart).
    sys.path.insert(0, str(ROOT))
    from zeinspect import names

    def per_iteration(r: dict) -> int:
        return r["cost"]["per_iteration_bytes"]

    families: dict[str, list[dict]] = {}
    for r in users:
        families.setdefault(names.family(r["kernel"]), []).append(r)
    ranked = sorted(families.items(), key=lambda kv: -max(map(per_iteration, kv[1])))
    labels = names.labels([r["kernel"] for r in users])
    costliest = sorted(users, key=per_iteration, reverse=True)[:10]
    rows = [{"family": family, "scratch users": len(members),
             "with traffic in loops": sum(1 for r in members if r["cost"]["in_loops"]),
             "most bytes per loop iteration": max(map(per_iteration, members))} for family, members in ranked]
    rows += [{"kernel": labels[r["kernel"]], "family": names.family(r["kernel"]),
              "bytes per loop iteration": per_iteration(r), "loop depth": r["cost"]["loop_depth"],
              "scratch bytes": (r["spill_bytes"] or 0) + (r["private_bytes"] or 0)} for r in costliest]
    record.write("cost_families", f"Which spills of oneMKL RNG 2026.2.0 matter on {args.target} (--cost)", rows,
                 note=f"{len(users)} scratch users in {len(families)} families, {len(in_loops)} of them moving scratch "
                      "inside loops: the families ranked by the most a member moves per loop iteration, then the ten "
                      "costliest kernels.")
    p = statistics.median(plain)
    rows = [{"run": f"inspect --json, warm (median of {args.repeat})", "s": round(p, 2)},
            {"run": "with --cost, the bench's first run (cold only where no earlier run cached its dumps and costs)",
             "s": round(first, 1), "x the audit": round(first / p, 2)},
            {"run": f"with --cost, warm (median of {args.repeat})", "s": round(statistics.median(warm), 2),
             "x the audit": round(statistics.median(warm) / p, 2), "goal": "at most 1.3 x"}]
    for row in rows:
        print(row)
    print(f"{len(users)} scratch users measured, {len(in_loops)} with traffic in loops")
    record.write("cost", f"What --cost adds to an audit: oneMKL RNG 2026.2.0 on {args.target}", rows,
                 note=f"{len(doc['reports'])} reports; {len(users)} scratch users measured, {len(in_loops)} of them "
                      "with scratch traffic inside loops. The plain compiles were cached before the first run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
