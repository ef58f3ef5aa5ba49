#!/usr/bin/env python3
"""The fix loop on a product, timed: the shape search of a library's SPIR-V image for one
target, cold, against the image's plain audit in the same run times the shapes tried; warm;
and a whole library searched image by image.

(a) `zeinspect inspect LIB[.tgtimg[N]] -t T`, cold (an empty build cache);
(b) `zeinspect fix LIB[.tgtimg[N]] -t T`, cold (another empty cache): its module builds;
(c) the same, warm;
(d) `zeinspect shapes LIB[.tgtimg[N]] -t T`, cold (a third empty cache): the same search, and
    each scratch user's loop traffic where no shape cleans it, from one dumping compile per
    module shape (issue 62).
Goals (issue 46): (b) <= 1.2 x (a) x the shapes compiled; (c) under 10 s; (issue 62) (d) the
same bound as (b).

Usage: .venv/bin/python bench/library_fix.py [--image '.tgtimg[1]'] [-t lnl-m]
Writes bench/results/library_fix.json.
"""

from __future__ import annotations

import argparse
import json
import os
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


def timed(argv: list[str], cache: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run(ZEINSPECT + argv + ["-q", "--json"], capture_output=True, text=True,
                          env=dict(os.environ, ZEINSPECT_CACHE_DIR=str(cache)))
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-400:]}")
    return seconds, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--image", default=".tgtimg[1]")
    ap.add_argument("-t", "--target", default="lnl-m")
    args = ap.parse_args()
    library = wheels.library("open3d-xpu", "0.20.0", "libOpen3D.so")
    image = f"{library}[{args.image}]"
    rows = []
    with tempfile.TemporaryDirectory(prefix="zeinspect-libfix-") as tmp:
        plain, doc = timed(["inspect", image, "-t", args.target], Path(tmp) / "a")
        kernels = len({r["kernel"] for r in doc["reports"]})
        cold, fixed = timed(["fix", image, "-t", args.target], Path(tmp) / "b")
        warm, _ = timed(["fix", image, "-t", args.target], Path(tmp) / "b")
        searched, table = timed(["shapes", image, "-t", args.target], Path(tmp) / "d")
        measured = sum(1 for s in table["searches"] for r in s["rows"] if r.get("costs"))
        shapes = fixed["compiles"]
        users = sum(f["kernels"] for f in fixed["families"])
        rows.append({"input": f"Open3D 0.20.0 libOpen3D.so[{args.image}] ({kernels} kernels, {users} scratch users)",
                     "target": args.target, "(a) plain audit, cold s": round(plain, 1), "module builds": shapes,
                     "(b) fix, cold s": round(cold, 1), "ratio (b) / ((a) x builds)": round(cold / (plain * shapes), 2),
                     "goal": 1.2, "(c) fix, warm s": round(warm, 1), "warm goal s": 10,
                     "(d) shapes, cold s": round(searched, 1), "rows with loop traffic": measured,
                     "ratio (d) / ((a) x builds)": round(searched / (plain * shapes), 2)})
        for row in rows:
            print(row)
    record.write("library_fix", "The fix loop on a library's SPIR-V image: one compile per shape", rows,
                 note="The shape search compiles the whole image once per shape tried (a sub-group size the target "
                      "lacks, or one no scratch user could take, is not tried), reading every scratch user from it.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
