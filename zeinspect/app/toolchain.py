"""`toolchain list` and `toolchain fetch`: the compilers zeinspect runs, found and fetched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model import Compiler
from .outcome import Done, Outcome


@dataclass
class Listing:
    found: list[tuple[Compiler | None, str]]
    """Each candidate: its identity, or None and why it was skipped."""
    multi: dict[str, bool]
    """Compiler id -> whether it batches builds (`ocloc multi`)."""

    @property
    def outcome(self) -> Outcome:
        if any(c for c, _ in self.found):
            return Outcome.of(0)
        return Outcome.nothing_found("no compiler")


def listing() -> Listing:
    from ..toolchain.compilers import discover_report
    from ..toolchain.knowledge import has_multi

    found = discover_report()
    return Listing(found, {c.id: has_multi(c) for c, _ in found if c is not None})


def fetch(*, force: bool, progress: Callable[[str], None]) -> Done:
    from ..toolchain.fetch import fetch as fetch_stack

    fetch_stack(force=force, progress=progress)
    return Done()
