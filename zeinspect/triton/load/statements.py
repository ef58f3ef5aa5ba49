"""Deciding what of a module runs when it loads (the rules of triton.load.loader's docstring):
imports, definitions, assignments and conditions that only compute run; calls of anything else,
expression statements, loops and `with` blocks at the top level do not, and each name they would
have bound is kept with the reason.
"""

from __future__ import annotations

# The import hook takes the arguments `__import__` is passed.
# ruff: noqa: ARG001, ARG002
import ast
import builtins
import inspect
import types
from pathlib import Path
from typing import Any

from ..model.placeholder import Placeholder
from .module import LaunchBlocked, LoadTimeout, Unbound

PURE_BUILTINS = {"int", "float", "bool", "str", "max", "min", "abs", "len", "range", "list", "tuple", "dict", "set",
                 "sorted", "sum", "round", "pow", "zip", "enumerate", "getattr", "isinstance", "divmod", "filter",
                 "map", "any", "all", "reversed", "hasattr", "frozenset", "type", "iter", "next", "repr", "format",
                 "staticmethod", "classmethod", "property", "super", "object", "callable", "id", "hash", "slice"}
COMPUTING_MODULES = ("triton", "math", "functools", "itertools", "operator", "dataclasses", "enum", "typing",
                     "collections", "copy")
"""Modules whose calls only compute (a name imported from one of them is as good as the module)."""
ENVIRONMENT = {("os", "getenv"), ("os", "environ"), ("os", "path")}
DATA = (int, float, complex, str, bytes, bool, list, tuple, dict, set, frozenset, range, type(None))
"""Values whose methods only compute (`configs.copy()`, `"a,b".split(",")`)."""


def _source_line(source: list[str], node: ast.stmt) -> str:
    text = source[node.lineno - 1].strip() if 0 < node.lineno <= len(source) else ""
    return text if len(text) <= 80 else text[:77] + "..."


def _bound_names(node: ast.AST) -> list[str]:
    """Names a statement binds in the module (assignment targets, definitions, imports), through
    its nested blocks but not into the bodies of functions, classes, lambdas or comprehensions."""
    names: list[str] = []

    def visit(sub: ast.AST) -> None:
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(sub.name)
            return
        if isinstance(sub, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.append(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names.extend((a.asname or a.name).split(".")[0] for a in sub.names if a.name != "*")
        for child in ast.iter_child_nodes(sub):
            visit(child)

    visit(node)
    return list(dict.fromkeys(names))


def _root(func: ast.expr) -> tuple[ast.expr, list[str]]:
    attrs: list[str] = []
    while isinstance(func, ast.Attribute):
        attrs.insert(0, func.attr)
        func = func.value
    while isinstance(func, (ast.Call, ast.Subscript)):
        inner = func.func if isinstance(func, ast.Call) else func.value
        func, more = _root(inner)
        attrs = more + attrs
    return func, attrs


class ModuleRun:
    """One module being loaded: its namespace, what did not run, and the package it is in."""

    def __init__(self, loader: Any, path: Path, name: str, package: str) -> None:
        """`loader`: the load it is part of (triton.load.loader.Loader: its names, its import hook)."""
        self.loader = loader
        self.path = path
        self.source = path.read_text(encoding="utf-8", errors="replace").splitlines()
        self.module = types.ModuleType(loader.private_name(path))
        self.module.__file__ = str(path)
        self.module.__package__ = package
        self.real_name = name
        self.ns = self.module.__dict__
        self.ns["__builtins__"] = dict(vars(builtins), __import__=loader.import_for(self))
        self.unbound: dict[str, Unbound] = {}

    # A call computes when what it calls is the module's own, Triton's, a pure built-in, math or
    # the environment; anything else (an installed package, a placeholder) is program code.
    def _computing_callee(self, func: ast.expr) -> bool:
        root, attrs = _root(func)
        if isinstance(root, (ast.Lambda, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.JoinedStr)):
            return True
        if not isinstance(root, ast.Name):
            return False
        name = root.id
        if name not in self.ns:
            return name in PURE_BUILTINS and not attrs
        value = self.ns[name]
        if isinstance(value, Placeholder):
            return False
        if isinstance(value, DATA):
            return True
        if isinstance(value, types.ModuleType):
            module = value.__name__
            if module == "os":
                return bool(attrs) and ("os", attrs[0]) in ENVIRONMENT
            return module.split(".")[0] in COMPUTING_MODULES or value in self.loader.own_modules.values()
        owner = getattr(value, "__module__", None) or ""
        if owner.split(".")[0] in COMPUTING_MODULES:
            return True
        return owner in self.loader.own_names or (inspect.isfunction(value) or inspect.isclass(value)) and \
            getattr(value, "__module__", None) == self.module.__name__

    def program_call(self, node: ast.AST) -> str | None:
        """The first call in `node` that is program code, as written; None when all compute."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Await, ast.Yield, ast.YieldFrom)):
                return "a suspension"
            if isinstance(sub, ast.Call) and not self._computing_callee(sub.func):
                return ast.unparse(sub.func)[:60]
        return None

    def unbind(self, node: ast.stmt, why: str) -> None:
        for name in _bound_names(node):
            self.ns.pop(name, None)
            self.unbound.setdefault(name, Unbound(name, node.lineno, _source_line(self.source, node), why))

    def run(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._exec(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            called = self.program_call(value) if value is not None else None
            if called is not None:
                self.unbind(stmt, f"it runs program code (calls {called})")
            else:
                self._exec(stmt)
        elif isinstance(stmt, ast.If):
            self._if(stmt)
        elif isinstance(stmt, ast.Try):
            with self.loader.strict_imports(_catches_import_errors(stmt)):
                self._exec(_filtered_try(stmt, self))
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Match)):
            self.unbind(stmt, "a loop or `with` block at the top level is program code")
        # Expression statements (prints, tests, benchmarks), assertions, `del`, `raise`: not run.

    def _if(self, stmt: ast.If) -> None:
        called = self.program_call(stmt.test)
        if called is not None:
            self.unbind(stmt, f"its condition runs program code (calls {called})")
            return
        try:
            taken = bool(self._eval(stmt.test))
        except Exception as exc:  # noqa: BLE001 - the author's condition failed here: its names are unbound
            self.unbind(stmt, f"its condition raised {_one_line(exc)}")
            return
        self.run(stmt.body if taken else stmt.orelse)

    def _eval(self, expr: ast.expr) -> Any:
        code = compile(ast.Expression(expr), str(self.path), "eval")
        with self.loader.guard():
            return eval(code, self.ns)  # noqa: S307 - the module's own condition, checked by program_call

    def _exec(self, stmt: ast.stmt) -> None:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), str(self.path), "exec")
        try:
            with self.loader.guard():
                exec(code, self.ns)  # noqa: S102 - one statement, filtered as the module docstring says
        except LoadTimeout:
            raise
        except NameError as exc:
            missing = getattr(exc, "name", None)
            origin = self.unbound.get(missing) if missing else None
            why = (f"it needs {missing!r}, which is not defined: {origin.describe()}" if origin
                   else f"it raised {_one_line(exc)}")
            self.unbind(stmt, why)
        except LaunchBlocked:
            self.unbind(stmt, "it launches a kernel (program code)")
        except Exception as exc:  # noqa: BLE001 - the author's statement failed here: its names are unbound
            self.unbind(stmt, f"it raised {_one_line(exc)}")


def _one_line(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {' '.join(str(exc).split())}"[:200]


def _catches_import_errors(stmt: ast.Try) -> bool:
    for handler in stmt.handlers:
        names = [handler.type] if not isinstance(handler.type, ast.Tuple) else list(handler.type.elts)
        if handler.type is None or any(isinstance(n, ast.Name) and n.id in
                                       ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
                                       for n in names):
            return True
    return False


def _filtered_try(stmt: ast.Try, module: ModuleRun) -> ast.Try:
    """The `try` with only what runs in each of its blocks (the same rules, decided statically)."""
    runs = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass, ast.Raise,
            ast.Try)

    def keep(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = [s for s in body if isinstance(s, runs)
                               or (isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and
                                   (s.value is None or module.program_call(s.value) is None))]
        return out or [ast.Pass()]

    handlers = [ast.ExceptHandler(type=h.type, name=h.name, body=keep(h.body)) for h in stmt.handlers]
    tree = ast.Try(body=keep(stmt.body), handlers=handlers, orelse=keep(stmt.orelse) if stmt.orelse else [],
                   finalbody=keep(stmt.finalbody) if stmt.finalbody else [])
    return ast.fix_missing_locations(ast.copy_location(tree, stmt))
