"""Load a Triton module as its author wrote it, without running its program code.

Real modules (Triton's tutorials, kernel libraries) import torch and their own package at the
top, ask the driver for the device, pick autotune configs per architecture, wrap kernels in
`torch.autograd.Function` classes and their own decorators, compute tensors and run tests,
benchmarks and prints at the bottom.  The loader runs the module's top-level statements one
at a time, in order:
  - imports, definitions (their decorators included, so `@triton.autotune` builds its configs
    as the module would) and assignments whose value only computes: calls of the module's own
    functions and classes, of Triton (`triton`, `tl`, names imported from them), of a few
    pure built-ins, `math` and the environment (`os.getenv`);
  - an `if` whose condition only computes: its branch, by the same rules (`if __name__ ==
    "__main__":` is false: the module does not run as a program);
  - a `try` as a whole, with imports of what is not installed failing as they would
    (`except ImportError:` takes the path it takes where the package is missing).
Never run: expression statements (prints, tests, benchmark runs), loops and `with` blocks at
the top level, and assignments that call anything else (`x = torch.rand(...)`).  A statement
that is not run, or that fails, leaves its names unbound, with the reason; that is an error
only where a kernel, a config or a decorator the kernel needs uses one of them, and then it
is one line naming the file, the line, the name and the statement that did not run.

Packages that are not installed become placeholders that behave as a module would: any
attribute, call, index or iteration (empty) works, a placeholder can be subclassed (the
class body is kept and never called), used as a context manager, and as a decorator that
hands the function back; it is false in a condition (what it would say is unknown here).
Imports of the module's own package (`from mylib.ops.utils import f`, relative imports)
resolve from the package root the file sits in, and those modules load by the same rules.
While a module loads, `triton.runtime.driver.active` is an offline Intel XPU driver that
answers for the target being built, prints go nowhere, no kernel can be launched, and the
load has a time limit ($ZEINSPECT_LOAD_TIMEOUT seconds, 60 by default).
"""

from __future__ import annotations

# Placeholders, the offline driver and the hooks take the arguments their protocols pass.
# ruff: noqa: ARG001, ARG002
import ast
import builtins
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import io
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ... import envvars
from ...errors import InputError


def load_timeout() -> float:
    """Seconds a module may take to load ($ZEINSPECT_LOAD_TIMEOUT, 60 by default)."""
    return float(envvars.value("ZEINSPECT_LOAD_TIMEOUT"))
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


# -- placeholders -----------------------------------------------------------------------------

class Placeholder(types.ModuleType):
    """A package that is not installed (see the module docstring for how it behaves)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])
                                              or hasattr(args[0], "arg_names")):
            return args[0]  # a decorator hands the function back
        return Placeholder(f"{self.__name__}()")

    def __getitem__(self, key: Any) -> Placeholder:
        return Placeholder(f"{self.__name__}[]")

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __enter__(self) -> Placeholder:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def __mro_entries__(self, bases: tuple) -> tuple[type, ...]:
        return (_placeholder_class(self.__name__),)

    def __instancecheck__(self, obj: object) -> bool:
        return False

    def __subclasscheck__(self, cls: type) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<{self.__name__}: not installed>"


def _result(self: Placeholder, *args: Any) -> Placeholder:
    return Placeholder(f"{self.__name__}(...)")


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
            "rshift"):
    setattr(Placeholder, f"__{_op}__", _result)
    setattr(Placeholder, f"__r{_op}__", _result)
for _op in ("neg", "pos", "invert"):
    setattr(Placeholder, f"__{_op}__", _result)


class _PlaceholderMeta(type):
    """The metaclass of a class a placeholder stands for: its attributes are placeholders too."""

    def __getattr__(cls, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{cls.__module__}.{cls.__qualname__}.{name}")


def _placeholder_class(name: str) -> type:
    module, _, qualname = name.rpartition(".")
    return _PlaceholderMeta(qualname or name, (), {"__module__": module or name, "__qualname__": qualname or name})


# -- the offline driver -----------------------------------------------------------------------

class OfflineDriver:
    """`triton.runtime.driver.active` while a module loads: an Intel XPU with no device, whose
    answers are the target's (`device_properties`, see triton.backend.gpu_target)."""

    def __init__(self, target: Any, device_properties: dict | None = None) -> None:
        self.target = target
        self.utils = _OfflineUtils(device_properties or {})

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: Any = None) -> Placeholder:
        return Placeholder("torch.xpu.current_stream()")

    def get_active_torch_device(self) -> Placeholder:
        return Placeholder("torch.device('xpu')")

    def get_device_interface(self) -> Placeholder:
        return Placeholder("torch.xpu")

    @staticmethod
    def is_active() -> bool:
        return True

    def get_benchmarker(self) -> Placeholder:
        return Placeholder("triton.testing.do_bench")

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"triton.runtime.driver.active.{name}")


class _OfflineUtils:
    """`driver.active.utils`: what Triton-XPU's launcher answers (backends/intel/driver.c,
    get_device_properties: max_shared_mem, multiprocessor_count, sm_clock_rate, mem_clock_rate,
    mem_bus_width, max_work_group_size, sub_group_sizes), for the target being built."""

    def __init__(self, properties: dict) -> None:
        self.properties = properties

    def get_device_properties(self, device: Any = 0) -> dict:
        return dict(self.properties)

    def get_current_device(self) -> int:
        return 0

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"triton.runtime.driver.active.utils.{name}")


# -- what did not run -------------------------------------------------------------------------

@dataclass(frozen=True)
class Unbound:
    """A name the module defines in a statement that did not run (or failed)."""

    name: str
    line: int
    statement: str
    """The statement's first line, as written (shortened)."""
    why: str

    def describe(self) -> str:
        return f"line {self.line} (`{self.statement}`) did not run: {self.why}"


class _LoadTimeout(Exception):
    pass


class _LaunchBlocked(Exception):
    pass


@dataclass
class LoadedModule:
    path: str
    namespace: dict
    unbound: dict[str, Unbound] = field(default_factory=dict)

    @property
    def skipped(self) -> dict[str, int]:
        return {name: u.line for name, u in self.unbound.items()}

    def kernel(self, name: str) -> Any:
        """The object `name` is (a JITFunction, or the Autotuner/Heuristics/wrapper around one)."""
        obj = self.namespace.get(name)
        if obj is None:
            if name in self.unbound:
                raise InputError(f"{name!r} is not defined: {self.unbound[name].describe()}", path=self.path)
            known = [k for k, _ in self.kernels()]
            raise InputError(f"has no @triton.jit kernel {name!r} (kernels: {', '.join(known) or 'none'})",
                             path=self.path)
        if _jit_of(obj) is None:
            raise InputError(f"{name!r} is not a @triton.jit kernel", path=self.path)
        return obj

    def kernels(self) -> list[tuple[str, Any]]:
        """(name, object) of every @triton.jit kernel the module defines, in the module's order."""
        here = str(Path(self.path).resolve())
        return [(k, v) for k, v in self.namespace.items()
                if (jit := _jit_of(v)) is not None and getattr(getattr(jit, "fn", None), "__code__", None) is not None
                and jit.fn.__code__.co_filename == here]

    def unbound_needed(self, message: str) -> str | None:
        """For a compile error that says a global is not defined: which statement did not run."""
        for name, u in self.unbound.items():
            if f"'{name}' is not defined" in message or f"{name} is not defined" in message:
                return f"{name!r} is needed but not defined: {u.describe()}"
        return None


def _jit_of(obj: Any) -> Any:
    """The JITFunction inside `obj` (itself, or under autotune/heuristics/other wrappers), or None."""
    for _ in range(8):
        if hasattr(obj, "arg_names") and hasattr(obj, "src"):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            return None
    return None


def jit_function(obj: Any) -> Any:
    return _jit_of(obj)


# -- deciding what runs -----------------------------------------------------------------------

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


class _Module:
    """One module being loaded: its namespace, what did not run, and the package it is in."""

    def __init__(self, loader: _Loader, path: Path, name: str, package: str) -> None:
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
        except _LoadTimeout:
            raise
        except NameError as exc:
            missing = getattr(exc, "name", None)
            origin = self.unbound.get(missing) if missing else None
            why = (f"it needs {missing!r}, which is not defined: {origin.describe()}" if origin
                   else f"it raised {_one_line(exc)}")
            self.unbind(stmt, why)
        except _LaunchBlocked:
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


def _filtered_try(stmt: ast.Try, module: _Module) -> ast.Try:
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


# -- the loader -------------------------------------------------------------------------------

class _Loader:
    """One load: the module and the modules of its own package it imports."""

    def __init__(self, path: Path, own: dict[str, types.ModuleType] | None = None) -> None:
        self.path = path
        self.root, self.top = package_root(path)
        self.own_modules: dict[str, types.ModuleType] = own if own is not None else {}
        self.own_names: set[str] = {m.__name__ for m in self.own_modules.values()}
        self.deadline = time.monotonic() + load_timeout()
        self._strict = threading.local()

    def private_name(self, path: Path) -> str:
        return f"zeinspect_triton_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"

    @contextlib.contextmanager
    def strict_imports(self, on: bool) -> Iterator[None]:
        before = getattr(self._strict, "on", False)
        self._strict.on = on
        try:
            yield
        finally:
            self._strict.on = before

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """The time limit (a trace function, and SIGALRM in the main thread for code that does
        not trace), no kernel launches, and prints to nowhere."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise _LoadTimeout()

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if time.monotonic() > self.deadline:
                raise _LoadTimeout()
            return tracer

        main = threading.current_thread() is threading.main_thread()
        previous_trace = sys.gettrace()
        previous_alarm = None
        if main:  # an alarm also stops code that runs no Python lines (a sleep, a C loop)
            def on_alarm(signum: int, frame: Any) -> None:
                raise _LoadTimeout()

            previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.01))
        else:  # other threads cannot take a signal: check the clock on every line
            sys.settrace(tracer)
        try:
            with _no_launches(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield
        finally:
            if main:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous_alarm)
            else:
                sys.settrace(previous_trace)

    def import_for(self, module: _Module) -> Callable[..., Any]:
        def guarded_import(name: str, globals: dict | None = None, locals: dict | None = None,  # noqa: A002
                           fromlist: tuple = (), level: int = 0) -> Any:
            package = (globals or {}).get("__package__") or ""
            absolute = importlib.util.resolve_name("." * level + name, package) if level else name
            if self.is_own(absolute):
                return self.import_own(absolute, fromlist)
            try:
                return importlib.__import__(name, globals, locals, fromlist, level)
            except ModuleNotFoundError as exc:
                if getattr(self._strict, "on", False) or level:
                    raise
                if exc.name and not absolute.startswith(exc.name.split(".")[0]):
                    raise  # an installed package that is broken: not a missing one
                return Placeholder(absolute if fromlist else absolute.split(".")[0])

        return guarded_import

    def is_own(self, name: str) -> bool:
        top = name.split(".")[0]
        if self.top is not None:
            return top == self.top
        return (self.root / f"{top}.py").is_file() or (self.root / top / "__init__.py").is_file()

    def _file_of(self, name: str) -> tuple[Path, bool] | None:
        where = self.root.joinpath(*name.split("."))
        if (where / "__init__.py").is_file():
            return where / "__init__.py", True
        if where.with_suffix(".py").is_file():
            return where.with_suffix(".py"), False
        return None

    def load_own(self, name: str) -> types.ModuleType:
        if name in self.own_modules:
            return self.own_modules[name]
        found = self._file_of(name)
        if found is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        path, is_package = found
        package = name if is_package else name.rpartition(".")[0]
        mod = _Module(self, path.resolve(), name, package)
        if is_package:
            mod.module.__path__ = [str(path.parent)]  # type: ignore[attr-defined]
        self.own_modules[name] = mod.module
        self.own_names.add(mod.module.__name__)
        if "." in name:
            parent = self.load_own(name.rpartition(".")[0])
            setattr(parent, name.rpartition(".")[2], mod.module)
        mod.run(_parse(path).body)
        mod.module.__dict__["__zeinspect_unbound__"] = mod.unbound
        return mod.module

    def import_own(self, name: str, fromlist: tuple) -> types.ModuleType:
        leaf = self.load_own(name)
        for item in fromlist or ():
            if item != "*" and not hasattr(leaf, item) and self._file_of(f"{name}.{item}") is not None:
                self.load_own(f"{name}.{item}")
        return leaf if fromlist else self.load_own(name.split(".")[0])


def package_root(path: Path) -> tuple[Path, str | None]:
    """(the folder imports of the module's own package resolve from, its top package or None)."""
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return folder, None
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent, folder.name


def module_name(path: Path, root: Path, top: str | None) -> tuple[str, str]:
    """(the dotted name the file has in its package, that package's name)."""
    if top is None:
        return path.stem, ""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _parse(path: Path) -> ast.Module:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read: {exc}"[:200], path=str(path)) from None
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise InputError(f"line {exc.lineno}: not valid Python: {exc.msg}", path=str(path)) from None
    except ValueError as exc:  # e.g. null bytes: not a Python source at all
        raise InputError(f"is not a Python source ({exc})"[:200], path=str(path)) from None


@contextlib.contextmanager
def _no_launches() -> Iterator[None]:
    """While a module loads, launching a kernel raises instead of compiling and running it."""
    from triton.runtime import autotuner, jit

    def blocked(*args: Any, **kwargs: Any) -> Any:
        raise _LaunchBlocked()

    saved = [(cls, cls.run) for cls in (jit.JITFunction, autotuner.Autotuner, autotuner.Heuristics)]
    for cls, _ in saved:
        cls.run = blocked  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, run in saved:
            cls.run = run  # type: ignore[method-assign]


LOADED: dict[str, types.ModuleType] = {}
"""Every module loaded, by its private name: in sys.modules only while Triton runs (backend.offline)."""
_LOCK = threading.Lock()


def load(path: str, target: Any, device_properties: dict | None = None,
         own: dict[str, types.ModuleType] | None = None) -> LoadedModule:
    """The module at `path`, loaded for `target` (a triton GPUTarget) as the docstring says.
    `own` holds the modules of its package already loaded for the same target (a package's
    modules share their helpers, as one process would)."""
    import triton

    p = Path(path).resolve()
    tree = _parse(p)
    loader = _Loader(p, own)
    name, package = module_name(p, loader.root, loader.top)
    module = _Module(loader, p, name, package)
    LOADED[module.module.__name__] = module.module
    sys.modules[module.module.__name__] = module.module  # Triton reads a kernel's source through its module
    if loader.top is not None:
        if name in loader.own_modules:  # a module a sibling imported first: load it afresh, as the one asked
            del loader.own_modules[name]
        loader.own_modules[name] = module.module
        loader.own_names.add(module.module.__name__)
    with _LOCK:  # one load at a time: the active driver and the launch guard are the process's
        triton.runtime.driver.set_active(OfflineDriver(target, device_properties))
        try:
            module.run(tree.body)
        except _LoadTimeout:
            raise InputError(f"did not finish loading within {load_timeout():g} s (a loop at import time?); "
                             "$ZEINSPECT_LOAD_TIMEOUT sets the limit", path=path) from None
        finally:
            triton.runtime.driver.reset_active()
    for sibling in loader.own_modules.values():
        LOADED[sibling.__name__] = sibling
        sys.modules[sibling.__name__] = sibling
    return LoadedModule(path=path, namespace=module.ns, unbound=module.unbound)


def forget(*names: str | None) -> None:
    """Modules dropped from the memo of loaded modules (triton.backend) are not kept here either."""
    for name in names:
        if name:
            LOADED.pop(name, None)


def register_modules() -> None:
    sys.modules.update(LOADED)


def unregister_modules() -> None:
    for name in LOADED:
        sys.modules.pop(name, None)
