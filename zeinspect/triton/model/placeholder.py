"""The one permissive stand-in: a package that is not installed, a device that is not there.

It behaves as a module would: any attribute, call, index or iteration (empty) works, it can be
subclassed (the class body is kept and never called), used as a context manager, and as a
decorator that hands the function back; it is false in a condition (what it would say is
unknown here).  The static loader (triton.load.loader) gives one for each package that is not
installed, the offline driver (triton.offline.driver) for what only a device could answer, and
the fake torch (triton.load.fake_torch) for everything torch offers beyond shapes; there it
also converts to 0 and compares (`Anything`), as host code that sizes a launch asks.
"""

from __future__ import annotations

# Placeholders take the arguments their protocols pass.
# ruff: noqa: ARG001, ARG002
import inspect
import types
from collections.abc import Iterator
from typing import Any, Literal


class Placeholder(types.ModuleType):
    """A package that is not installed (see the module docstring for how it behaves)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(self)(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])
                                              or hasattr(args[0], "arg_names")):
            return args[0]  # a decorator hands the function back
        return type(self)(f"{self.__name__}()")

    def __getitem__(self, key: Any) -> Placeholder:
        return type(self)(f"{self.__name__}[]")

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
    return type(self)(f"{self.__name__}(...)")


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


class Anything(Placeholder):
    """A value of which nothing is known (the fake torch's): a placeholder that also converts to
    0 and compares, so host code that sizes a launch from it still reaches the launch."""

    def __init__(self, name: str = "torch.?") -> None:
        super().__init__(name)

    def __int__(self) -> int:
        return 0

    def __index__(self) -> int:
        return 0

    def __float__(self) -> float:
        return 0.0


for _op in ("lt", "le", "gt", "ge"):
    setattr(Anything, f"__{_op}__", _result)
