#!/usr/bin/env python3
"""`zeinspect diff` on two real releases: oneMKL RNG 2026.1.0 against 2026.2.0.

Downloads both with pip (bench/wheels.py; nothing vendored) and measures, on dg2-g10 and
bmg-g21 (`-t`):
  - the two audits alone (`zeinspect inspect LIB --json`, saved: what CI keeps as artifacts);
  - `zeinspect diff OLD.so NEW.so` building both (goal: at most 1.05x the two audits; warm at
    most 15 s);
  - `zeinspect diff OLD.json NEW.json` from the saved documents (no compile);
  - a 100,000-report document against itself (the RNG library's reports on the 19 default
    targets, or its dg2-g10/bmg-g21 reports repeated to that size under new names), goal at
    most 5 s;
and prints the diff's summary and its top regressions.  Pass --cold for an empty build cache
(the audits and the diff then each build from nothing).

Usage: .venv/bin/python bench/diff.py [-t dg2-g10,bmg-g21] [--cold]
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
OLD, NEW = "2026.1.0", "2026.2.0"


def timed(args: list[str], env: dict, out: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(ZEINSPECT + args, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if out is not None:
        out.write_text(proc.stdout)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"zeinspect {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return seconds, proc


def big_document(doc: dict, size: int) -> dict:
    """`doc`'s reports repeated under new kernel names until there are `size`."""
    reports = []
    n = 0
    while len(reports) < size:
        reports += [dict(r, kernel=f"{r['kernel']}#{n}") for r in doc["reports"]]
        n += 1
    return dict(doc, reports=reports[:size])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--targets", default="dg2-g10,bmg-g21")
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    old = wheels.library("onemkl-sycl-rng", OLD, "libmkl_sycl_rng.so")
    new = wheels.library("onemkl-sycl-rng", NEW, "libmkl_sycl_rng.so")
    with tempfile.TemporaryDirectory(prefix="zeinspect-diff-bench-") as tmp:
        work = Path(tmp)
        env = dict(os.environ)
        if args.cold:
            env["ZEINSPECT_CACHE_DIR"] = str(work / "cache-audits")
        t_old, _ = timed(["inspect", str(old), "-t", args.targets, "-q", "--json"], env, work / "old.json")
        t_new, _ = timed(["inspect", str(new), "-t", args.targets, "-q", "--json"], env, work / "new.json")
        if args.cold:
            env["ZEINSPECT_CACHE_DIR"] = str(work / "cache-diff")
        t_diff, proc = timed(["diff", str(old), str(new), "-t", args.targets, "-q", "--json"], env)
        t_warm, _ = timed(["diff", str(old), str(new), "-t", args.targets, "-q", "--json"], env)
        t_docs, _ = timed(["diff", str(work / "old.json"), str(work / "new.json"), "--json"], env)
        t_text, text = timed(["diff", str(work / "old.json"), str(work / "new.json")], env)
        doc = json.loads((work / "new.json").read_text())
        big = big_document(doc, 100_000)
        (work / "big.json").write_text(json.dumps(big))
        t_big, _ = timed(["diff", str(work / "big.json"), str(work / "big.json"), "--json"], env)
        got = json.loads(proc.stdout)
    print(f"oneMKL RNG {OLD} -> {NEW} on {args.targets} ({'cold' if args.cold else 'warm'} cache)")
    print(f"  inspect {OLD}: {t_old:.1f} s; inspect {NEW}: {t_new:.1f} s; both: {t_old + t_new:.1f} s")
    print(f"  diff building both: {t_diff:.1f} s ({t_diff / (t_old + t_new):.2f}x the two audits; goal 1.05x)")
    print(f"  diff again, warm: {t_warm:.1f} s (goal 15 s)")
    print(f"  diff of the two saved documents: {t_docs:.1f} s")
    print(f"  diff of a {len(big['reports'])}-report document against itself: {t_big:.1f} s (goal 5 s)")
    print(f"  counts: {got['counts']}")
    print()
    print(text.stdout)
    cache = "cold" if args.cold else "warm"
    both = t_old + t_new
    record.write(f"diff_{cache}", f"`zeinspect diff` on oneMKL RNG {OLD} against {NEW}, {cache} cache, on {args.targets}", [
        {"figure": f"the two audits, {cache} (`inspect --json`, saved)", "s": round(both, 1)},
        {"figure": f"`diff OLD.so NEW.so`, building both, {cache}", "s": round(t_diff, 1),
         "x the two audits": round(t_diff / both, 2), "goal": "at most 1.05 x"},
        {"figure": "the same again (warm)", "s": round(t_warm, 1), "goal": "at most 15 s"},
        {"figure": f"`diff OLD.json NEW.json` ({sum(got['counts'].values())} pairs)", "s": round(t_docs, 1)},
        {"figure": f"a {len(big['reports']):,}-report document against itself, `--json`", "s": round(t_big, 1),
         "goal": "at most 5 s"}],
        note=("Cold: empty build caches, each audit and the diff build from nothing. " if args.cold else
              "Warm: both releases already in the build cache. ") + "The diff's counts: "
             + ", ".join(f"{n} {k}" for k, n in got["counts"].items()) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
