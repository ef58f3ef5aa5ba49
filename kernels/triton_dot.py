# triton_dot.py -- exercises: the PTSS cliff of seed 000.  A 64x128x128 f16 `tl.dot` with 4
# warps: on targets without DPAS (arl-s, mtl-u) Triton takes the FMA path and IGC needs
# about 325 KB of spill space per thread -- over the 256 KiB cap, so it does not build.
# The SLM staging pass (zeinspect triton --stage) stages both operands in SLM as f16 (48 KB)
# and loops over K in tiles: it builds.  On DPAS targets (arl-h, dg2, lnl, bmg) the pass
# declines and nothing changes.  The gate (ratchet/gate.yaml) builds it with the pass on.
import triton
import triton.language as tl


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)
