# Autotune configs chosen by the device, as XPU-aware modules do (tests/integration/probes/
# test_triton_modules.py): a larger config only where the GPU has DPAS (the driver's target says).
import triton
import triton.language as tl


def _configs():
    arch = triton.runtime.driver.active.get_current_target().arch
    configs = [triton.Config({"BLOCK": 256}, num_warps=4)]
    if arch.get("has_subgroup_matrix_multiply_accumulate"):
        configs.append(triton.Config({"BLOCK": 1024}, num_warps=8))
    return configs


@triton.autotune(configs=_configs(), key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)
