"""What torch.compile generates for an Intel GPU, from a training step run here: the 4-layer GPT-2
step of the real Inductor cache the tests read (realworld inductor-gpt2: bf16 autocast,
AdamW, run on a CUDA GPU), run for xpu under `zeinspect triton --run` with the CPU build of torch,
its attention written out (transformers' attn_implementation="eager": SDPA's kernel choice for
xpu is made in torch's XPU build).  Prints what Inductor generated, what was screened and
spills, the time and the peak memory, and how many of the kernels are the ones Inductor
generated for the CUDA run of the same step (by name: the fused ops and their order).

    .venv/bin/python bench/inductor_xpu.py [--targets bmg-g21,arl-s]

transformers 5.25.0 from the package index (pip, bench/wheels.py).  Writes
bench/results/inductor_xpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
import wheels  # noqa: E402
from triton_cache import realworld  # noqa: E402

STEP = '''
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
m = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=16384, n_positions=512,
                               attn_implementation="eager")).to("xpu")
cm = torch.compile(m)
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
ids = torch.randint(0, 16384, (8, 256), device="xpu")


def step():
    with torch.autocast("xpu", dtype=torch.bfloat16):
        out = cm(ids, labels=ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


for _ in range(2):
    step()
'''


def cuda_kernels(tmp: Path) -> set[str]:
    """The Triton kernels Inductor generated for the CUDA run of the same step (its cache)."""
    from zeinspect.triton.sources.cache import read_cache

    with tarfile.open(realworld() / "inductor-gpt2" / "gpt2-step.tar.xz") as tar:
        tar.extractall(tmp, members=[m for m in tar.getmembers() if m.name.startswith("ind_gpt2/triton/")],
                       filter="data")
    return {s.kernel.kernel for s in read_cache(str(tmp / "ind_gpt2" / "triton")).specializations}


def command_alone(script: Path, env: dict, targets: str) -> float:
    """The command's own time under the capture, nothing screened: Dynamo, Inductor and Triton's
    first stage for every config, and the step itself, on the CPU (triton.app.library.capture)."""
    from zeinspect.app.gate import settings
    from zeinspect.app.session import open_session
    from zeinspect.triton.app.library import capture, capture_target

    saved = dict(os.environ)
    os.environ.update(env)
    try:
        started = time.monotonic()
        config = settings({"targets": tuple(targets.split(","))})
        capture([sys.executable, str(script)], target=capture_target(config, open_session(config)))
        return time.monotonic() - started
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", default="bmg-g21,arl-s")
    args = parser.parse_args()
    library = wheels.installed("transformers", "5.25.0")
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-inductor-") as name:
        tmp = Path(name)
        script = tmp / "step.py"
        script.write_text(STEP)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "build" / "torch-cpu"), str(library))),
               "ZEINSPECT_CACHE_DIR": str(tmp / "cache")}
        argv = [sys.executable, "-m", "zeinspect", "triton", "--run", "-t", args.targets, "--json", "-q", "--",
                sys.executable, str(script)]
        started = time.monotonic()
        res = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
        seconds = time.monotonic() - started
        if not res.stdout:
            raise SystemExit(f"zeinspect triton --run failed: {res.stderr[-800:]}")
        doc = json.loads(res.stdout)
        started = time.monotonic()
        subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
        warm = time.monotonic() - started
        alone = command_alone(script, env, args.targets)
        cuda = cuda_kernels(tmp)
    specs = [s for s in doc["capture"]["specializations"] if s["inductor_graph"]]
    kernels = {s["kernel"] for s in specs}
    reports = doc["reports"]
    # A kernel is its graph's: a forward and its backward number their kernels from 0 each.
    row = {"Inductor kernels": len({(s["inductor_graph"], s["kernel"]) for s in specs}),
           "distinct kernel names": len(kernels), "autotune configs": len(specs),
           "graphs": len({s["inductor_graph"] for s in specs}), "reports": len(reports),
           "spilling (configs x targets)": sum(1 for r in reports if r.get("scratch_bytes")),
           "failed builds": sum(1 for r in reports if r["status"] == "build_failed"),
           "seconds cold (command and screen)": round(seconds, 1), "seconds warm": round(warm, 1),
           "seconds of the command alone under the capture": round(alone, 1),
           "peak RSS MiB (zeinspect)": round(doc["stats"]["peak_rss_bytes"] / 2**20),
           "CUDA run's kernels": len(cuda), "the same kernels (by name)": len(kernels & cuda),
           "exit": doc["capture"]["exit_code"]}
    print(json.dumps(row, indent=1))
    record.write("inductor_xpu", f"torch.compile for xpu: a 4-layer GPT-2 training step on {args.targets}", [row],
                 note="The step of the realworld inductor-gpt2 cache (bf16 autocast, AdamW, 2 steps), run for xpu "
                      "with the CPU torch under `zeinspect triton --run`, attention written out.")


if __name__ == "__main__":
    main()
