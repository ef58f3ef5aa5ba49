"""xpu-kernels 0.3.0's Triton ops, called through the module functions that launch its kernels
(the public entry points refuse a CPU tensor: their gates want an accelerator), on CPU tensors
of a realistic shape (a 64-token, 8-head, 128-wide attention block; a 4096-wide hidden state)."""
import torch
import xpu_kernels.triton.adaln as adaln
import xpu_kernels.triton.nf4 as nf4
import xpu_kernels.triton.quantize as quantize
import xpu_kernels.triton.rope as rope

B, S, H, D = 1, 64, 8, 128
x = torch.randn(B, S, H, D, dtype=torch.bfloat16)
freqs = torch.randn(1, S, 1, D // 2, 2, 2, dtype=torch.float32)
rope._rows(x, freqs, torch.rand(D), 1e-6)
hidden = torch.randn(B, S, 4096, dtype=torch.bfloat16)
adaln._run(hidden, torch.randn(B, 1, 4096, dtype=torch.bfloat16), torch.randn(B, 1, 4096, dtype=torch.bfloat16), 1e-6)
n = 4096 * 64
packed = torch.randint(0, 255, (n // 2,), dtype=torch.uint8)
absmax = torch.rand(n // nf4.BLOCKSIZE, dtype=torch.float32)
nf4._launch(packed, absmax, nf4.codebook(), torch.empty(n, dtype=torch.bfloat16), n, nf4.BLOCKSIZE, torch.bfloat16)
quantize._rows(torch.randn(S, 4096, dtype=torch.bfloat16))
print("launched rope, adaln, nf4, quantize")
