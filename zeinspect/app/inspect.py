"""`kernel`, `inspect` and `explain`: figures per kernel and target, and which lines spill.

`probe_paths` compiles what needs compiling and reads the rest (probes.collect); its result
also judges itself against an empty ratchet for the HTML report (every scratch user is NEW
there: the page shows what a gate would see).  `runtime_kernel` builds through Level Zero,
with the AOT twin from the compiler of the driver's own build when asked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..inputs import Reading, collect, read_input
from ..judge.audit import AuditResult, audit
from ..judge.coverage import Coverage
from ..judge.paths import PathDifference, differences
from ..judge.ratchet import Dialect, Ratchet
from ..model import Compiler, GrfMode, KernelReport, Remarks
from ..probes.aot import probe as aot_probe
from ..probes.collect import collect_reports
from ..probes.results import STOPPED_COST, Collection, Progress
from ..probes.session import Session
from ..settings import Settings
from .coverage import ledger_of
from .outcome import Outcome, of_reports
from .profile import profiled
from .session import open_session

if TYPE_CHECKING:  # `explain` and `--profile` load these when asked: a warm inspect reads neither
    from ..judge.profile import ProfileJoin
    from ..probes.explain import ExplainResult


@dataclass
class InspectResult:
    collection: Collection
    explained: ExplainResult | None = None
    seconds: float = 0.0
    profiled: ProfileJoin | None = None
    """The reports joined with the run's profile (--profile)."""
    coverage: Coverage | None = None
    """The ledger: every kernel the inputs declare, reported, excluded or unread."""
    paths: list[PathDifference] = field(default_factory=list)
    """Kernels whose native and JIT builds disagree (judge.paths)."""

    @property
    def outcome(self) -> Outcome:
        incidents = self.collection.incidents + (self.explained.incidents if self.explained else [])
        unread = self.coverage.incidents() if self.coverage is not None else []
        got = of_reports(self.collection.reports, incidents + unread)
        return got.stopped_at(self.collection.stopped) if self.collection.stopped else got

    def judged(self) -> AuditResult:
        """The reports against an empty ratchet (what the HTML report draws)."""
        return audit(self.collection.reports, Ratchet(path="(no ratchet file)", dialect=Dialect.NATIVE),
                     self.collection.compilers)


def probe_paths(paths: list[str], config: Settings, *, explain: bool = False,
                progress: Progress | None = None, session: Session | None = None) -> InspectResult:
    started = time.monotonic()
    session = session or open_session(config)
    got = collect_reports(list(paths), config, session, progress=progress)
    if config.cost and got.stopped:  # a stopped run ends now: its costs are compiles of their own
        got.notes.append(STOPPED_COST)
    elif config.cost:
        from ..probes.costs import attach_costs

        attach_costs(got, paths, config, session)
    explained = explain_paths(paths, config, session=session).explained if explain and not got.stopped else None
    return InspectResult(got, explained, time.monotonic() - started, profiled(config, got.reports),
                         ledger_of(got, config), differences(got.reports))


@dataclass
class Explained:
    explained: ExplainResult

    @property
    def outcome(self) -> Outcome:
        return Outcome.of(len(self.explained.failures), self.explained.incidents)


def explain_paths(paths: list[str], config: Settings, *, session: Session | None = None) -> Explained:
    """Which source lines spill, from IGC's own ISA of the build in `config`'s shape (a sub-group
    size given is the module rewritten, as `kernel` builds it); through `session`, the command's,
    or one opened for it."""
    reading = Reading()
    from ..probes.explain import explain as run_explain

    got = run_explain(collect(list(paths), reading), config, session or open_session(config))
    got.notes += reading.notes()
    got.incidents += reading.incidents
    return Explained(got)


@dataclass
class RuntimeResult(Remarks):
    reports: list[KernelReport]
    device: dict
    driver: dict
    aot: list[KernelReport] = field(default_factory=list)
    compilers: list[Compiler] = field(default_factory=list)
    compared: bool = False
    """Asked to compare with the AOT build (`--compare-aot`): shown side by side."""

    @property
    def outcome(self) -> Outcome:
        return of_reports(self.reports, self.incidents)


def runtime_kernel(file: str, config: Settings, *, device: int, simulate: str | None, compare_aot: bool,
                   session: Session | None = None) -> RuntimeResult:
    """Build through Level Zero as an application would; with `compare_aot`, the AOT figures of
    the device's IP from the compiler of the driver's own build beside them."""
    from ..probes.runtime import DEFAULT_TIMEOUT, RuntimeConfig
    from ..probes.runtime import probe as runtime_probe

    if config.shape.grf != GrfMode.DEFAULT:
        raise UsageError("--grf applies to AOT compiles; give the driver its flags with --options")
    inp = read_input(file)
    got = runtime_probe([inp], RuntimeConfig(simulate=simulate, device=device, build_flags=config.options,
                                             kernels=config.kernels, timeout=config.timeout or DEFAULT_TIMEOUT,
                                             environment=config.compile_environment))
    out = RuntimeResult(got.reports, got.device, got.driver, incidents=got.incidents, compared=compare_aot)
    ip = next((r.ip for r in got.reports if r.ip), None)
    if compare_aot and ip is not None:
        from dataclasses import replace

        from ..toolchain.compilers import built_with_driver

        aot_config = replace(config, targets=(ip,))
        session = session or open_session(aot_config)
        own = built_with_driver(session.compilers, got.driver.get("version"), ip) or session.compilers
        twin = aot_probe([inp], aot_config, session.with_compilers(own))
        out.aot, out.compilers = twin.reports, twin.compilers
    return out
