"""A use case's outcome: its exit code, findings, incidents and notes.  Every exit code a
command ends with is decided here, by one of the rules below (docs/reference/exit-codes.md):

    0  nothing to report: every kernel built, the gate passed, nothing got worse
    1  a finding: a kernel did not build or cannot launch, the gate failed, a diff found a
       regression, a remedied kernel computes different results, a ratchet update was refused
    2  usage or input error: a bad option or file (also: a diff that could not compare)
    3  toolchain trouble: no compiler, or a compiler or driver crashed or hung
  130  stopped (Ctrl-C, SIGTERM) before the end; a screen that keeps what it had done (a
       Triton cache or capture) says where it stopped, and its reports are written

Incidents (3) win over findings (1), which win over nothing (0); a diff that could not be
trusted is 2, as diff(1)'s trouble wins over a difference.

Every use case returns a result that carries its `Outcome` (`result.outcome`, the `Result`
protocol), as pipx's operation results and pip-audit's service results do: the command line
ends every command in one `finish(result)`, which shows the incidents and exits with the code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..errors import EXIT_FINDING, EXIT_INPUT, EXIT_OK, EXIT_STOPPED, EXIT_TOOLCHAIN
from ..model import KernelReport, Status


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    findings: int = 0
    """How many findings (failing reports, verdicts, regressions, differing kernels)."""
    incidents: tuple[str, ...] = ()
    """Compiler or driver crashes and hangs: each is a finding of its own, and exit 3."""
    notes: tuple[str, ...] = ()
    stopped: str = ""
    """Where the run was stopped before its end (exit 130), when it kept what it had done."""

    @classmethod
    def of(cls, findings: int, incidents: Iterable[str] = (), notes: Iterable[str] = ()) -> Outcome:
        """The rule every use case shares: incidents, else findings, else nothing."""
        incidents = tuple(incidents)
        code = EXIT_TOOLCHAIN if incidents else EXIT_FINDING if findings else EXIT_OK
        return cls(code, findings, incidents, tuple(notes))

    @classmethod
    def untrusted(cls, incidents: Iterable[str] = (), notes: Iterable[str] = ()) -> Outcome:
        """What could not be compared or read as a whole (a diff's side that did not build)."""
        return cls(EXIT_INPUT, 0, tuple(incidents), tuple(notes))

    def stopped_at(self, where: str) -> Outcome:
        """The same findings, of a run stopped before its end: 130 wins over every other code."""
        return Outcome(EXIT_STOPPED, self.findings, self.incidents, self.notes, where)

    @classmethod
    def nothing_found(cls, what: str) -> Outcome:
        """No compiler, no device: the toolchain is missing, which is exit 3."""
        return cls(EXIT_TOOLCHAIN, 0, (), (what,))


class Result(Protocol):
    """What every use case returns: whatever it found, and its outcome."""

    @property
    def outcome(self) -> Outcome: ...


@dataclass(frozen=True)
class Done:
    """The result of a use case whose output is all it has to say (a listing, a write)."""

    value: object = None
    outcome: Outcome = Outcome(EXIT_OK)


def failing(reports: Iterable[KernelReport]) -> int:
    """Reports that did not build or cannot launch (not-applicable pairs never are findings)."""
    return sum(1 for r in reports if r.status is not Status.OK and r.applicable)


def of_reports(reports: Iterable[KernelReport], incidents: Iterable[str]) -> Outcome:
    """3 when a compiler or driver crashed or hung, 1 when a kernel did not build (or cannot
    launch), else 0."""
    return Outcome.of(failing(reports), incidents)
