#!/usr/bin/env python3
"""Screening a large Triton cache: the screening process's peak memory on 500 and more entries
of a real cache, measured (bench/triton_cache.py extrapolates it from the 67 entries of the
realworld GPT-2 step), and a thousand specializations of max-autotune (issue 62).

Each cache is one that real torch.compile runs write here for xpu under zeinspect's capture
(triton.capture.inductor), one command per model width (each width's kernels have sizes of their
own), with the capture's Triton cache kept: every kernel Inductor generated is an entry (its TTIR
and metadata, as Triton writes them).  That cache is then screened by `zeinspect triton
--from-cache` on two targets.  Subjects:

- gpt2: transformers' GPT-2 (random weights, eager attention), forward and backward, plain
  torch.compile, until 500 entries.  Goal (issue 47): the screening process's own peak RSS
  (VmHWM) at most 250 MB for 500 entries.
- llama-autotune: a Llama-style model (transformers' Llama: RMSNorm, rotary, SwiGLU, grouped
  KV heads; random weights, bf16), one training step under torch.compile(mode="max-autotune"):
  Inductor's Triton GEMM templates for xpu, every config it offers for every matmul of the
  forward and the backward, until 1,000 entries.  The capture answers as bmg-g21 (Inductor uses
  its templates only on a GPU with 16 Xe cores or more, utils.is_big_gpu).  Goals (issue 62):
  cold at most 0.5x triton-xpu compiling the same specializations one by one; zeinspect's own
  process at most 250 MB and every process of the run (front-end workers, ocloc) at most 500 MB;
  warm under 10 s; zeinspect's build cache on disk no larger than the input cache.  One by one
  is measured on an even sample of the entries (every n-th, `--sample`) in the same run and
  scaled to all of them: each sampled entry built as bench/triton_cache.py builds every one.
  That row is written as soon as it is measured (the cold screen takes about two hours here and
  may not see its end in a session); the whole run's rows replace it.
- llama-autotune-memory (`--memory`): every process's peak on a few of the heaviest entries of
  the same capture (ranked by their dot's work per warp, `heaviest`), for zeinspect's cold screen
  and for one by one on the same entries.  They run the same compiles, so one by one's ocloc peak
  is what IGC needs for those kernels, whoever runs it: the floor beside the 500 MB goal, on
  those entries (the whole cache's cold run may meet heavier ones).

Usage: .venv/bin/python bench/triton_cache_large.py [--only gpt2|llama-autotune]
       [--targets bmg-g21,arl-s] [--entries N] [--sample 60] [--keep-capture DIR] [--anchor-only CACHE]
       [--memory [CACHE] [--heaviest 6]]
transformers 5.25.0 from the package index (pip, bench/wheels.py).  Writes
bench/results/triton_cache_large.json (a subject's rows replace its last ones).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
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
from triton_cache import AT_EXIT_PEAK, ONE_BY_ONE, PEAK, PYTHON, peak_mb, size_mb, timed, watched  # noqa: E402

GPT2 = '''
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
LLAMA = '''
import sys
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
width = int(sys.argv[1])
config = LlamaConfig(hidden_size=width, intermediate_size=width * 8 // 3 // 64 * 64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, vocab_size=4096, max_position_embeddings=256,
                     attn_implementation="eager")
model = LlamaForCausalLM(config).to("xpu", torch.bfloat16)
ids = torch.randint(0, config.vocab_size, (2, 128), device="xpu")
torch.compile(model, mode="max-autotune")(input_ids=ids, labels=ids).loss.backward()
'''
SUBJECTS = {  # name -> (script, widths, entries wanted, how it is described)
    "gpt2": (GPT2, (128, 192, 256, 320, 384, 448, 512, 576, 640, 704), 500,
             "GPT-2, torch.compile, forward and backward"),
    "llama-autotune": (LLAMA, (256, 384, 512, 640, 768, 896, 1024), 1000,
                       "a Llama-style step, torch.compile(mode='max-autotune'), forward and backward"),
}


def entries(cache: Path) -> list[Path]:
    """The cache's entries: each folder that holds a TTIR."""
    return sorted({p.parent for p in cache.rglob("*.ttir")})


def make_cache(script_text: str, widths: tuple[int, ...], wanted: int, targets: str, tmp: Path) -> tuple[Path, list[int], float]:
    """The Triton cache of one torch.compile command per width, until it holds `wanted` entries."""
    from zeinspect.app.gate import settings
    from zeinspect.app.session import open_session
    from zeinspect.triton.app.library import capture_target
    from zeinspect.triton.sources.run import capture

    script, kept = tmp / "model.py", tmp / "capture"
    script.write_text(script_text)
    kept.mkdir()
    config = settings({"targets": tuple(targets.split(","))})
    target = capture_target(config, open_session(config))
    cache, done, started = kept / "triton-cache", [], time.monotonic()
    for width in widths:
        got = capture([sys.executable, str(script), str(width)], target=target, folder=kept)
        if got.exit_code:
            raise SystemExit(f"the torch.compile run at width {width} ended with {got.exit_code}: {got.notes}")
        done.append(width)
        count = len(entries(cache))
        print(f"width {width}: {count} entries ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        if count >= wanted:
            break
    return cache, done, time.monotonic() - started


def run_gpt2(args: argparse.Namespace, tmp: Path) -> list[dict]:
    script, widths, wanted, what = SUBJECTS["gpt2"]
    cache, done, made = make_cache(script, widths, args.entries or wanted, args.targets, tmp)
    count = len(entries(cache))
    command = [PYTHON, "-c", PEAK, "triton", "--from-cache", str(cache), "-t", args.targets, "-q", "--json"]
    cold, said, workers, _ = timed(command, tmp / "screen-cache")
    return [
        {"subject": "gpt2", "measure": f"entries of the cache ({what}, widths {','.join(map(str, done))}, "
                                       "for xpu under the capture)", "value": count, "seconds to make": round(made, 1)},
        {"subject": "gpt2", "measure": "zeinspect triton --from-cache, cold", "seconds": round(cold, 1)},
        {"subject": "gpt2", "measure": f"peak RSS of the screening process on {count} entries (MB, the process's own)",
         "value": peak_mb(said), "goal": "250 MB at 500 entries", "met": count >= 500 and peak_mb(said) <= 250},
        {"subject": "gpt2", "measure": "peak RSS of its largest Triton front-end worker (MB, sampled)", "value": workers},
    ]


def one_by_one(held: list[Path], args: argparse.Namespace, tmp: Path) -> tuple[float, float, int, float]:
    """triton-xpu's compile and one ocloc per target, each specialization alone, on every n-th
    entry (sorted by Triton's hash: no order of kernel kinds): (seconds scaled to all, the
    sample's seconds, the entries sampled, the sample's CPU seconds)."""
    step = max(1, len(held) // args.sample)
    sample = tmp / "sample"
    for entry in held[::step]:
        shutil.copytree(entry, sample / entry.name)
    sampled = len(held[::step])
    one, _, _, cpu = timed([PYTHON, "-c", ONE_BY_ONE, str(sample), args.targets], tmp / "one-by-one-cache")
    return one * len(held) / sampled, one, sampled, cpu


DOT = re.compile(r"tt\.dot %\w+, %\w+, %\w+.*?: tensor<(\d+)x(\d+)x[a-z]\w*> \* tensor<\d+x(\d+)x[a-z]\w*>")
"""A 2-D `tt.dot` as Triton prints it (`: tensor<MxKxT> * tensor<KxNxT> -> ...`): (M, K, N); a batched
(3-D) one does not match."""


def heaviest(held: list[Path], count: int) -> list[Path]:
    """The first `count` entries by the work per warp of their largest `tt.dot` (M x N x K over the
    entry's num_warps, from Triton's NAME.json beside the TTIR; an entry without it is not ranked):
    on arl-s's FMA path each thread unrolls that much, which makes a GEMM template cache's large
    compiles.  A ranking, not the peaks themselves: in the max-autotune capture 133 entries tie at
    the top (taken in the order of their names), and which of them needs the most memory is known
    only by compiling them."""
    import json

    def work(entry: Path) -> int:
        most = 0
        for ttir in entry.glob("*.ttir"):
            try:
                warps = int(json.loads(ttir.with_suffix(".json").read_text())["num_warps"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            for m, k, n in DOT.findall(ttir.read_text(errors="replace")):
                most = max(most, int(m) * int(n) * int(k) // max(1, warps))
        return most

    return sorted(held, key=lambda e: (-work(e), e.name))[:count]


def run_memory(args: argparse.Namespace, tmp: Path) -> list[dict]:
    """Every process's peak on a few of the heaviest entries of a max-autotune cache, for zeinspect's cold
    screen (front-end workers on, as on the whole cache) and for one by one (triton-xpu's compile in
    its own process, one ocloc per target): the same compiles, so what one by one's ocloc needs is
    IGC's own for those kernels, whoever runs it."""
    if args.memory:
        cache = Path(args.memory)
    else:
        script, widths, wanted, _ = SUBJECTS["llama-autotune"]
        cache, _, _ = make_cache(script, widths, wanted, args.targets, tmp)
    chosen = heaviest(entries(cache), args.heaviest)
    subset = tmp / "heaviest"
    for entry in chosen:
        shutil.copytree(entry, subset / entry.name)
    ours_argv = [PYTHON, "-c", PEAK, "triton", "--from-cache", str(subset), "-t", args.targets, "-q", "--json"]
    _, said, ours, _ = watched(ours_argv, tmp / "screen-cache", ZEINSPECT_TRITON_WORKERS="2")
    ours["screening process"] = peak_mb(said)
    _, said, theirs, _ = watched([PYTHON, "-c", AT_EXIT_PEAK + ONE_BY_ONE, str(subset), args.targets],
                              tmp / "one-by-one-cache")
    theirs["one by one's own process (triton-xpu's compile in it)"] = peak_mb(said)
    worst = max(ours.values())
    return [{"subject": "llama-autotune-memory",
             "measure": f"peak RSS of every process (MB, the largest of each kind) on {len(chosen)} entries of the "
                        "max-autotune cache ranked first by their dot's work per warp: zeinspect's cold screen "
                        "(front-end workers on)", "value": worst, "kinds": ours, "goal": "500 MB", "met": worst <= 500},
            {"subject": "llama-autotune-memory",
             "measure": "the same entries one by one: triton-xpu's compile in its own process, one ocloc per target "
                        "(the same compiles)", "value": max(theirs.values()), "kinds": theirs}]


def anchor_only(args: argparse.Namespace, tmp: Path) -> list[dict]:
    """The one-by-one anchor alone, on a cache this script made (`--cache`, the same entries):
    its row, and the cold row's ratio, replace the last run's."""
    rows = record.earlier_rows("triton_cache_large", lambda r: True)
    cold = next((r for r in rows if r.get("subject") == "llama-autotune" and r["measure"].startswith("zeinspect triton")),
                None)
    if cold is None:
        raise SystemExit("--anchor-only: no llama-autotune run in bench/results/triton_cache_large.json to compare with")
    one_all, one, sampled, cpu = one_by_one(entries(Path(args.cache)), args, tmp)
    for r in rows:
        if r.get("subject") == "llama-autotune" and r["measure"].startswith("one by one"):
            r.update(seconds=round(one_all, 1), **{"sample seconds": round(one, 1), "sample cpu seconds": round(cpu, 1),
                                                   "cpu seconds scaled to all": round(cpu * one_all / one, 1)},
                     measure=f"one by one: triton-xpu's compile, then one ocloc per target, on {sampled} of the entries "
                             "(every n-th), scaled to all; measured alone after the cold run, on the same entries")
            r.pop("run", None)  # this run's, not the earlier one's
    cold.update(ratio=round(cold["seconds"] / one_all, 2), met=cold["seconds"] <= 0.5 * one_all)
    return rows


def run_llama(args: argparse.Namespace, tmp: Path) -> list[dict]:
    script, widths, wanted, what = SUBJECTS["llama-autotune"]
    cache, done, made = make_cache(script, widths, args.entries or wanted, args.targets, tmp)
    if args.keep_capture:  # for --anchor-only, or a later look at the same entries
        shutil.copytree(cache, args.keep_capture, dirs_exist_ok=True)
    held = entries(cache)
    one_all, one, sampled, one_cpu = one_by_one(held, args, tmp)
    # Kept at once: a cold screen of about two hours here may not see its end in a session.
    _write([{"subject": "llama-autotune", "measure": f"one by one on {sampled} of {len(held)} entries (every n-th), "
             "scaled to all; the cold screen did not finish", "seconds": round(one_all, 1),
             "sample seconds": round(one, 1)}], {"llama-autotune"}, args)
    command = [PYTHON, "-c", PEAK, "triton", "--from-cache", str(cache), "-t", args.targets, "-q", "--json"]
    ours = tmp / "screen-cache"
    cold, said, kinds, cold_cpu = watched(command, ours)
    warm, _, _, _ = watched(command, ours)
    own, others = peak_mb(said), kinds
    rows = [
        {"measure": f"entries of the cache ({what}, widths {','.join(map(str, done))}, for xpu under the capture; "
                    "every template config an entry)", "value": len(held), "MB on disk": size_mb(cache),
         "seconds to make": round(made, 1)},
        {"measure": f"one by one: triton-xpu's compile, then one ocloc per target, on {sampled} of the entries "
                    "(every n-th), scaled to all", "seconds": round(one_all, 1), "sample seconds": round(one, 1),
         "sample cpu seconds": round(one_cpu, 1), "cpu seconds scaled to all": round(one_cpu * len(held) / sampled, 1)},
        {"measure": "zeinspect triton --from-cache, cold", "seconds": round(cold, 1), "cpu seconds": round(cold_cpu, 1),
         "ratio": round(cold / one_all, 2), "goal": "0.5 x one by one", "met": cold <= 0.5 * one_all},
        {"measure": "the same, warm", "seconds": round(warm, 1), "goal": "10 s", "met": warm < 10},
        {"measure": "peak RSS of the screening process (MB, its own)", "value": own, "goal": "250 MB",
         "met": own <= 250},
        {"measure": "peak RSS of every other process of the cold run (MB, the largest of each kind, sampled)",
         "value": max(others.values(), default=0.0), "kinds": others, "goal": "500 MB",
         "met": max(others.values(), default=0.0) <= 500},
        {"measure": "zeinspect's build cache after the cold run (MB on disk) against the input cache",
         "value": size_mb(ours), "input": size_mb(cache), "goal": "no larger than the input",
         "met": size_mb(ours) <= size_mb(cache)},
    ]
    return [{"subject": "llama-autotune", **row} for row in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(SUBJECTS), action="append")
    parser.add_argument("--targets", default="bmg-g21,arl-s")
    parser.add_argument("--entries", type=int, default=0, help="entries wanted (default: the subject's)")
    parser.add_argument("--sample", type=int, default=60, help="entries built one by one (llama-autotune)")
    parser.add_argument("--keep-capture", metavar="DIR", help="copy llama-autotune's input cache to DIR")
    parser.add_argument("--anchor-only", metavar="CACHE",
                        help="llama-autotune's one-by-one anchor alone, on CACHE (the Triton cache its run made)")
    parser.add_argument("--memory", metavar="CACHE", nargs="?", const="",
                        help="every process's peak on the heaviest entries of CACHE (a max-autotune capture, "
                             "--keep-capture's; none: made here), zeinspect's and one by one's")
    parser.add_argument("--heaviest", type=int, default=6, help="entries --memory screens (default 6)")
    args = parser.parse_args()
    if args.memory is not None:
        library = wheels.installed("transformers", "5.25.0")
        with tempfile.TemporaryDirectory(prefix="zeinspect-bench-memory-") as name:
            os.environ.update(PYTHONPATH=os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library))),
                              ZEINSPECT_CACHE_DIR=str(Path(name) / "capture-cache"))
            rows = run_memory(args, Path(name))
        for row in rows:
            print(row)
        _write(rows, {"llama-autotune-memory"}, args)
        return 0
    if args.anchor_only:
        args.cache = args.anchor_only
        with tempfile.TemporaryDirectory(prefix="zeinspect-bench-anchor-") as name:
            rows = anchor_only(args, Path(name))
        record.write("triton_cache_large", "Screening large Triton caches: torch.compile runs, and a thousand "
                     "max-autotune specializations", rows,
                     note=f"targets {args.targets}; the caches written here by real torch.compile runs for xpu.")
        return 0
    library = wheels.installed("transformers", "5.25.0")
    rows: list[dict] = []
    for subject in args.only or sorted(SUBJECTS):
        with tempfile.TemporaryDirectory(prefix="zeinspect-bench-large-cache-") as name:
            os.environ.update(PYTHONPATH=os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library))),
                              ZEINSPECT_CACHE_DIR=str(Path(name) / "capture-cache"))
            got = (run_gpt2 if subject == "gpt2" else run_llama)(args, Path(name))
        for row in got:
            print(row)
        rows += got
    _write(rows, set(args.only or SUBJECTS), args)
    return 0


def _write(rows: list[dict], ran: set[str], args: argparse.Namespace) -> None:
    """The results file with `rows` for the subjects in `ran`; the others keep their last rows."""
    rows = record.earlier_rows("triton_cache_large", lambda r: r.get("subject", "gpt2") not in ran) + rows
    record.write("triton_cache_large", "Screening large Triton caches: torch.compile runs, and a thousand "
                 "max-autotune specializations", rows,
                 note=f"targets {args.targets}; the caches written here by real torch.compile runs for xpu.")


if __name__ == "__main__":
    sys.exit(main())
