"""triton.build.warm: what a kept Triton front-end result is keyed by.  A key that misses a change
of the code would give a stale screen, the worst bug a cache can have; one that changes
without reason only costs time."""

from __future__ import annotations

import pytest

from zeinspect.triton.build import warm
from zeinspect.triton.model.kernel import TritonKernel

CAPS = {"sub_group_sizes": [16, 32], "has_subgroup_matrix_multiply_accumulate": True}


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "lib" / "ops"
    root.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "kernels.py").write_text("from ..consts import BLOCK\n# the kernel\n")
    (tmp_path / "lib" / "consts.py").write_text("BLOCK = 64\n")
    return tmp_path / "lib"


def _kernel(path, **kw):
    base = dict(file=str(path), kernel="k", signature={"x": "*fp16", "n": "i32"}, constexprs={"B": 64},
                attrs=(((0,), [["tt.divisibility", 16]]),))
    return TritonKernel(**{**base, **kw})


def test_the_same_code_and_request_is_the_same_key(package):
    k = _kernel(package / "ops" / "kernels.py")
    assert warm.key(k, CAPS, "bmg-g21") == warm.key(k, dict(CAPS), "bmg-g21") is not None


def test_an_edit_anywhere_in_the_package_is_a_new_key(package):
    k = _kernel(package / "ops" / "kernels.py")
    before = warm.key(k, CAPS, "bmg-g21")
    (package / "consts.py").write_text("BLOCK = 128\n")  # a helper the kernel's module imports
    assert warm.key(k, CAPS, "bmg-g21") != before


def test_the_request_the_target_and_tritons_knobs_are_in_the_key(package, monkeypatch):
    k = _kernel(package / "ops" / "kernels.py")
    base = warm.key(k, CAPS, "bmg-g21")
    assert warm.key(_kernel(k.file, constexprs={"B": 128}), CAPS, "bmg-g21") != base
    assert warm.key(_kernel(k.file, num_warps=8), CAPS, "bmg-g21") != base
    assert warm.key(k, {**CAPS, "has_subgroup_matrix_multiply_accumulate": False}, "bmg-g21") != base
    assert warm.key(k, CAPS, "lnl-m") != base
    # Where Triton keeps its files is not what it builds: each plugin session has its own cache folder.
    monkeypatch.setenv("TRITON_CACHE_DIR", "/tmp/another-session")
    assert warm.key(k, CAPS, "bmg-g21") == base
    monkeypatch.setenv("TRITON_INTEL_ADVANCED_PATH", "1")
    assert warm.key(k, CAPS, "bmg-g21") != base


def test_a_file_outside_a_package_is_keyed_with_its_folder(tmp_path):
    (tmp_path / "kernel.py").write_text("from helpers import B\n")
    (tmp_path / "helpers.py").write_text("B = 1\n")
    k = _kernel(tmp_path / "kernel.py")
    before = warm.key(k, CAPS, "bmg-g21")
    (tmp_path / "helpers.py").write_text("B = 2\n")
    assert warm.key(k, CAPS, "bmg-g21") != before


def test_a_request_that_does_not_survive_json_is_never_cached(package):
    odd = _kernel(package / "ops" / "kernels.py", constexprs={"B": object()})
    assert warm.key(odd, CAPS, "bmg-g21") is None
    assert warm.request_from_json(warm.request_json(_kernel(package / "ops" / "kernels.py"))) == \
        _kernel(package / "ops" / "kernels.py")


def test_a_ttir_is_keyed_by_its_content_wherever_its_file_is(tmp_path):
    """A kernel built from a TTIR file (a cache entry, or one torch.compile generated in a
    capture, whose folder is new each run): the same IR elsewhere is the same key, other IR or
    other launch options a new one."""
    ir = 'module {\n  tt.func public @k() attributes {noinline = false} {\n    tt.return\n  }\n}\n'
    one, two = tmp_path / "run1" / "k.ttir", tmp_path / "run2" / "k.ttir"
    for path in (one, two):
        path.parent.mkdir()
        path.write_text(ir)
    keys = [warm.key(TritonKernel(file=str(p), kernel="k", signature={}, constexprs={}), CAPS, "bmg-g21")
            for p in (one, two)]
    assert keys[0] == keys[1] is not None
    assert warm.key(TritonKernel(file=str(one), kernel="k", signature={}, constexprs={}, num_warps=8), CAPS,
                    "bmg-g21") != keys[0]
    two.write_text(ir.replace("noinline = false", "noinline = true"))
    assert warm.key(TritonKernel(file=str(two), kernel="k", signature={}, constexprs={}), CAPS, "bmg-g21") != keys[0]
