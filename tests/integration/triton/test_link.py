"""triton.offline.link: a kernel that calls nothing in Intel's libdevice is linked with libdevice's
metadata alone, and its SPIR-V is the one Triton's own link gives, byte for byte."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")

from zeinspect.app.gate import settings  # noqa: E402
from zeinspect.app.session import open_session  # noqa: E402
from zeinspect.triton.build import context  # noqa: E402
from zeinspect.triton.build.backend import compile_kernel, target_groups  # noqa: E402
from zeinspect.triton.model.kernel import TritonKernel  # noqa: E402
from zeinspect.triton.offline import link  # noqa: E402

SOURCE = '''
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(x * x, axis=0))


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=mask)), mask=mask)
'''


def _kernels(path) -> list[TritonKernel]:
    pointers = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    return [TritonKernel(file=str(path), kernel="tanh_kernel", signature={**pointers, "n": "i32"},
                         constexprs={"BLOCK": 256}),
            TritonKernel(file=str(path), kernel="scale_kernel", signature={**pointers, "n": "i32"},
                         constexprs={"BLOCK": 256}),
            TritonKernel(file=str(path), kernel="row_sum_kernel", signature={"x_ptr": "*bf16", "y_ptr": "*fp32"},
                         constexprs={"BLOCK": 512})]


def test_a_kernel_that_calls_nothing_in_libdevice_gets_the_spirv_of_tritons_own_link(tmp_path, monkeypatch,
                                                                                      sid_compiler):
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    config = settings({"targets": ("bmg-g21", "arl-s"), "compiler": sid_compiler.id})
    groups = target_groups(open_session(config).plan(config.targets))
    assert len(groups) == 2  # DPAS and FMA: two compiles of each kernel

    def build(enabled: bool) -> dict[tuple[str, str], bytes]:
        # A build cache and a Triton cache of its own for each way: Triton's (the process's own,
        # triton.build.context) would otherwise give back the first.
        monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(tmp_path / f"cache-{enabled}"))
        monkeypatch.setattr(context, "_own_cache", [])
        monkeypatch.setattr(link, "ENABLED", enabled)
        out = {}
        for kernel in _kernels(path):
            for group in groups:
                before = link.shortcuts()
                out[(kernel.kernel, group.targets[0])] = compile_kernel(kernel, group.caps, group.targets[0])[1]
                if kernel.kernel == "tanh_kernel":  # it calls libdevice's tanh: the full link, always
                    assert link.shortcuts() == before
        return out

    tritons = build(False)
    shortcuts = link.shortcuts()
    ours = build(True)
    assert ours == tritons
    # The two kernels that call nothing in it took the shortcut once the tanh kernel's full link
    # had shown which of their declarations (IGC's builtins) libdevice leaves alone.
    assert link.shortcuts() - shortcuts >= len(groups)
