"""xpu-kernels 0.3.0's four Triton ops (as bench/scripts/xpu_kernels_ops.py calls them), called
ROUNDS times on CPU tensors, as a library's test loop or a benchmark would: one specialization
each, launched ROUNDS times.  Prints the time per op call after the first round (the library's
wrapper and the capture's hook: everything a call costs here, kernels being captured, not run)."""
import time

import torch
import xpu_kernels.triton.adaln as adaln
import xpu_kernels.triton.nf4 as nf4
import xpu_kernels.triton.quantize as quantize
import xpu_kernels.triton.rope as rope

ROUNDS = 2000
B, S, H, D = 1, 64, 8, 128
x = torch.randn(B, S, H, D, dtype=torch.bfloat16)
freqs = torch.randn(1, S, 1, D // 2, 2, 2, dtype=torch.float32)
theta = torch.rand(D)
hidden = torch.randn(B, S, 4096, dtype=torch.bfloat16)
scale, shift = torch.randn(B, 1, 4096, dtype=torch.bfloat16), torch.randn(B, 1, 4096, dtype=torch.bfloat16)
n = 4096 * 64
packed = torch.randint(0, 255, (n // 2,), dtype=torch.uint8)
absmax = torch.rand(n // nf4.BLOCKSIZE, dtype=torch.float32)
out = torch.empty(n, dtype=torch.bfloat16)
rows = torch.randn(S, 4096, dtype=torch.bfloat16)


def one_round():
    rope._rows(x, freqs, theta, 1e-6)
    adaln._run(hidden, scale, shift, 1e-6)
    nf4._launch(packed, absmax, nf4.codebook(), out, n, nf4.BLOCKSIZE, torch.bfloat16)
    quantize._rows(rows)


one_round()
started = time.perf_counter()
for _ in range(ROUNDS - 1):
    one_round()
print(f"per launch {1000 * (time.perf_counter() - started) / (4 * (ROUNDS - 1)):.4f} ms (op call, after the first)")
