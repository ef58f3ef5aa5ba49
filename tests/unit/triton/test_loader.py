"""Loading Triton modules as they are written, without compiling anything: Triton's own
tutorials in place (../shared/realworld/triton-tutorials/, never copied), and small modules
written here for one rule each.

Triton is imported (the loader builds real `@triton.jit` and `@triton.autotune` objects);
nothing is compiled, so these run in the unit tier.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")

from conftest import realworld  # noqa: E402

from zeinspect.errors import InputError  # noqa: E402
from zeinspect.triton.build.context import offline  # noqa: E402
from zeinspect.triton.load import loader  # noqa: E402

TUTORIALS = realworld() / "triton-tutorials"


@pytest.fixture(scope="module")
def target():
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": "bmg-g21", "arch": "bmg", "sub_group_sizes": [16, 32]}, 32)


def _load(path, target, props=None):
    with offline():
        return loader.load(str(path), target, props)


def _jit_defs(path: Path) -> set[str]:
    """The functions the file decorates with triton.jit, read from its text."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            names.add(node.name)
    return names


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no ../shared/realworld (set $ZEINSPECT_REALWORLD)")
@pytest.mark.parametrize("name", sorted(p.name for p in TUTORIALS.glob("*.py")) if TUTORIALS.is_dir() else [])
def test_every_tutorial_loads_and_gives_every_kernel_it_defines(name, target):
    path = TUTORIALS / name
    module = _load(path, target)
    assert {k for k, _ in module.kernels()} == _jit_defs(path)


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no ../shared/realworld (set $ZEINSPECT_REALWORLD)")
def test_tutorial_program_code_does_not_run_and_says_why(target):
    path = TUTORIALS / "01-vector-add.py"
    module = _load(path, target)
    # `x = torch.rand(size, device=DEVICE)` is program code; `output_torch = x + y` needs it.
    x = module.unbound["x"]
    assert path.read_text().splitlines()[x.line - 1].strip().startswith("x = torch.rand")
    assert "torch.rand" in x.why and "'x'" in module.unbound["output_torch"].why
    assert "x" not in module.namespace and "output_triton" not in module.namespace


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no ../shared/realworld (set $ZEINSPECT_REALWORLD)")
def test_configs_are_picked_by_the_targets_arch_and_the_driver_answers_device_properties(target):
    # 03 picks its XPU configs through get_current_target().arch['arch'] and the backend name.
    module = _load(TUTORIALS / "03-matrix-multiplication.py", target)
    xpu = module.namespace["get_xpu_autotune_config"]()
    assert [c.kwargs for c in module.kernel("matmul_kernel").configs] == [c.kwargs for c in xpu]
    # 02 reads driver.active.utils.get_device_properties(...) at the top level.
    props = {"max_shared_mem": 131072, "multiprocessor_count": 20, "sm_clock_rate": 2670, "mem_clock_rate": 2375,
             "mem_bus_width": 192, "max_work_group_size": 1024, "sub_group_sizes": (16, 32)}
    softmax = _load(TUTORIALS / "02-fused-softmax.py", target, props)
    assert softmax.namespace["NUM_SM"] == 20 and softmax.namespace["WARP_SIZE"] == 32


def test_a_placeholder_behaves_as_a_module_would(tmp_path, target):
    source = tmp_path / "m.py"
    source.write_text(
        "import not_installed_pkg as pkg\n"
        "import triton\n"
        "class Op(pkg.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x\n"
        "apply = Op.apply\n"
        "@pkg.compile\n"
        "def f(x):\n"
        "    return x\n"
        "@pkg.library.custom_op('x')\n"
        "def g(x):\n"
        "    return x\n"
        "items = list(pkg.things)\n"
        "first = pkg.table[0]\n"
        "flag = bool(pkg.version.hip)\n"
        "def uses():\n"
        "    with pkg.no_grad():\n"
        "        return 1\n"
        "used = uses()\n")
    ns = _load(source, target).namespace
    assert isinstance(ns["apply"], loader.Placeholder) and ns["Op"].forward(None, 3) == 3
    assert ns["f"](2) == 2 and ns["g"](5) == 5  # decorators hand the function back
    assert ns["items"] == [] and isinstance(ns["first"], loader.Placeholder) and ns["flag"] is False
    assert ns["used"] == 1


def test_try_except_import_error_takes_the_missing_package_path(tmp_path, target):
    source = tmp_path / "m.py"
    source.write_text("try:\n    import not_installed_pkg\n    HAVE = True\nexcept ImportError:\n    HAVE = False\n")
    assert _load(source, target).namespace["HAVE"] is False


def test_the_modules_own_package_is_imported_by_the_same_rules(tmp_path, target):
    pkg = tmp_path / "mylib"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops" / "__init__.py").write_text("")
    (pkg / "ops" / "utils.py").write_text("import torch\nBLOCK = 64\nx = torch.rand(3)\ndef libentry():\n"
                                          "    return lambda fn: fn\n")
    (pkg / "ops" / "kernel.py").write_text(
        "import triton\nimport triton.language as tl\nfrom mylib.ops.utils import BLOCK, libentry\n"
        "from .utils import BLOCK as SAME\n"
        "@libentry()\n@triton.jit\ndef k(x_ptr, B: tl.constexpr = BLOCK):\n    pass\n")
    before = set(sys.modules)
    module = _load(pkg / "ops" / "kernel.py", target)
    assert module.namespace["SAME"] == 64 and [k for k, _ in module.kernels()] == ["k"]
    assert "mylib" not in sys.modules and not (set(sys.modules) - before - set(loader.LOADED))


def test_a_name_a_kernel_needs_is_one_line_with_the_statement_that_did_not_run(tmp_path, target):
    source = tmp_path / "m.py"
    source.write_text("import torch\nimport triton\nSCALE = torch.ones(1).item()\n\n"
                      "@triton.jit(do_not_specialize=[SCALE])\ndef k(x_ptr):\n    pass\n"
                      "OTHER = missing_name + 1\n")
    module = _load(source, target)  # loading goes on past both
    with pytest.raises(InputError) as err:
        module.kernel("k")
    line = err.value.one_line()
    assert "\n" not in line and str(source) in line and "'SCALE'" in line and "line 3" in line
    assert "SCALE = torch.ones(1).item()" in line


@pytest.mark.parametrize("text, words", [("def f(:\n", "not valid Python"), ("\x00\x01binary", "Python")])
def test_a_file_that_is_not_python_is_one_line(tmp_path, target, text, words):
    source = tmp_path / "bad.py"
    source.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError) as err:
        _load(source, target)
    assert words in err.value.one_line() and str(source) in err.value.one_line()


def test_a_module_that_loops_forever_at_import_is_stopped(tmp_path, target, monkeypatch):
    source = tmp_path / "loops.py"
    source.write_text("def forever():\n    while True:\n        pass\nX = forever()\n")
    monkeypatch.setenv("ZEINSPECT_LOAD_TIMEOUT", "1")
    with pytest.raises(InputError) as err:
        _load(source, target)
    assert "did not finish loading" in err.value.one_line()


def test_loading_leaves_the_process_as_it_found_it(tmp_path, target):
    from triton.backends import backends

    source = tmp_path / "m.py"
    source.write_text("import triton\nprint('hello')\n@triton.jit\ndef k(x_ptr):\n    pass\n")
    cache, intel = os.environ.get("TRITON_CACHE_DIR"), backends["intel"]
    before = set(sys.modules)
    _load(source, target)
    assert os.environ.get("TRITON_CACHE_DIR") == cache and backends["intel"] is intel
    assert set(sys.modules) == before and triton.runtime.driver.active is not None
