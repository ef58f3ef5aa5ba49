# Two large tiles live at once per program: with 64 warps of 16 lanes each lane holds 256
# floats, more than 128 registers hold, so Triton-XPU's own rule rebuilds it with 256 registers
# (tests/integration/test_occupancy.py: that build cannot launch its 1024 work-items).
import triton
import triton.language as tl


@triton.jit
def wide_tile(x_ptr, y_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    offs = rows * BLOCK_N + cols
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = x * y + tl.exp(x) * tl.exp(y)
    tl.store(out_ptr + offs, z + tl.sum(x, axis=1)[:, None] + tl.sum(y, axis=0)[None, :])
