"""The gate: from an audit request to a judged result, and the ratchet update built on it.

Shared by `zeinspect audit`, `zeinspect ratchet update` and the pytest plugin.  A gate
configuration and the command line meet in `zeinspect.settings.resolve` (the command line
wins); PATHs replace the configuration's inputs (the pre-commit hook's changed files), and
select its sources' entries (Triton kernels) by file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..fileio import atomic_write
from ..judge import ratchet as ratchet_mod
from ..judge.audit import AuditResult, audit
from ..judge.coverage import Coverage
from ..judge.paths import PathDifference, differences, judge_intent
from ..model import Compiler
from ..probes.collect import collect_reports
from ..probes.logs import read_log, reports_from_log
from ..probes.results import STOPPED_COST, Collection, Progress
from ..probes.session import Session
from ..settings import Settings
from . import plugins
from .coverage import ledger_of
from .gate import gate_entries, load_gate, settings
from .outcome import Outcome
from .profile import apply_time_share, profiled
from .session import open_session

if TYPE_CHECKING:  # a profile's join and a ratchet's update load when a run asks for them, not at every start
    from ..judge.profile import ProfileJoin
    from ..judge.update import UpdatePlan

DEFAULT_RATCHET = "scratch_ratchet.txt"


@dataclass(frozen=True)
class AuditRequest:
    settings: Settings = field(default_factory=Settings)
    paths: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    runtime: bool = False
    """Build through Level Zero on the device instead of compiling with ocloc."""
    simulate: str | None = None
    sources: Mapping[str, tuple] = field(default_factory=dict)
    """A registered source's entries (the gate configuration's Triton kernels), by source."""


def request(given: Mapping[str, Any], *, config: str | None = None, paths: tuple[str, ...] = (),
            logs: tuple[str, ...] = (), runtime: bool = False, simulate: str | None = None,
            environ: Mapping[str, str] | None = None) -> AuditRequest:
    """An audit of `paths` and `logs` (else the gate configuration's), with the settings the
    command line `given`, over the configuration's, over the environment's."""
    gate = load_gate(config) if config else None
    chosen = settings(given, gate=gate, environ=environ)
    if gate is None:
        return AuditRequest(chosen, tuple(paths), tuple(logs), runtime, simulate)
    return AuditRequest(chosen, tuple(paths) or gate.inputs, tuple(logs) or gate.logs, runtime, simulate,
                        gate_entries(gate, tuple(paths)))


@dataclass
class AuditRun:
    result: AuditResult
    collection: Collection
    ratchet: ratchet_mod.Ratchet
    strict: bool = False
    """The run's `strict` setting: IMPROVED and STALE fail too."""
    profiled: ProfileJoin | None = None
    """The reports joined with the run's profile (`profile`)."""
    coverage: Coverage | None = None
    """The ledger: every kernel the inputs declare, reported, excluded (the ratchet's
    `unreadable` lines among the reasons) or unread."""
    paths: list[PathDifference] = field(default_factory=list)
    """Kernels whose native and JIT builds disagree (judge.paths)."""

    @property
    def incidents(self) -> list[str]:
        """The collection's incidents and every part left unread (judge.coverage)."""
        return self.collection.incidents + (self.coverage.incidents() if self.coverage is not None else [])

    @property
    def outcome(self) -> Outcome:
        got = Outcome.of(len(self.result.failures(self.strict)), self.incidents)
        return got.stopped_at(self.collection.stopped) if self.collection.stopped else got


def run(request: AuditRequest, *, progress: Progress | None = None,
        session: Session | None = None) -> AuditRun:
    config = request.settings
    if not request.paths and not request.logs and not any(request.sources.values()):
        raise UsageError("nothing to audit: give PATHs, --log files or --config")
    ratchet = _ratchet(config)
    session = session or open_session(config)
    collection = Collection()
    measure = _measures_cost(config, ratchet)
    if request.paths and (request.runtime or request.simulate):
        from ..inputs import collect
        from ..probes.runtime import DEFAULT_TIMEOUT, RuntimeConfig
        from ..probes.runtime import probe as runtime_probe

        got = runtime_probe([i for i in collect(list(request.paths)) if i.kind.loads_on_device],
                            RuntimeConfig(simulate=request.simulate, build_flags=config.options,
                                          timeout=config.timeout or DEFAULT_TIMEOUT,
                                          environment=config.compile_environment))
        collection.reports += got.reports
        collection.incidents += got.incidents
    elif request.paths:
        if config.shapes_file:
            from ..judge.shapes_file import load as load_shapes
            from ..probes.shaped import collect_in_chosen_shapes

            # Kernels in their recorded shapes are costed from the build they came from there.
            decisions = load_shapes(config.shapes_file)
            collection.extend(collect_in_chosen_shapes(list(request.paths), decisions, config, session,
                                                       shapes_path=config.shapes_file, progress=progress,
                                                       cost=measure))
            shaped = set(decisions)
        else:
            collection.extend(collect_reports(list(request.paths), config, session, progress=progress))
            shaped = set()
        if measure and collection.stopped:  # a stopped run ends now: its costs are compiles of their own
            collection.notes.append(STOPPED_COST)
        elif measure:
            from ..probes.costs import attach_costs

            attach_costs(collection, list(request.paths), config, session, skip=shaped)
    for name, entries in request.sources.items():
        source = plugins.source(name)
        for entry in entries:
            got = source.audit(entry, config, session, config.shapes_file, progress)
            if measure and source.costs is not None:
                source.costs(got, config, session)
            collection.extend(got)
    compilers = collection.compilers
    if request.logs and not compilers:
        try:
            from ..toolchain.compilers import discover

            compilers = discover()
        except Exception:  # noqa: BLE001 - naming targets in logs works without a compiler too
            compilers = []
    for log in request.logs:
        collection.reports += reports_from_log(os.path.normpath(log), read_log(log), compilers=compilers)
    return _judged(collection, compilers, ratchet, config)


def _measures_cost(config: Settings, ratchet: ratchet_mod.Ratchet) -> bool:
    """Whether the audit measures loop traffic: asked for (`cost`), or needed to judge (the
    loop rule, or a ratchet entry that records `loop=`)."""
    return config.measures_cost or any(e.loop is not None for e in ratchet.entries)


def judge_collection(collection: Collection, config: Settings, *,
                     costs: Callable[[Collection, Settings, Any], None] | None = None,
                     session: Session | None = None) -> AuditRun:
    """Reports collected some other way (the kernels a test suite launched, pytest
    --zeinspect-triton), judged against the ratchet as an audit's are; `costs` sets their
    scratch users' loop traffic when the audit would measure it (`cost`, the loop rule, a
    ratchet entry's `loop=`)."""
    ratchet = _ratchet(config)
    if costs is not None and _measures_cost(config, ratchet):
        costs(collection, config, session or open_session(config))
    return _judged(collection, collection.compilers, ratchet, config)


def _judged(collection: Collection, compilers: list[Compiler], ratchet: ratchet_mod.Ratchet, config: Settings) -> AuditRun:
    """The reports judged against the ratchet, with the time rule where the settings ask for it."""
    result = audit(collection.reports, ratchet, compilers, loop_bound=config.loop_bound)
    result.judgements += judge_intent(collection.reports, config.intent, ratchet, compilers)
    joined = profiled(config, collection.reports)
    apply_time_share(result, joined, config)
    return AuditRun(result=result, collection=collection, ratchet=ratchet, strict=config.strict, profiled=joined,
                    coverage=ledger_of(collection, config, accepts=ratchet.accepts),
                    paths=differences(collection.reports))


def _ratchet(config: Settings) -> ratchet_mod.Ratchet:
    """The ratchet the settings name (it must exist), else scratch_ratchet.txt if there is one."""
    return ratchet_mod.load(config.ratchet or DEFAULT_RATCHET, must_exist=config.ratchet is not None)


@dataclass
class RatchetUpdate:
    plan: UpdatePlan
    path: str
    wrote: bool

    @property
    def outcome(self) -> Outcome:
        """1 when an entry would have grown (or a new one been added) and was refused."""
        return Outcome.of(len(self.plan.refused))


def update_ratchet(run_: AuditRun, *, allow_grow: bool) -> RatchetUpdate:
    """Rewrite the ratchet file to what the audit measured, atomically (the caller refuses to
    when compiles crashed: their kernels' figures are unknown)."""
    from ..judge.update import update

    before = run_.ratchet.render()
    plan = update(run_.ratchet, run_.result, allow_grow=allow_grow)
    after = run_.ratchet.render()
    if after != before:
        atomic_write(run_.ratchet.path, after.encode("utf-8"))
    return RatchetUpdate(plan=plan, path=run_.ratchet.path, wrote=after != before)
