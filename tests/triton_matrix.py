"""The staging pass's validation matrix, in the spirit of seed 000 (shared by the tests and
scripts/staging_matrix.py, which prints the table of docs/guides/triton.md).

Group A: dots that overflow the per-thread scratch cap on arl-s (= mtl-u, one IP) as
compiled, over M, N, K, f16/bf16 and warps: all must build with the pass.
Group B: dots that spill but build: the pass must reduce the spill.
Group C: the pass must change nothing, byte for byte: DPAS targets, and dots too small to
be worth staging.
"""

GROUP_A = [  # (M, N, K, dtype, num_warps)
    (64, 128, 128, "fp16", 4), (64, 64, 256, "fp16", 4), (64, 128, 128, "bf16", 4), (128, 64, 128, "fp16", 4),
    (128, 128, 128, "fp16", 4), (128, 128, 64, "fp16", 4), (64, 64, 256, "bf16", 4), (128, 64, 128, "bf16", 4),
    (64, 128, 128, "fp16", 2), (64, 128, 64, "fp16", 2),
]
GROUP_B = [(64, 128, 128, "fp16", 8), (64, 64, 128, "fp16", 4), (64, 128, 64, "fp16", 4)]
GROUP_C_DPAS = [("lnl-m", (64, 128, 128, "fp16", 4)), ("bmg-g21", (64, 128, 128, "fp16", 4)),
                ("arl-h", (64, 64, 64, "fp16", 4)), ("dg2-g10", (64, 64, 64, "bf16", 4))]
GROUP_C_SMALL = [("arl-s", (32, 64, 64, "fp16", 4)), ("arl-s", (16, 16, 16, "fp16", 4)), ("mtl-h", (32, 32, 32, "bf16", 4))]
FMA_TARGET = "arl-s"

# What the test suite compiles: one case of each kind (f16 and bf16 overflows, a spill, a DPAS
# and a too-small dot left alone), since each case is a minute of ocloc on a 2-core machine.
# ZEINSPECT_FULL_MATRIX=1 runs every case; scripts/staging_matrix.py prints the docs/guides/triton.md table of
# all of them.
import os  # noqa: E402

if os.environ.get("ZEINSPECT_FULL_MATRIX") != "1":
    TESTED_A, TESTED_B = [GROUP_A[0], GROUP_A[2]], GROUP_B[:1]
    TESTED_C = [GROUP_C_DPAS[1], GROUP_C_SMALL[0]]
else:
    TESTED_A, TESTED_B, TESTED_C = GROUP_A, GROUP_B, GROUP_C_DPAS + GROUP_C_SMALL


def kernel(case):
    from pathlib import Path

    from zeinspect.triton.model.kernel import TritonKernel

    m, n, k, dtype, warps = case
    root = Path(__file__).resolve().parent.parent
    return TritonKernel(file=str(root / "kernels" / "triton_dot.py"), kernel="dot_kernel",
                        signature={"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": "*fp32"},
                        constexprs={"M": str(m), "N": str(n), "K": str(k)}, num_warps=warps)


def case_id(case) -> str:
    m, n, k, dtype, warps = case
    return f"{m}x{n}x{k}-{dtype}-w{warps}"
