"""What a lever is, what a shape is, and the registries that hold them.

A lever is one setting of how a kernel is built that can make its scratch go away.  It owns
everything about that setting, so a new lever is one definition registered in one place:
  - its name (the key in a shape), the value that leaves the build alone, and how values are
    read from the command line and from `ratchet/shapes.yaml` (`parse`, `dump`);
  - how it changes a build (`how`: a SPIR-V rewrite, a build option, a Triton option, a TTGIR
    pass), with the function that does it (`build_options` or `rewrite`; Triton's in
    zeinspect.triton);
  - how the value a module is written with is read from it (`written`);
  - the settings a shape search tries, their cost when shapes tie, whether a setting can
    change what the kernel computes, and how an author writes it in source (`spelling`);
  - how the compiler's answer is recognised: a setting it refuses (`unsupported_by`: Xe2
    has no sub-group size 8) or builds without honouring (`ignored_by`: Xe-LP has no
    256-register mode).

A shape is a mapping from lever name to value, validated by its registry; a lever a shape
does not name takes its default.  The shape search, the fix record, the gate round trip and
the command-line options all iterate over a registry, never over special cases.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

if TYPE_CHECKING:
    from ..inputs.spirv import Module
    from ..model import Compiler, KernelReport


class How(enum.Enum):
    """How a lever changes a build."""

    SPIRV_REWRITE = "SPIR-V rewrite"
    BUILD_OPTION = "build option"
    TRITON_OPTION = "Triton option"
    TTGIR_PASS = "TTGIR pass"


@dataclass(frozen=True)
class BuildOptions:
    """What a build-option lever adds to a compile: -options, -internal_options, and a note."""

    options: str = ""
    internal_options: str = ""
    note: str | None = None


@dataclass(frozen=True)
class CliOption:
    """How a lever appears on the command line (a module lever's on `kernel`, `inspect` and
    `explain`; a Triton lever's on `triton`)."""

    flag: str
    choices: tuple[str, ...]
    help: str
    default: str | None = None
    switch: bool = False
    """An option without a value: given, the lever takes True."""


def _same(value: Any) -> Any:
    return value


def _never(value: Any, report: KernelReport) -> str | None:  # noqa: ARG001 - a lever's default answer
    return None


@dataclass(frozen=True)
class Lever:
    name: str
    """Its key in a shape (`sub_group`, `grf`, `stage`, `num_warps`, ...)."""
    how: How
    default: Any
    """The value that leaves the build as it is (the kernel as written, or the compiler's default)."""
    settings: Callable[[Any], tuple]
    """The settings a search tries, given the one the kernel is written with."""
    cost: Callable[[Any, Any], int]
    """How far a setting departs from the written one, for choosing among equally good shapes:
    0 keeps the kernel as written (or leaves the choice to the compiler)."""
    describe: Callable[[Any], str]
    """The value in words, as shape descriptions print it."""
    tie_break_last: bool = False
    """Register-file levers: their cost only decides once every other lever's is equal."""
    changes_semantics: bool = False
    """A setting other than the written one can change results (sub-group operations)."""
    spelling: Callable[[Any, Any], str | None] = lambda value, written: None
    """How the author writes the setting in source (None: nothing to write)."""
    ignored_by: Callable[[Any, KernelReport], str | None] = _never
    """Why a target built the kernel without honouring the setting, or None."""
    unsupported_by: Callable[[Any, KernelReport], str | None] = _never
    """Why a target refused the setting (the compiler's own words recognised), or None."""
    parse: Callable[[Any], Any] = _same
    """A value from the command line or a shapes file, checked (ValueError when it is not one)."""
    dump: Callable[[Any], Any] = _same
    """The value as JSON and YAML hold it."""
    build_options: Callable[[Compiler, Any], BuildOptions] | None = None
    """How.BUILD_OPTION: the options that select the value on this compiler."""
    rewrite: Callable[[bytes, str, Any], tuple[bytes, str]] | None = None
    """How.SPIRV_REWRITE: (module, kernel, value) -> (module rewritten, a note saying what changed)."""
    rewrite_all: Callable[[bytes, dict[str, Any]], tuple[bytes, list[str]]] | None = None
    """The same for many kernels of one module in one pass (kernel -> value): a library image's
    dozens of kernels rewritten at once read the module once, not once per kernel."""
    written: Callable[[Module, int], Any] | None = None
    """The value a module's entry point is written with (None: always the default)."""
    cli: CliOption | None = None


class LeverRegistry:
    """An ordered set of levers: the order a shape search walks their settings.  `json_order`
    is the order a shape's JSON lists its levers (the report schema's own order); levers
    registered later follow it."""

    def __init__(self, json_order: list[str] | None = None) -> None:
        self.levers: list[Lever] = []
        self.json_order: list[str] = list(json_order or [])

    def register(self, lever: Lever) -> Lever:
        if any(lv.name == lever.name for lv in self.levers):
            raise ValueError(f"a lever named {lever.name!r} is already registered")
        self.levers.append(lever)
        if lever.name not in self.json_order:
            self.json_order.append(lever.name)
        return lever

    def unregister(self, name: str) -> None:
        self.levers = [lv for lv in self.levers if lv.name != name]
        self.json_order = [n for n in self.json_order if n != name]

    def get(self, name: str) -> Lever | None:
        return next((lv for lv in self.levers if lv.name == name), None)

    def __iter__(self) -> Iterator[Lever]:
        return iter(tuple(self.levers))

    def __len__(self) -> int:
        return len(self.levers)

    def of(self, how: How) -> tuple[Lever, ...]:
        return tuple(lv for lv in self.levers if lv.how is how)


class ShapeBase:
    """A mapping from lever name to value, validated by `levers` (see the module docstring).

    Frozen, hashable and comparable: two shapes are equal when every registered lever has
    the same value (a value not given is the lever's default)."""

    levers: ClassVar[LeverRegistry]
    __slots__ = ("_given",)

    def __init__(self, **values: Any) -> None:
        given = {}
        for name, value in values.items():
            lever = self.levers.get(name)
            if lever is None:
                known = ", ".join(lv.name for lv in self.levers)
                raise ValueError(f"no lever named {name!r} (levers: {known})")
            given[name] = lever.parse(value)
        object.__setattr__(self, "_given", given)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        given = object.__getattribute__(self, "_given")
        if name in given:
            return given[name]
        lever = type(self).levers.get(name)
        if lever is None:
            raise AttributeError(f"{type(self).__name__} has no lever {name!r}")
        return lever.default

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a shape is frozen: use .replace()")

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def values(self) -> tuple[tuple[str, Any], ...]:
        """(lever, value) for every registered lever, in registry order."""
        return tuple((lv.name, getattr(self, lv.name)) for lv in self.levers)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.values() == other.values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.values()))

    def __lt__(self, other: ShapeBase) -> bool:
        return [repr(v) for _, v in self.values()] < [repr(v) for _, v in other.values()]

    def __reduce__(self) -> tuple:
        return (_remake, (type(self), tuple(object.__getattribute__(self, "_given").items())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.values())})"

    def replace(self, **changes: Any) -> Self:
        return type(self)(**{**object.__getattribute__(self, "_given"), **changes})

    def to_json(self) -> dict:
        by_name = {lv.name: lv for lv in self.levers}
        return {name: by_name[name].dump(getattr(self, name)) for name in self.levers.json_order if name in by_name}

    @classmethod
    def from_json(cls, doc: dict) -> Self:
        """A shape from its JSON or YAML mapping (levers it does not name keep their default)."""
        return cls(**{k: v for k, v in doc.items() if cls.levers.get(k) is not None})

    def describe(self) -> str:
        return ", ".join(lv.describe(getattr(self, lv.name)) for lv in self.levers)

    @property
    def is_default(self) -> bool:
        return all(getattr(self, lv.name) == lv.default for lv in self.levers)


def _remake(cls: type, given: tuple) -> ShapeBase:
    return cls(**dict(given))


def grid(levers: LeverRegistry, make: Callable[..., Any], written: Any) -> list:
    """Every shape the levers can produce, in registry order (the first lever outermost);
    `make(**settings)` builds one, `written` is the kernel as written."""
    shapes: list[dict] = [{}]
    for lv in levers:
        shapes = [dict(s, **{lv.name: value}) for s in shapes for value in lv.settings(getattr(written, lv.name))]
    return [make(**s) for s in shapes]


def rank(levers: LeverRegistry, shape: Any, written: Any) -> tuple[int, int]:
    """(departure from the written kernel, register-file departure): smaller is preferred."""
    first = sum(lv.cost(getattr(shape, lv.name), getattr(written, lv.name, None)) for lv in levers
                if not lv.tie_break_last)
    last = sum(lv.cost(getattr(shape, lv.name), getattr(written, lv.name, None)) for lv in levers
               if lv.tie_break_last)
    return first, last


def spell(levers: LeverRegistry | tuple[Lever, ...], shape: Any, written: Any) -> list[str]:
    """How an author writes `shape`, lever by lever (levers with nothing to write omitted)."""
    return [text for lv in levers
            if (text := lv.spelling(getattr(shape, lv.name), getattr(written, lv.name, None))) is not None]


def ignored(levers: LeverRegistry, shape: Any, report: KernelReport) -> str | None:
    """Why a target did not honour `shape` (the first lever it ignored), or None."""
    return next((why for lv in levers if (why := lv.ignored_by(getattr(shape, lv.name), report)) is not None), None)


def unsupported(levers: LeverRegistry, shape: Any, report: KernelReport) -> str | None:
    """Why a target refused `shape` (the first lever whose setting it refused), or None."""
    return next((why for lv in levers if (why := lv.unsupported_by(getattr(shape, lv.name), report)) is not None),
                None)
