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
import contextlib
import hashlib
import importlib
import importlib.util
import io
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ... import envvars
from ...errors import InputError
from ..model.placeholder import Placeholder
from ..offline.driver import OfflineDriver
from .module import LaunchBlocked, LoadedModule, LoadTimeout
from .statements import ModuleRun


def load_timeout() -> float:
    """Seconds a module may take to load ($ZEINSPECT_LOAD_TIMEOUT, 60 by default)."""
    return float(envvars.value("ZEINSPECT_LOAD_TIMEOUT"))
# -- the loader -------------------------------------------------------------------------------

class Loader:
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
            raise LoadTimeout()

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if time.monotonic() > self.deadline:
                raise LoadTimeout()
            return tracer

        main = threading.current_thread() is threading.main_thread()
        previous_trace = sys.gettrace()
        previous_alarm = None
        if main:  # an alarm also stops code that runs no Python lines (a sleep, a C loop)
            def on_alarm(signum: int, frame: Any) -> None:
                raise LoadTimeout()

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

    def import_for(self, module: ModuleRun) -> Callable[..., Any]:
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
        mod = ModuleRun(self, path.resolve(), name, package)
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
        raise LaunchBlocked()

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
    loader = Loader(p, own)
    name, package = module_name(p, loader.root, loader.top)
    module = ModuleRun(loader, p, name, package)
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
        except LoadTimeout:
            raise InputError(f"did not finish loading within {load_timeout():g} s (a loop at import time?); "
                             "$ZEINSPECT_LOAD_TIMEOUT sets the limit", path=path) from None
        finally:
            triton.runtime.driver.reset_active()
    for sibling in loader.own_modules.values():
        LOADED[sibling.__name__] = sibling
        sys.modules[sibling.__name__] = sibling
    return LoadedModule(path=path, namespace=module.ns, unbound=module.unbound)


def forget(*names: str | None) -> None:
    """Modules dropped from the memo of loaded modules (triton.build.backend) are not kept here either."""
    for name in names:
        if name:
            LOADED.pop(name, None)


def register_modules() -> None:
    sys.modules.update(LOADED)


def unregister_modules() -> None:
    for name in LOADED:
        sys.modules.pop(name, None)
