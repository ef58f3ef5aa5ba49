"""One Triton kernel screened: as compiled (and staged, if asked), or every config of its
`@triton.autotune` with the Triton levers searched for the configs with a finding, and the lines
that spill explained, as asked.  What triton.app's KERNEL way runs, and what a library's screen
(triton.app.library) runs for each specialization it captures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...app.outcome import Outcome, of_reports
from ...probes.explain import ExplainResult
from ...probes.results import Collection, CompileStats, Progress
from ...probes.session import Session
from ...settings import Settings
from ..judge import has_finding, record
from ..model.kernel import TritonKernel
from ..model.request import Asked
from ..probes.audit import probe_triton
from ..probes.screen import Screen, screen_autotune
from .fix import search_triton


@dataclass
class TritonResult:
    kernel: TritonKernel
    runs: list[tuple[str, Collection]] = field(default_factory=list)
    """(label, reports): as compiled, then staged; empty for an autotune screen."""
    screen: Screen = field(default_factory=list)
    remedies: dict[int, dict] = field(default_factory=dict)
    """config index -> what the Triton levers make of a config with a finding."""
    explained: ExplainResult | None = None
    explained_configs: dict[int, ExplainResult] = field(default_factory=dict)
    explain_asked: bool = False
    profiled: Any = None
    """The reports joined with the run's profile (app.profile), when it names one."""

    @property
    def collections(self) -> list[Collection]:
        return [got for _, got in self.screen] if self.screen else [self.runs[-1][1]]

    @property
    def stats(self) -> CompileStats:
        return sum((got.stats for got in self.collections), CompileStats())

    @property
    def outcome(self) -> Outcome:
        reports = [r for got in self.collections for r in got.reports]
        incidents = [i for got in self.collections for i in got.incidents]
        incidents += [i for e in [self.explained, *self.explained_configs.values()] if e for i in e.incidents]
        return of_reports(reports, incidents)


def screen(kernel: TritonKernel, config: Settings, session: Session, *, asked: Asked | None = None,
           progress: Progress | None = None) -> TritonResult:
    """`session`: the command's (a library's screens share it)."""
    from ..probes.explain import explain_reports

    asked = asked or Asked()
    out = TritonResult(kernel, explain_asked=asked.explain)
    if asked.autotune:
        out.screen = screen_autotune(kernel, config, session, progress=progress)
        if asked.fix:
            out.remedies = {n: record(search_triton(tuned.applied_to(kernel), config, session, progress=progress))
                            for n, (tuned, got) in enumerate(out.screen)
                            if has_finding(got.reports)}
        if asked.explain:
            out.explained_configs = {
                n: explain_reports(f"{kernel.label} config #{n + 1}", kernel.file, scratch, config, session)
                for n, (_, got) in enumerate(out.screen) if (scratch := [r for r in got.reports if r.scratch_bytes])}
        return out
    wanted = [("as compiled", False)] + ([("staged", True)] if asked.stage else [])
    out.runs = [(label, probe_triton(kernel, config, session, stage=staged, artifacts_dir=asked.artifacts,
                                     progress=progress)) for label, staged in wanted]
    as_compiled = out.runs[0][1]
    if asked.fix and has_finding(as_compiled.reports):
        # One kernel without --autotune: its levers searched as a config's are (remedy #1).
        out.remedies = {0: record(search_triton(kernel, config, session, progress=progress))}
    if asked.explain:
        out.explained = explain_reports(kernel.label, kernel.file, out.runs[-1][1].reports, config, session)
    return out
