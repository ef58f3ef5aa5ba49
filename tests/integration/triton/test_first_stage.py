"""The capture's front end (triton.capture.first_stage) makes a kernel's TTIR once for the
specializations that differ only in options Triton's code generator and make_ttir do not read
(num_warps, num_stages: an autotuned kernel's configs, most of the front end's cost in the user's
process), and writes for each what a compile of its own writes: the same TTIR text, and its own
options in its metadata.  A kernel that reads num_warps (`tl.extra.intel.num_warps()`) gets a
TTIR of its own for each."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("triton.backends.intel.compiler")

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def plain(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@triton.jit
def warps(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * tl.extra.intel.num_warps())
"""

ARGS = {"signature": {"x_ptr": "*fp32", "BLOCK": "constexpr"}, "constants": {(1,): 64},
        "configs": [{(0,): [["tt.divisibility", 16]]}]}


def test_configs_that_differ_in_warps_share_a_ttir_equal_to_their_own_compiles(tmp_path, sid_compiler, monkeypatch):
    from zeinspect.triton.build.backend import capabilities
    from zeinspect.triton.build.context import offline
    from zeinspect.triton.capture import first_stage
    from zeinspect.triton.offline.compiler import gpu_target

    (tmp_path / "kernels_fs.py").write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("kernels_fs", tmp_path / "kernels_fs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = gpu_target(capabilities(sid_compiler, "bmg-g21"), "bmg-g21", 32)
    from triton.compiler import ASTSource

    generated: list[str] = []  # each run of Triton's code generator, by kernel
    make_ir = ASTSource.make_ir

    def counted(self, *args):
        generated.append(self.fn.__name__)
        return make_ir(self, *args)

    monkeypatch.setattr(ASTSource, "make_ir", counted)
    monkeypatch.delenv("TRITON_INTEL_RAISE_BLOCK_POINTER", raising=False)

    def written(jit, num_warps: int) -> tuple[str, dict]:
        got = first_stage.through_front_end(jit, ARGS, {"num_warps": num_warps}, target)
        meta = Path(got["ttir"])
        text = (meta.parent / meta.name.replace(".json", ".ttir")).read_text()
        return text, json.loads(meta.read_text())

    with offline():
        os.environ["TRITON_CACHE_DIR"] = str(tmp_path / "cache")  # offline() restores it
        for jit, reads_warps in ((module.plain, False), (module.warps, True)):
            first_stage._MADE.clear()
            two, _ = written(jit, 2)
            four, meta = written(jit, 4)
            assert meta["num_warps"] == 4  # Triton's own metadata, with the specialization's options
            # Made once (the code generator read no launch-only option), or again for the one that reads num_warps.
            assert generated.count(jit.fn.__name__) == (2 if reads_warps else 1)
            first_stage._MADE.clear()
            alone, _ = written(jit, 4)  # the same specialization compiled with nothing made before
            assert four == alone
            assert (two != four) == reads_warps
        # An environment variable Triton's cache key holds (make_ttir reads this one) makes it again.
        first_stage._MADE.clear()
        written(module.plain, 2)
        os.environ["TRITON_INTEL_RAISE_BLOCK_POINTER"] = "1"
        try:
            raised, _ = written(module.plain, 4)
        finally:
            del os.environ["TRITON_INTEL_RAISE_BLOCK_POINTER"]
        first_stage._MADE.clear()
        os.environ["TRITON_INTEL_RAISE_BLOCK_POINTER"] = "1"
        try:
            alone, _ = written(module.plain, 4)
        finally:
            del os.environ["TRITON_INTEL_RAISE_BLOCK_POINTER"]
        assert raised == alone and generated.count("plain") == 2 + 3
