"""Kernel sources beyond modules and binaries, registered by the packages that own them.

The core never imports zeinspect.triton: when it is imported (the CLI and the pytest
plugin do, and it needs no Triton to import), it registers how a gate configuration's
`triton:` entries are audited and fixed.  Without it such an entry is a toolchain error that
says what to install.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ToolchainError


@dataclass(frozen=True)
class GateSource:
    name: str
    """The gate configuration's key for its entries."""
    parse: Callable[..., tuple]
    """(the entries as written, the configuration's folder, its path) -> entries, each with a
    `file` (what a PATH on the command line selects it by) and a `label`."""
    audit: Callable[..., Any]
    """(entry, config, session, shapes path or None, progress) -> Collection of reports."""
    fix: Callable[..., dict]
    """(entry, config, session, progress) -> the decision record `zeinspect fix` writes (its
    `cleans` says whether the chosen shape uses no scratch anywhere)."""
    describe_fix: Callable[[str, dict], list[str]]
    """(label, record) -> the lines `zeinspect fix` prints for the decision."""
    schema: dict | None = None
    """The JSON Schema of its entries in the gate configuration (docs/schemas/gate-1.json)."""
    costs: Callable[..., None] | None = None
    """(collection, config, session) -> None: each scratch user's loop traffic set (`cost`),
    when the audit measures it (`cost`, the loop rule, a ratchet entry's `loop=`)."""


SOURCES: dict[str, GateSource] = {}


def register(source: GateSource) -> None:
    SOURCES[source.name] = source


def source(name: str) -> GateSource:
    if name not in SOURCES:
        raise ToolchainError(f"the gate configuration has {name} kernels, and zeinspect.{name} is not "
                             "available: pip install 'zeinspect[triton]'")
    return SOURCES[name]


@dataclass(frozen=True)
class InputSource:
    """A kind of input another package builds (zeinspect.triton's modules), for commands that
    take any input (`diff`)."""

    name: str
    claims: Callable[[str], bool]
    """Whether a path (or FILE.py:KERNEL spec) is this source's."""
    probe: Callable[..., Any]
    """(path, config, progress) -> Collection of reports."""
    default_targets: tuple[str, ...] = ()
    """What to build for when no targets are given."""


INPUTS: dict[str, InputSource] = {}


def register_input(source: InputSource) -> None:
    INPUTS[source.name] = source


def input_source(path: str) -> InputSource | None:
    """The registered source that claims `path`, if any."""
    return next((s for s in INPUTS.values() if s.claims(path)), None)
