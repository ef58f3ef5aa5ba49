"""What a lever is: one setting of how a kernel is built that can make its scratch go away.

A lever has a name (the field of the shape it sets), the settings a shape search tries,
how it changes a build (a SPIR-V rewrite, a build option, a Triton option, a TTGIR pass),
whether it can change what the kernel computes, and how an author writes the chosen
setting in source.  The shape search and the fix loop iterate over the registered levers
(`zeinspect.levers.MODULE_LEVERS`, `TRITON_LEVERS`), never over special cases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model import KernelReport


@dataclass(frozen=True)
class Lever:
    name: str
    """The shape field it sets (`sub_group`, `grf`, `stage`, `num_warps`, ...)."""
    how: str
    """How it changes a build: `SPIR-V rewrite`, `build option`, `Triton option` or `TTGIR pass`."""
    settings: Callable[[Any], tuple]
    """The settings a search tries, given the one the kernel is written with."""
    cost: Callable[[Any, Any], int]
    """How far a setting departs from the written one, for choosing among equally good shapes:
    0 keeps the kernel as written (or leaves the choice to the compiler)."""
    tie_break_last: bool = False
    """Register-file levers: their cost only decides once every other lever's is equal."""
    changes_semantics: bool = False
    """A setting other than the written one can change results (sub-group operations)."""
    spelling: Callable[[Any, Any], str | None] = lambda value, written: None
    """How the author writes the setting in source (None: nothing to write)."""
    ignored_by: Callable[[Any, KernelReport], str | None] = lambda value, report: None
    """Why a target built the kernel without honouring the setting (Xe-LP has no 256-register
    mode), or None."""


def grid(levers: tuple[Lever, ...], make, written) -> list:
    """Every shape the levers can produce, in registry order (the first lever outermost);
    `make(**settings)` builds one, `written` is the kernel as written."""
    shapes: list[dict] = [{}]
    for lv in levers:
        shapes = [dict(s, **{lv.name: value}) for s in shapes for value in lv.settings(getattr(written, lv.name))]
    return [make(**s) for s in shapes]


def rank(levers: tuple[Lever, ...], shape, written) -> tuple[int, int]:
    """(departure from the written kernel, register-file departure): smaller is preferred."""
    first = sum(lv.cost(getattr(shape, lv.name), getattr(written, lv.name, None)) for lv in levers
                if not lv.tie_break_last)
    last = sum(lv.cost(getattr(shape, lv.name), getattr(written, lv.name, None)) for lv in levers
               if lv.tie_break_last)
    return first, last


def spell(levers: tuple[Lever, ...], shape, written) -> list[str]:
    """How an author writes `shape`, lever by lever (levers with nothing to write omitted)."""
    return [text for lv in levers
            if (text := lv.spelling(getattr(shape, lv.name), getattr(written, lv.name, None))) is not None]


def ignored(levers: tuple[Lever, ...], shape, report: KernelReport) -> str | None:
    """Why a target did not honour `shape` (the first lever it ignored), or None."""
    return next((why for lv in levers if (why := lv.ignored_by(getattr(shape, lv.name), report)) is not None), None)
