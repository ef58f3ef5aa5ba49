"""Data flows one way: no module imports from a layer above its own (README "Layout").

Every import counts, including those made inside functions to keep `zeinspect --help` fast.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "zeinspect"

# Bottom to top.  Modules directly in the package (model, hardware, errors, names, pairs,
# fileio, cache, paths) are the vocabulary and the plumbing every layer may use: layer 0.
# zeinspect.triton is the optional Triton package: above everything it uses, and nothing of
# the core may import it (only the front-ends do).
LAYERS = ("inputs", "toolchain", "levers", "probes", "judge", "app", "formats", "triton",
          ("cli", "pytest_plugin", "__main__"))


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        return 0
    for rank, names in enumerate(LAYERS, start=1):
        if parts[1] in ((names,) if isinstance(names, str) else names):
            return rank
    return 0


def imports_of(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute module) for every zeinspect module `path` imports."""
    module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from . import names` imports a module: judge each name as one.
            found += ([(node.lineno, f"{target}.{a.name}") for a in node.names] if not node.module
                      else [(node.lineno, target)])
    return [(line, name) for line, name in found if name.split(".")[0] == "zeinspect"]


def upward_imports(root: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for line, target in imports_of(path, root):
            if layer_of(target) > layer_of(module):
                problems.append(f"{path.relative_to(root.parent)}:{line}: {module} imports {target}")
    return problems


def test_no_module_imports_from_a_layer_above_it():
    assert upward_imports() == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The test above can fail: a probe importing from judge is caught, also inside a function."""
    fake = tmp_path / "zeinspect"
    (fake / "probes").mkdir(parents=True)
    (fake / "judge").mkdir()
    (fake / "probes" / "__init__.py").write_text("")
    (fake / "probes" / "aot.py").write_text("def f():\n    from ..judge.levers import to_spirv\n")
    (fake / "judge" / "levers.py").write_text("from ..probes.aot import f\n")
    assert upward_imports(fake) == ["zeinspect/probes/aot.py:2: zeinspect.probes.aot imports zeinspect.judge.levers"]


@pytest.mark.parametrize("module, rank", [("zeinspect.model", 0), ("zeinspect.fileio", 0), ("zeinspect.inputs.zebin", 1),
                                          ("zeinspect.levers.sub_group", 3), ("zeinspect.app.audit", 6),
                                          ("zeinspect.triton.loader", 8), ("zeinspect.cli.gate", 9)])
def test_layer_ranks(module, rank):
    assert layer_of(module) == rank
