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


def test_configs_that_differ_in_warps_share_a_ttir_equal_to_their_own_compiles(tmp_path, sid_compiler):
    from zeinspect.triton.build.backend import capabilities
    from zeinspect.triton.build.context import offline
    from zeinspect.triton.capture import first_stage
    from zeinspect.triton.offline.compiler import gpu_target

    (tmp_path / "kernels_fs.py").write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("kernels_fs", tmp_path / "kernels_fs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = gpu_target(capabilities(sid_compiler, "bmg-g21"), "bmg-g21", 32)

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
            [(reads, _)] = first_stage._MADE.values()
            assert reads == ({"num_warps": 4} if reads_warps else {})
            first_stage._MADE.clear()
            alone, _ = written(jit, 4)  # the same specialization compiled with nothing made before
            assert four == alone
            assert (two != four) == reads_warps
