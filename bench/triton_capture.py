"""The cost of screening a Triton library as it runs (issue 38's speed goals), on this machine:

1. What `zeinspect triton --run -- CMD` adds to the command's own time when every kernel is
   warm in zeinspect's cache.  The command is xpu-kernels 0.3.0's four ops called ROUNDS times
   on CPU tensors (bench/scripts/xpu_kernels_loop.py).  Without a GPU the command cannot run
   without the capture (its launches need a driver), so "the command's own time" is the
   command run with the capture installed, timed from outside the process (the same process
   `--run` starts: triton.app.library.capture).  What zeinspect adds on top is its start-up,
   reading the launches, the warm screen and the report: the `--run` wall time minus that.
   The capture's own share inside the command is the per-launch time of the hook, measured in
   the command (the script times its launches after the first of each specialization).
2. A warm re-screen of 100 captured specializations on 4 targets: a small kernel launched at
   100 constexpr values (bench/scripts/hundred_specializations.py), captured once, screened
   cold (an empty build cache), then again warm (triton.app.library.screen_captured, the screen
   `--run` does).

    .venv/bin/python bench/triton_capture.py

Needs the CPU build of torch in build/torch-cpu (scripts/setup.sh).  Writes
bench/results/triton_capture.json (the docs' benchmarks page shows it).
"""

from __future__ import annotations

import json
import os
import statistics
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

TARGETS = ("arl-s", "dg2-g10", "lnl-m", "bmg-g21")
REPEATS = 5


def _median(samples: list[float]) -> float:
    return round(statistics.median(samples), 2)


def main() -> None:
    from zeinspect.settings import resolve
    from zeinspect.triton.app.library import capture, capture_target, screen_captured

    config = resolve({"targets": TARGETS})
    from zeinspect.app.session import open_session

    session = open_session(config)
    target = capture_target(config, session)
    rows = []
    library = wheels.unpacked("xpu-kernels", "0.3.0", "xpu_kernels").parent
    os.environ["PYTHONPATH"] = os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library), str(ROOT)))
    loop = [sys.executable, str(HERE / "scripts" / "xpu_kernels_loop.py")]
    run = [sys.executable, "-m", "zeinspect", "triton", "--run", "-t", ",".join(TARGETS), "--json", "-q",
           "--", *loop]
    # zeinspect's bytecode compiled once, as pip does at install (this machine sets
    # PYTHONDONTWRITEBYTECODE, so an edited module would be compiled again at every start).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "zeinspect")], check=True)
    subprocess.run(run, capture_output=True, check=False, cwd=ROOT)  # fills the cache: the rest is warm
    own, whole, hook = [], [], []
    for _ in range(REPEATS):
        started = time.monotonic()
        got = capture(loop, target=target)
        own.append(time.monotonic() - started)
        started = time.monotonic()
        res = subprocess.run(run, capture_output=True, text=True, check=False, cwd=ROOT)
        whole.append(time.monotonic() - started)
        assert json.loads(res.stdout)["reports"], res.stderr[-2000:]
        line = next(x for x in res.stderr.splitlines() if x.startswith("per launch"))
        hook.append(float(line.split()[2]))
    rows.append({"figure": "the command under the capture (its own time)", "median s": _median(own),
                 "samples": [round(s, 2) for s in own], "launches": got.launches,
                 "specializations": len(got.specializations)})
    rows.append({"figure": "zeinspect triton --run -- the command, warm", "median s": _median(whole),
                 "samples": [round(s, 2) for s in whole],
                 "added s": round(statistics.median(whole) - statistics.median(own), 2),
                 "added": f"{100 * (statistics.median(whole) / statistics.median(own) - 1):.1f} %",
                 "goal": "at most 5 % over the command's own time"})
    rows.append({"figure": "an op call under the capture, after the first (the wrapper and the hook)",
                 "median ms": round(statistics.median(hook), 3)})
    print(*rows, sep="\n", flush=True)

    hundred = [sys.executable, str(HERE / "scripts" / "hundred_specializations.py")]
    got = capture(hundred, target=target)
    assert len(got.specializations) == 100, got.summary()
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-") as empty:
        # Cold is an empty build cache: every Triton front end and every ocloc build done anew.
        kept = os.environ.get("ZEINSPECT_CACHE_DIR")
        os.environ["ZEINSPECT_CACHE_DIR"] = empty
        started = time.monotonic()
        first = screen_captured(got, config, session)
        cold = time.monotonic() - started
        warm = []
        for _ in range(REPEATS):
            started = time.monotonic()
            again = screen_captured(got, config, session)
            warm.append(time.monotonic() - started)
        if kept is None:
            del os.environ["ZEINSPECT_CACHE_DIR"]
        else:
            os.environ["ZEINSPECT_CACHE_DIR"] = kept
    reports = len(again.collection.reports)
    assert reports == len(first.collection.reports) == 100 * len(TARGETS), reports
    rows.append({"figure": "100 captured specializations on 4 targets, cold", "s": round(cold, 1),
                 "reports": reports})
    rows.append({"figure": "the same, warm re-screen", "median s": _median(warm),
                 "samples": [round(s, 2) for s in warm], "goal": "at most 5 s"})
    print(*rows[-2:], sep="\n", flush=True)
    record.write("triton_capture", "The cost of capturing and screening a Triton library as it runs, on "
                 + ",".join(TARGETS), rows,
                 note=f"Medians of {REPEATS}; the script's docstring says what each figure measures.")


if __name__ == "__main__":
    main()
