"""A use case's outcome: its exit code (README "Exit codes") and the incidents behind it."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import EXIT_FINDING, EXIT_OK, EXIT_TOOLCHAIN
from ..model import KernelReport, Status


def exit_code(reports: Iterable[KernelReport], incidents: list[str]) -> int:
    """3 when a compiler or driver crashed or hung, 1 when a kernel did not build (or cannot
    launch), else 0.  Not-applicable pairs are never findings."""
    if incidents:
        return EXIT_TOOLCHAIN
    return EXIT_FINDING if any(r.status is not Status.OK and r.applicable for r in reports) else EXIT_OK
