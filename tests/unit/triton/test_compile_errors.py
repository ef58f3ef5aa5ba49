"""Triton's compile errors as one line: the file line and the message, not the source excerpt."""

from __future__ import annotations

import ast
import importlib.util

import pytest

errors = pytest.importorskip("triton.compiler.errors")

from zeinspect.triton.build.errors import classify, compile_error_text, def_line  # noqa: E402

SOURCE = '''import triton
import triton.language as tl


def wrap(f):
    return f


@wrap
@triton.jit
def k(desc, out):
    # a comment Triton would print
    x = desc.load([0, 0])
    tl.store(out, x)
'''


def _kernel(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("mod_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


def test_the_line_is_the_files_and_the_excerpt_is_gone(tmp_path):
    fn = _kernel(tmp_path)
    assert def_line(fn) == SOURCE.splitlines().index("def k(desc, out):") + 1  # below both decorators
    node = ast.parse("x = desc.load([0, 0])").body[0]
    node.lineno = 3  # Triton counts from the def line
    inner = AttributeError("'tensor' object has no attribute 'load'")
    exc = errors.CompilationError(fn.src, node, None)
    exc.__cause__ = inner
    text = compile_error_text(exc, def_line(fn))
    assert text == f"line {SOURCE.splitlines().index('    x = desc.load([0, 0])') + 1}: {inner}"
    assert "comment" not in text and "\n" not in text
    assert classify(text).startswith("uses tensor descriptors")


def test_an_error_that_is_not_tritons_is_its_own_text():
    assert compile_error_text(ValueError("bad value")) == "bad value"
    assert compile_error_text(RuntimeError()) == "RuntimeError"
