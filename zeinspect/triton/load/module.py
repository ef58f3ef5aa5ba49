"""What a load of a Triton module gives (its namespace, and each name a statement that did not run
would have bound, with why), and what stops a load (its time limit, a kernel launch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError


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


class LoadTimeout(Exception):
    pass


class LaunchBlocked(Exception):
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
