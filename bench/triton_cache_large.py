#!/usr/bin/env python3
"""Screening a large Triton cache: the screening process's peak memory on 500 and more entries
of a real cache, measured (bench/triton_cache.py extrapolates it from the 67 entries of the
realworld GPT-2 step).

The cache is one that real torch.compile runs write here: transformers' GPT-2 (random weights,
eager attention) at several widths, forward and backward, compiled for xpu under zeinspect's
capture (triton.capture.inductor; each width is a command of its own, whose kernels have sizes of their
own), and the capture's Triton cache kept: every autotune config of every
kernel Inductor generated is an entry (its TTIR and metadata, as Triton writes them).  That
cache is then screened cold by `zeinspect triton --from-cache` on two targets.
Goal (issue 47): the screening process's own peak RSS (VmHWM) at most 250 MB for 500 entries.

Usage: .venv/bin/python bench/triton_cache_large.py [--targets bmg-g21,arl-s] [--entries 500]
transformers 5.25.0 from the package index (pip, bench/wheels.py).  Writes
bench/results/triton_cache_large.json.
"""

from __future__ import annotations

import argparse
import os
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
from triton_cache import PEAK, PYTHON, peak_mb, timed  # noqa: E402

MODEL = '''
import sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_embd=int(sys.argv[1]), n_head=4, n_positions=256, vocab_size=4096,
                    attn_implementation="eager")
model = GPT2LMHeadModel(config).to("xpu")
ids = torch.randint(0, config.vocab_size, (2, 128), device="xpu")
torch.compile(model)(input_ids=ids, labels=ids).loss.backward()
'''
WIDTHS = (128, 192, 256, 320, 384, 448, 512, 576, 640, 704)


def entries(cache: Path) -> int:
    return sum(1 for _ in cache.rglob("*.ttir"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", default="bmg-g21,arl-s")
    parser.add_argument("--entries", type=int, default=500)
    args = parser.parse_args()
    from zeinspect.app.gate import settings
    from zeinspect.triton.app.library import capture, capture_target

    library = wheels.installed("transformers", "5.25.0")
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-large-cache-") as name:
        tmp = Path(name)
        script, kept = tmp / "model.py", tmp / "capture"
        script.write_text(MODEL)
        kept.mkdir()
        os.environ.update(PYTHONPATH=os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library))),
                          ZEINSPECT_CACHE_DIR=str(tmp / "capture-cache"))
        from zeinspect.app.session import open_session

        config = settings({"targets": tuple(args.targets.split(","))})
        target = capture_target(config, open_session(config))
        cache, widths, count, started = kept / "triton-cache", [], 0, time.monotonic()
        for width in WIDTHS:  # one width per command, until the cache holds enough entries
            got = capture([sys.executable, str(script), str(width)], target=target, folder=kept)
            if got.exit_code:
                raise SystemExit(f"the torch.compile run at width {width} ended with {got.exit_code}: {got.notes}")
            widths.append(width)
            count = entries(cache)
            print(f"width {width}: {count} entries", file=sys.stderr)
            if count >= args.entries:
                break
        made = time.monotonic() - started
        command = [PYTHON, "-c", PEAK, "triton", "--from-cache", str(cache), "-t", args.targets, "-q", "--json"]
        cold, said, workers = timed(command, tmp / "screen-cache")
    rows = [
        {"measure": f"entries of the cache (GPT-2 at widths {','.join(map(str, widths))}, torch.compile for xpu "
                    "under the capture)", "value": count, "seconds to make": round(made, 1)},
        {"measure": "zeinspect triton --from-cache, cold", "seconds": round(cold, 1)},
        {"measure": f"peak RSS of the screening process on {count} entries (MB, the process's own)",
         "value": peak_mb(said), "goal": "250 MB at 500 entries", "met": count >= 500 and peak_mb(said) <= 250},
        {"measure": "peak RSS of its largest Triton front-end worker (MB, sampled)", "value": workers},
    ]
    for row in rows:
        print(row)
    record.write("triton_cache_large", f"Screening a large Triton cache: {count} entries of torch.compile runs",
                 rows, note=f"targets {args.targets}; the cache written here by real torch.compile runs for xpu.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
