"""Data flows one way: no module imports from a layer above its own (docs/contributing.md, "Layout").

Every import counts, including those made inside functions to keep `zeinspect --help` fast.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "zeinspect"

# Bottom to top.  Modules directly in the package (model, hardware, errors, names, pairs,
# fileio, cache, paths) are the vocabulary and the plumbing every layer may use: layer 0.
# zeinspect.triton is the optional Triton package: above everything it uses, and nothing of
# the core may import it (only the front-ends do).
LAYERS = ("inputs", "toolchain", "levers", "settings", "probes", "judge", "app", "formats", "triton",
          ("cli", "pytest_plugin", "__main__"))


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        return 0
    for rank, names in enumerate(LAYERS, start=1):
        if parts[1] in ((names,) if isinstance(names, str) else names):
            return rank
    return 0


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks of the run."""
    return ast.parse(path.read_text(), str(path))


def imports_of(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, absolute module) for every zeinspect module `path` imports."""
    module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(parsed(path)):
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
                                          ("zeinspect.levers.sub_group", 3), ("zeinspect.settings", 4),
                                          ("zeinspect.app.audit", 7), ("zeinspect.triton.load.loader", 9),
                                          ("zeinspect.cli.gate", 10)])
def test_layer_ranks(module, rank):
    assert layer_of(module) == rank



# zeinspect.triton's own floors, bottom to top (its __init__ docstring): a module imports only
# from its own floor or the floors below.  Modules directly in the package other than views
# (plugin.py, __init__.py) are its door: above every floor.
from zeinspect.triton import FLOORS as TRITON_FLOORS  # noqa: E402 - beside the rule it orders


def triton_floor(module: str) -> int | None:
    """A zeinspect.triton module's floor (its rank in TRITON_FLOORS); None outside the package."""
    parts = module.split(".")
    if parts[:2] != ["zeinspect", "triton"]:
        return None
    if len(parts) == 2 or parts[2] not in TRITON_FLOORS:
        return len(TRITON_FLOORS)
    return TRITON_FLOORS.index(parts[2])


def triton_upward_imports(root: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted((root / "triton").rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for line, target in imports_of(path, root):
            floor = triton_floor(target)
            if floor is not None and floor > triton_floor(module):
                problems.append(f"{path.relative_to(root.parent)}:{line}: {module} imports {target}")
    return problems


def test_no_triton_module_imports_from_a_floor_above_it():
    assert triton_upward_imports() == []


def test_the_triton_check_sees_an_upward_import(tmp_path):
    """The test above can fail: the vocabulary importing the loader (inside a function too), and
    a source importing a use case, are caught; a use case importing a probe is not."""
    fake = tmp_path / "zeinspect" / "triton"
    for floor in ("model", "load", "sources", "app", "probes"):
        (fake / floor).mkdir(parents=True)
        (fake / floor / "__init__.py").write_text("")
    (fake / "model" / "kernel.py").write_text("def f():\n    from ..load.loader import Placeholder\n")
    (fake / "sources" / "cache.py").write_text("from ..app.library import Specialization\n")
    (fake / "app" / "library.py").write_text("from ..probes.audit import probe_triton\n")
    assert triton_upward_imports(fake.parent) == [
        "zeinspect/triton/model/kernel.py:2: zeinspect.triton.model.kernel imports zeinspect.triton.load.loader",
        "zeinspect/triton/sources/cache.py:1: zeinspect.triton.sources.cache imports zeinspect.triton.app.library"]


CAPTURE_MAY_IMPORT = ("zeinspect.triton.capture", "zeinspect.triton.offline", "zeinspect.triton.model")
"""What triton/capture/ may import of zeinspect: itself, the offline backend and driver, and
Triton's vocabulary (issue 60's rule).  It runs in the user's captured command."""

OFFLINE_STANDS_ON = ("zeinspect.hardware", "zeinspect.errors", "zeinspect.envvars")
"""The core modules the offline backend stands on: the device table the stand-in device answers
from, and the error types (with the variable that says whether to show a traceback).  They
import only each other and the standard library (tested below): with them, the captured
command loads nothing else of zeinspect."""


def capture_rule_breaks(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted((root / "triton" / "capture").rglob("*.py")):
        for line, target in imports_of(path, root):
            if not target.startswith(CAPTURE_MAY_IMPORT):
                found.append(f"{path.relative_to(root.parent)}:{line}: {target}")
    return found


def test_the_capture_imports_only_what_its_rule_allows():
    assert capture_rule_breaks() == []


def test_the_capture_rule_sees_a_build_module_and_a_core_layer(tmp_path):
    """The test above can fail: the capture importing Triton's build (inside a function), a core
    setting, or even the core's device table (which only the offline backend may import)."""
    fake = tmp_path / "zeinspect"
    (fake / "triton" / "capture").mkdir(parents=True)
    (fake / "triton" / "capture" / "record.py").write_text(
        "from ..offline.driver import OfflineDriver\nfrom ..model.argtypes import DTYPE_PREFIX\n\n"
        "def f():\n    from ..build.backend import compile_module\n    from ...settings import Settings\n"
        "    from ...hardware import DEVICES\n")
    assert capture_rule_breaks(fake) == ["zeinspect/triton/capture/record.py:5: zeinspect.triton.build.backend",
                                         "zeinspect/triton/capture/record.py:6: zeinspect.settings",
                                         "zeinspect/triton/capture/record.py:7: zeinspect.hardware"]


def test_what_the_offline_backend_stands_on_imports_nothing_else_of_zeinspect():
    for module in OFFLINE_STANDS_ON:
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        assert {target for _, target in imports_of(path)} <= set(OFFLINE_STANDS_ON), module


def loaded_beyond_the_capture_rule(modules: list[str]) -> list[str]:
    """Of the modules a process loaded, the zeinspect ones beyond the capture's rule and what
    the offline backend stands on (the packages that hold the allowed ones load with them)."""
    allowed_packages = {"zeinspect", "zeinspect.triton"}
    return sorted(m for m in modules if m.split(".")[0] == "zeinspect" and m not in allowed_packages
                  and not m.startswith(CAPTURE_MAY_IMPORT) and m not in OFFLINE_STANDS_ON)


def test_the_captured_command_loads_nothing_of_zeinspect_beyond_the_capture():
    """What the user's process really loads (every import, also those of the packages the
    capture's modules sit in): importing every capture/ module, and every module they import
    inside their functions (as the capture does later), loads no other module of zeinspect.
    tests/integration/triton/test_capture.py checks the same in a real captured command."""
    import subprocess
    import sys

    modules = sorted(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
                     for p in (PACKAGE / "triton" / "capture").rglob("*.py"))
    inside = sorted({target for p in (PACKAGE / "triton" / "capture").rglob("*.py") for _, target in imports_of(p)})
    code = ("import importlib, sys\n"
            f"for m in {[*modules, *inside]!r}:\n    importlib.import_module(m)\n"
            "print('\\n'.join(sorted(sys.modules)))")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent)
    assert loaded_beyond_the_capture_rule(got.stdout.split()) == []


def test_the_load_check_sees_a_core_layer():
    assert loaded_beyond_the_capture_rule(["zeinspect", "zeinspect.triton", "zeinspect.hardware",
                                           "zeinspect.triton.model.kernel", "zeinspect.settings", "zeinspect.model",
                                           "zeinspect.triton.build.backend", "json"]) == [
        "zeinspect.model", "zeinspect.settings", "zeinspect.triton.build.backend"]


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the zeinspect modules it imports (imports inside functions count); `from
    package import name` counts as importing the module `package.name` when that is one."""
    modules = {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
               for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for _, target in imports_of(path, root):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted.  A
    package's __init__ importing its own submodules is not a cycle with them unless one of
    them imports the package back for something other than a submodule."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    import sys

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_check_sees_a_cycle_inside_functions(tmp_path):
    fake = tmp_path / "zeinspect"
    (fake / "probes").mkdir(parents=True)
    (fake / "probes" / "__init__.py").write_text("")
    (fake / "probes" / "a.py").write_text("def f():\n    from .b import g\n")
    (fake / "probes" / "b.py").write_text("from .a import f\n")
    assert cycles(import_graph(fake)) == [["zeinspect.probes.a", "zeinspect.probes.b"]]


GENERATED_MODULES = {"_ze"}
"""Modules written at install time (native/ze_build.py's cffi module): a module, not a private name."""


def private_imports(root: Path = PACKAGE) -> list[str]:
    """`from zeinspect.x import _name` across modules (a module's private names are its own)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("zeinspect")):
                for alias in node.names:
                    if alias.name in GENERATED_MODULES:
                        continue
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {alias.name}")
    return found


def test_no_private_name_is_imported_across_modules():
    assert private_imports() == []


def test_the_private_import_check_sees_one(tmp_path):
    fake = tmp_path / "zeinspect"
    fake.mkdir()
    (fake / "a.py").write_text("def _helper():\n    pass\n")
    (fake / "b.py").write_text("def f():\n    from .a import _helper\n")
    assert private_imports(fake) == ["zeinspect/b.py:2: _helper"]


FRONT_DOOR_ONLY = ("inputs", "toolchain", "probes", "judge")


def front_door_bypasses(root: Path = PACKAGE) -> list[str]:
    """cli/ reaches the work only through app/ (and zeinspect.triton's own app): never the layers below."""
    found = []
    for path in sorted((root / "cli").rglob("*.py")):
        for line, target in imports_of(path, root):
            if target.split(".")[1:2] and target.split(".")[1] in FRONT_DOOR_ONLY:
                found.append(f"{path.relative_to(root.parent)}:{line}: {target}")
    return found


def test_the_cli_goes_through_app_only():
    assert front_door_bypasses() == []


def test_every_command_is_registered_by_the_module_the_lazy_group_names() -> None:
    """The CLI imports a family of commands when one of them runs (cli.common.LazyGroup): its
    table must name each command's module, and every command a module registers."""
    import importlib

    from zeinspect.cli.common import LazyGroup, cli

    for module in sorted(set(LazyGroup.COMMANDS.values())):
        importlib.import_module(f"zeinspect.cli.{module}")
    registered = {name: command.callback.__module__.rpartition(".")[2] for name, command in cli.commands.items()}
    assert registered == LazyGroup.COMMANDS


JUDGE_MAY_USE_OF_TOOLCHAIN = ("zeinspect.toolchain.targets",)
"""The judge's one piece of the toolchain layer: its vocabulary of targets (names, families)."""


def impure_judge_imports(root: Path = PACKAGE) -> list[str]:
    """judge/ is pure functions of reports: it never imports a probe (what compiles, reads a
    device or runs a kernel), nor a part of the toolchain other than its targets (no front end,
    runtime or compiler runner).  The searches that compile are use cases in app/."""
    found = []
    for path in sorted((root / "judge").rglob("*.py")):
        for line, target in imports_of(path, root):
            layer = target.split(".")[1:2]
            if layer == ["probes"] or (layer == ["toolchain"] and not target.startswith(JUDGE_MAY_USE_OF_TOOLCHAIN)):
                found.append(f"{path.relative_to(root.parent)}:{line}: {target}")
    return found


def test_the_judge_is_pure():
    assert impure_judge_imports() == []


def test_the_purity_check_sees_a_probe_and_a_compiler_runner(tmp_path):
    """The test above can fail: a judge importing a probe (inside a function too), or the front
    end, is caught; its vocabulary of targets is not."""
    fake = tmp_path / "zeinspect"
    (fake / "judge").mkdir(parents=True)
    (fake / "judge" / "__init__.py").write_text("")
    (fake / "judge" / "shapes.py").write_text("from ..toolchain.targets import TargetPlan\n\n"
                                               "def search():\n    from ..probes.aot import probe\n")
    (fake / "judge" / "fix.py").write_text("from ..toolchain.front_end import to_spirv\n")
    assert impure_judge_imports(fake) == ["zeinspect/judge/fix.py:1: zeinspect.toolchain.front_end",
                                          "zeinspect/judge/shapes.py:4: zeinspect.probes.aot"]


MOST_PARAMETERS = 8
"""No function takes more (self and cls aside), except click commands, whose parameters are
their options: a use case takes a request or a few grouped values (docs/contributing.md)."""


def _is_click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(ast.unparse(d).split("(")[0].rsplit(".", 1)[-1] in ("command", "group", "option", "argument")
               or "_options" in ast.unparse(d) for d in node.decorator_list)


def long_signatures(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.stem in GENERATED_MODULES:
            continue
        for node in ast.walk(parsed(path)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_click_command(node):
                continue
            a = node.args
            names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [p.arg for p in (a.vararg, a.kwarg) if p]
            count = len([n for n in names if n not in ("self", "cls")])
            if count > MOST_PARAMETERS:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.name} takes {count}")
    return found


def test_no_function_takes_more_than_eight_parameters():
    assert long_signatures() == []


def test_the_signature_check_sees_a_long_one_and_spares_a_click_command(tmp_path):
    fake = tmp_path / "zeinspect"
    fake.mkdir()
    (fake / "a.py").write_text("def f(a, b, c, d, e, f, g, h, *, i=1):\n    pass\n\n"
                               "class C:\n    def m(self, a, b, c, d, e, f, g, h):\n        pass\n\n"
                               "@cli.command()\n@click.option('--x')\ndef cmd(a, b, c, d, e, f, g, h, i, j):\n    pass\n")
    assert long_signatures(fake) == ["zeinspect/a.py:1: f takes 9"]


# What only some runs need, loaded when they ask for it (issue 62, "warm at the floor"): a
# profile's reader and join (msgspec among them) with --profile, the ratchet's rewrite with
# --update-ratchet; what only a compile needs (its threads, IGC's dumps, the front end, SPIR-V
# rewrites), what only a SYCL image needs (its descriptor and device requirements), and the
# occupancy rules that only a required work-group size asks, a package's archive readers, and
# the near names of a target that is none.  bench/startup.py measures what the rest costs.
AUDIT_LOADS_ON_DEMAND = ("zeinspect.judge.profile", "zeinspect.inputs.profile", "zeinspect.inputs.unitrace",
                         "zeinspect.judge.update", "msgspec", "concurrent.futures", "zeinspect.toolchain.shader_dump",
                         "zeinspect.toolchain.front_end", "zeinspect.toolchain.knowledge", "zeinspect.probes.modules",
                         "zeinspect.levers.spirv_rewrite", "zeinspect.inputs.sycl_image",
                         "zeinspect.toolchain.requirements", "zeinspect.occupancy", "zipfile", "tarfile", "difflib")


def test_an_audit_loads_no_profile_reader_and_no_ratchet_writer_until_asked():
    """The modules `zeinspect audit` imports to start and to print (the command's module, the
    use case, its writers) load none of AUDIT_LOADS_ON_DEMAND; asking for a profile loads it."""
    import subprocess
    import sys

    start = ("zeinspect.cli.gate", "zeinspect.app.audit", "zeinspect.formats.audit", "zeinspect.formats.text")
    code = ("import importlib, sys\n"
            f"for m in {start!r}:\n    importlib.import_module(m)\n"
            "print('\\n'.join(sorted(sys.modules)))\n"
            "from zeinspect.app.profile import profiled\n"
            "from zeinspect.settings import Settings\n"
            "try:\n    profiled(Settings(profile='/nonexistent.json'), [])\n"
            "except Exception:\n    pass\n"
            "print('--- after a profile was asked for')\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout
    before, after = got.split("--- after a profile was asked for")
    assert [m for m in AUDIT_LOADS_ON_DEMAND if m in before.split()] == []
    assert "zeinspect.inputs.profile" in after.split()  # the check can see a load
