"""Load a Triton module as its author wrote it, without running its program code.

Tutorial-style modules import torch at the top, ask the driver for a device, build their
`@triton.autotune` configs in a helper that asks `triton.runtime.driver.active`, and end
in benchmarks, tests and prints.  What runs here (the module's own statements, in order):
  - imports; a package that is not installed (torch, intel_extension_for_pytorch, pytest)
    becomes a placeholder, so the load goes on unless a kernel really needs it;
  - function and class definitions, their decorators included (so `@triton.autotune`
    builds its configs as the module would);
  - assignments whose value only computes: literals, names, arithmetic, and calls of the
    module's own functions, of `triton` / `tl`, and of a few pure built-ins;
  - the bodies of `try` blocks, by the same rules.
Never run: expression statements (prints, benchmark calls), `if`/`for`/`while`/`with`
blocks (`if __name__ == "__main__":` among them), and assignments that call anything else
(`x = torch.randn(...)`).  While the module loads, `triton.runtime.driver.active` is an
offline Intel XPU driver that answers for the target being built (`OfflineDriver`).
A name that a kernel needs but that did not run is an error naming the file, the line and
the name.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

PURE_BUILTINS = {"int", "float", "bool", "str", "max", "min", "abs", "len", "range", "list", "tuple", "dict", "set",
                 "sorted", "sum", "round", "pow", "zip", "enumerate", "getattr", "isinstance", "divmod"}
COMPUTING_ROOTS = {"triton", "tl", "math"}


class Placeholder(types.ModuleType):
    """A package that is not installed: any attribute or call gives another placeholder."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self.__name__}.{name}")

    def __call__(self, *_args, **_kwargs):
        return Placeholder(f"{self.__name__}()")

    def __repr__(self) -> str:
        return f"<{self.__name__}: not installed>"


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 - __import__'s own names
    try:
        return importlib.__import__(name, globals, locals, fromlist, level)
    except ModuleNotFoundError as exc:
        if level or (exc.name and not name.startswith(exc.name.split(".")[0])):
            raise  # a relative import, or a package that is installed but broken
        return Placeholder(name if fromlist else name.split(".")[0])


class OfflineDriver:
    """`triton.runtime.driver.active` while a module loads: an Intel XPU with no device."""

    def __init__(self, target):
        self.target = target

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def get_active_torch_device(self):
        return Placeholder("torch.device('xpu')")

    def get_device_interface(self):
        return Placeholder("torch.xpu")

    @staticmethod
    def is_active():
        return True

    def get_benchmarker(self):
        return Placeholder("triton.testing.do_bench")

    def __getattr__(self, name: str):
        return Placeholder(f"triton.runtime.driver.active.{name}")


@dataclass
class LoadedModule:
    path: str
    namespace: dict
    skipped: dict[str, int] = field(default_factory=dict)
    """Names whose assignments did not run, with their lines."""

    def kernel(self, name: str):
        """The object `name` is (a JITFunction, or the Autotuner/Heuristics wrapping one)."""
        obj = self.namespace.get(name)
        if obj is None:
            known = [k for k, v in self.namespace.items() if _jit_of(v) is not None]
            why = f" (its assignment on line {self.skipped[name]} does not run)" if name in self.skipped else ""
            raise InputError(f"has no @triton.jit kernel {name!r}{why} (kernels: {', '.join(known) or 'none'})",
                             path=self.path)
        if _jit_of(obj) is None:
            raise InputError(f"{name!r} is not a @triton.jit kernel", path=self.path)
        return obj


def _jit_of(obj):
    """The JITFunction inside `obj` (itself, or under autotune/heuristics wrappers), or None."""
    for _ in range(8):
        if hasattr(obj, "arg_names") and hasattr(obj, "src"):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            return None
    return None


def jit_function(obj):
    return _jit_of(obj)


def _computes(node: ast.AST, defined: set[str]) -> bool:
    """Whether evaluating `node` only computes (see the module docstring)."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if isinstance(sub, ast.Call):
            func = sub.func
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(func, ast.Name) and (func.id in defined or func.id in PURE_BUILTINS):
                continue
            if isinstance(root, ast.Name) and root.id in COMPUTING_ROOTS:
                continue
            return False
    return True


def _names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _keep(body: list[ast.stmt], defined: set[str], skipped: dict[str, int]) -> list[ast.stmt]:
    kept: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            kept.append(stmt)
            defined.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kept.append(stmt)
            defined.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            if value is None or _computes(value, defined):
                kept.append(stmt)
                for t in targets:
                    defined.update(_names(t))
            else:
                for t in targets:
                    for name in _names(t):
                        skipped.setdefault(name, stmt.lineno)
        elif isinstance(stmt, ast.Try):
            kept += _keep(stmt.body, defined, skipped)
        elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            for sub in ast.walk(stmt):
                if isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                    skipped.setdefault(sub.name, sub.lineno)
                elif isinstance(sub, ast.Assign):
                    for t in sub.targets:
                        for name in _names(t):
                            skipped.setdefault(name, sub.lineno)
    return kept


def load(path: str, target) -> LoadedModule:
    """The module at `path`, loaded for `target` (a triton GPUTarget) as the docstring says."""
    import triton

    p = Path(path)
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read: {exc}"[:200], path=path) from None
    try:
        tree = ast.parse(source, filename=str(p))
    except SyntaxError as exc:
        raise InputError(f"line {exc.lineno}: not valid Python: {exc.msg}", path=path) from None
    skipped: dict[str, int] = {}
    tree.body = _keep(tree.body, set(), skipped)
    name = f"zeinspect_triton_{hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]}"
    module = types.ModuleType(name)
    module.__file__ = str(p.resolve())
    module.__dict__["__builtins__"] = dict(vars(builtins), __import__=_guarded_import)
    LOADED[name] = module
    sys.modules[name] = module  # Triton's JIT reads the kernel's source through its module (see register_modules)
    triton.runtime.driver.set_active(OfflineDriver(target))
    try:
        exec(compile(tree, str(p.resolve()), "exec"), module.__dict__)  # noqa: S102 - filtered as documented
    except NameError as exc:
        missing = getattr(exc, "name", None) or str(exc)
        where = f" (line {skipped[missing]} does not run)" if missing in skipped else ""
        raise InputError(f"{missing!r} is needed but not defined{where}", path=path) from None
    except Exception as exc:  # noqa: BLE001 - the author's definitions failed: one line with the line number
        line = next((f.lineno for f in reversed(_frames(exc)) if f.filename == str(p.resolve())), None)
        raise InputError(f"line {line}: {exc.__class__.__name__}: {' '.join(str(exc).split())}"[:300], path=path) \
            from None
    finally:
        triton.runtime.driver.reset_active()
    return LoadedModule(path=path, namespace=module.__dict__, skipped=skipped)


LOADED: dict[str, types.ModuleType] = {}
"""Every module loaded, by its private name: in sys.modules only while Triton runs (backend.offline)."""


def register_modules() -> None:
    sys.modules.update(LOADED)


def unregister_modules() -> None:
    for name in LOADED:
        sys.modules.pop(name, None)


def _frames(exc: BaseException):
    import traceback

    return traceback.extract_tb(exc.__traceback__)
