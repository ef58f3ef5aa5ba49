"""Pointer arguments of Triton kernels read from their source, as the tutorials write them."""

from __future__ import annotations

import ast
from pathlib import Path

from zeinspect.triton.load.source import pointer_arguments

MODULES = Path(__file__).resolve().parents[2] / "kernels" / "triton"


def _kernel(module: str, name: str) -> tuple[str, list[str]]:
    """The source of one function of a test module, and its parameter names."""
    text = (MODULES / module).read_text()
    (function,) = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name]
    return ast.get_source_segment(text, function) or "", [a.arg for a in function.args.args]


def test_the_tutorials_pointers_are_found_by_use():
    assert pointer_arguments(*_kernel("matmul_tutorial.py", "matmul_kernel")) == ["a_ptr", "b_ptr", "c_ptr"]
    # Not named *_ptr: found because the kernel loads from and stores to them.
    found = pointer_arguments(*_kernel("layer_norm.py", "_layer_norm_fwd_fused"))
    assert found is not None and sorted(found) == ["B", "Mean", "Rstd", "W", "X", "Y"]
    assert pointer_arguments(*_kernel("softmax.py", "softmax_kernel")) == ["input_ptr", "output_ptr"]


def test_keyword_block_pointers_and_the_leftmost_term():
    source = '''
def k(base, out, n, off):
    p = tl.make_block_ptr(base=base, shape=(n,), strides=(1,), offsets=(0,), block_shape=(16,), order=(0,))
    v = tl.load(p)
    tl.atomic_add(out + off, v)
    tl.store(pointer=out, value=v)
'''
    assert pointer_arguments(source, ["base", "out", "n", "off"]) == ["base", "out"]


def test_unreadable_source_is_none():
    assert pointer_arguments("def broken(:", ["x"]) is None
    assert pointer_arguments("x = 1", ["x"]) is None
