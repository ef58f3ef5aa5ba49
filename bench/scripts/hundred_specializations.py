"""One small Triton kernel launched at 100 values of a constexpr: 100 specializations, as a
library whose wrapper passes a shape-derived constant would make (a scale, a row length)."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * SCALE, mask=mask)


x = torch.randn(4096)
out = torch.empty_like(x)
for scale in range(1, 101):
    scale_kernel[(4,)](x, out, x.numel(), SCALE=scale, BLOCK=1024)
print("launched 100 specializations")
