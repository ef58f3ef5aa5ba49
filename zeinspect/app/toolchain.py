"""`toolchain list` and `toolchain fetch`: the compilers zeinspect runs, found and fetched."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model import Compiler
from .outcome import Outcome


@dataclass
class Listing:
    found: list[tuple[Compiler | None, str]]
    """Each candidate: its identity, or None and why it was skipped."""
    multi: dict[str, bool]
    """Compiler id -> whether it batches builds (`ocloc multi`)."""

    @property
    def exit_code(self) -> int:
        if any(c for c, _ in self.found):
            return Outcome.of(0).exit_code
        return Outcome.nothing_found("no compiler").exit_code


def listing() -> Listing:
    from ..toolchain.compilers import discover_report
    from ..toolchain.knowledge import has_multi

    found = discover_report()
    return Listing(found, {c.id: has_multi(c) for c, _ in found if c is not None})


def fetch(*, force: bool, progress: Callable[[str], None]) -> None:
    from ..toolchain.fetch import fetch as fetch_stack

    fetch_stack(force=force, progress=progress)
