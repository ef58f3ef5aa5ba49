"""A Triton library as it runs: its launches captured from a command (triton.capture), then each
distinct specialization screened on every target, as `zeinspect triton FILE.py:KERNEL` would.

One row per kernel x specialization x target; identical specializations collapse, with a count
of launches and the call sites.  The command's own exit status is reported beside the screen
and never decides it.  A screen whose launches were not on an Intel device says so: a library
that chooses its values by device (`X.device.type == "xpu"`) took its other branch.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...ledger import STOPPED, Part
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ..model.kernel import IR_SUFFIX
from ..model.specialization import Specialization
from ..sources.launches import Source
from ..sources.run import capture


def capture_target(config: Settings, session: Session) -> dict:
    """What the captured process is told (triton.capture.record.TARGET_ENV): what the offline
    driver answers for (the first planned target: its capabilities, its name, 32 threads per
    warp as Triton's default), whether launches go through Triton's front end there, and where
    the host XPU device is built.  Decided here, in zeinspect's process, so that the captured
    one reads no setting and resolves no path of zeinspect's (its rule: triton.capture)."""
    from ... import envvars
    from ...paths import toolchain_dir
    from ..build.backend import capabilities

    plan = session.plan(config.targets)
    first = plan.targets[0]
    return {"caps": capabilities(plan.compiler_for_ip[first.ip], first.name), "name": first.name,
            "threads_per_warp": 32, "front_end": bool(envvars.value("ZEINSPECT_TRITON_CAPTURE_FRONT_END")),
            "device_dir": str(toolchain_dir() / "xpu-device")}


@dataclass
class LibraryScreen:
    source: Source
    collection: Collection = field(default_factory=Collection)
    profiled: Any = None
    """The reports joined with the run's profile (app.profile), when it names one."""
    stopped: str = ""
    """Where the screen was stopped before its end (Screener.stopped): what it did is kept."""
    fixes: list[dict] = field(default_factory=list)
    """With --fix: per specialization with a finding, its row, kernel, file and the levers'
    search's record (triton.judge.record), in the screen's order."""

    @property
    def stats(self) -> Any:
        return self.collection.stats

    @property
    def coverage(self) -> Any:
        """The ledger: every specialization the source declares (a cache's entries, a capture's
        launches), screened, left out for a reason, or unread (judge.coverage)."""
        from ...judge.coverage import account

        return account(self.collection.parts, self.collection.reports)

    def unread_incidents(self) -> list[str]:
        """The ledger's incidents, but for the specializations a stop left (its line says how many)."""
        return self.coverage.incidents()

    @property
    def outcome(self) -> Any:
        """The screen's Outcome (app.outcome): a specialization not screened is unread (exit 3)."""
        from ...app.outcome import of_reports

        got = of_reports(self.collection.reports, self.collection.incidents + self.unread_incidents())
        return got.stopped_at(self.stopped) if self.stopped else got


class Screener:
    """Specializations screened one at a time on every target, through one session: as a
    capture reads them (while the command runs) or all at the end (screen_captured)."""

    def __init__(self, config: Settings, session: Session) -> None:
        self.config, self.session = config, session
        self.done: dict[int, Collection | str] = {}
        """id(specialization) -> its collection, or why it was not screened."""
        self.stopped = ""
        """Where a screen of many was stopped (Ctrl-C, SIGTERM), or "" when it ran to its end."""

    def screen_all(self, specs: list[Specialization], progress: Progress | None) -> None:
        """Every specialization not screened yet, in batches (triton.probes.batches)."""
        from ..probes.batches import screen_all

        self.stopped = screen_all(self.done, specs, self.config, self.session, progress) or self.stopped

    def screen(self, spec: Specialization) -> Collection | str:
        if id(spec) in self.done:
            return self.done[id(spec)]
        from ...errors import ZeinspectError, debugging, internal_incident
        from ..model.request import Asked
        from .single import screen

        if spec.problem is not None:
            self.done[id(spec)] = spec.problem
            return spec.problem
        try:
            got: Collection | str = screen(spec.kernel, self.config, self.session,
                                           asked=Asked(stage=spec.staged)).collections[-1]
        except ZeinspectError as exc:
            got = exc.one_line()
        except Exception as exc:  # noqa: BLE001 - one specialization's internal error is its incident
            if debugging():
                raise
            got = Collection(incidents=[internal_incident(spec.title, exc)])
        self.done[id(spec)] = got
        return got


def row_names(specs: list[Specialization]) -> dict[int, str]:
    """One row per specialization: the kernel's name with the values that set it apart, its
    pointers' types where those are what differ (a kernel launched on fp32 and on bf16), and a
    count where nothing Triton was given tells them apart (their alignment, say)."""
    def base(spec: Specialization) -> str:
        return f"{_shown_file(spec)}:{spec.kernel.kernel}[{spec.describe}]"

    def typed(spec: Specialization) -> str:
        return f"{spec.kernel.kernel}[{spec.describe}, {spec.types}]"

    seen = Counter(base(s) for s in specs)
    label = {id(s): typed(s) if seen[base(s)] > 1 else f"{s.kernel.kernel}[{s.describe}]" for s in specs}
    alike: dict[tuple[str, str], list[Specialization]] = {}
    for s in specs:
        alike.setdefault((_shown_file(s), label[id(s)]), []).append(s)
    for members in alike.values():
        for n, s in enumerate(members if len(members) > 1 else [], 1):
            label[id(s)] = f"{label[id(s)][:-1]}, #{n}]"
    return label


def _shown_file(spec: Specialization) -> str:
    """The file a specialization's rows name (screen_captured): the line of the command that ran
    it where it has one (an Inductor kernel), else its kernel's file."""
    return spec.origin or spec.kernel.file


def with_levers(specs: list[Specialization], *, stage: bool, launch: Any, levered_only: bool = False
                ) -> list[Specialization]:
    """The specializations with the launch options given set on each (`--num-warps`, ...), and,
    with `stage`, each again with the SLM staging pass (a row of its own, `staged`): every lever
    of a FILE.py:KERNEL screen on every way in (issue 63).  `levered_only`: the staged rows in
    place of the others (a gate judges the build the project makes)."""
    if launch:
        for spec in specs:
            spec.kernel = spec.kernel.with_options(dict(launch))
            spec.tag = ", ".join(x for x in (spec.tag, ", ".join(f"{k}={v}" for k, v in launch.items())) if x)
    staged = [dataclasses.replace(s, staged=True, tag=", ".join(x for x in (s.tag, "staged") if x)) for s in specs
              if stage]
    return staged if stage and levered_only else [*specs, *staged]


@dataclass(frozen=True)
class Levered:
    """What a screen of many specializations was asked beyond their builds as recorded: the
    staging pass and launch options (with_levers), only the levered builds (a suite gate's), and
    the fix loop per specialization (fixes_of)."""

    stage: bool = False
    launch: Any = None
    levered_only: bool = False
    fix: bool = False
    records: str | None = None
    """--write FILE: the fix loop's records, read back on a re-run (triton.app.records)."""
    ratchet_to: str | None = None
    """--ratchet-lines FILE: the ratchet lines for what no lever cleans, added to it."""


def screen_captured(got: Source, config: Settings, session: Session, *, progress: Progress | None = None,
                    screener: Screener | None = None, levered: Levered = Levered()) -> LibraryScreen:
    """Each specialization (captured, or read from a cache) built on every target; its reports
    named by what sets it apart.  `screener`: one that screened some of them already; `levered`:
    the levers and the fix asked for."""
    from ...app.outcome import failing

    screener = screener or Screener(config, session)
    out = LibraryScreen(got)
    out.collection.notes += got.notes
    out.collection.incidents += got.incidents
    out.collection.parts += got.parts
    specs = with_levers(list(got.specializations), stage=levered.stage, launch=levered.launch,
                        levered_only=levered.levered_only)
    names = row_names(specs)
    screener.screen_all(specs, progress)
    out.stopped = screener.stopped
    quiet = 0
    for spec in specs:
        named = names[id(spec)]
        file = _shown_file(spec)
        part = Part(got.label, file, (named,), got.DECLARED_BY, copies=max(1, spec.launches))
        if out.stopped and id(spec) not in screener.done:
            out.collection.parts.append(replace(part, unread=STOPPED))
            continue  # counted in the stop's line (LibraryScreen.outcome)
        collection = screener.screen(spec)
        if isinstance(collection, str):
            out.collection.parts.append(replace(part, unread=f"not screened: {collection}"))
            continue
        out.collection.parts.append(part)
        collection.reports = [r.replace(kernel=named, input=file) if r.kernel == spec.kernel.kernel
                              else r for r in collection.reports]
        # Where a specialization came from is said for those that need a look (scratch, a failed
        # or unlaunchable build): a cache of 500 clean entries would otherwise print 500 notes.
        # The JSON keeps every one's entries or launch sites (`cache` / `capture`).
        if not collection.reports or failing(collection.reports) or any(r.uses_scratch for r in collection.reports):
            collection.notes = [f"{file}:{named}: {got.where(spec)}"]
        else:
            collection.notes, quiet = [], quiet + 1
        out.collection.extend(collection)
    if levered.fix:
        _fix(out, specs, screener, names, config, progress, levered)
    if quiet:
        out.collection.notes.append(
            f"{quiet} {'specialization' if quiet == 1 else 'specializations'} clean on every target: where each came "
            f"from is in the JSON document ({got.KIND}.specializations)")
    return out


def _fix(out: LibraryScreen, specs: list[Specialization], screener: Screener, names: dict[int, str],
         config: Settings, progress: Progress | None, levered: Levered) -> None:
    """--fix: the records (fixes_of), read back from and written to `levered.records`, and the
    ratchet lines for what no lever cleans added to `levered.ratchet_to` (triton.app.records)."""
    from . import records

    compilers = sorted({c.id for s in specs if isinstance(got := screener.done.get(id(s)), Collection)
                        for c in got.compilers})
    old = records.load(levered.records, tuple(config.targets), compilers)
    out.fixes = fixes_of(specs, screener, names, config, progress, old, levered_only=levered.levered_only)
    if screener.stopped and (levered.records or levered.ratchet_to):
        out.collection.notes.append("the screen was stopped: no records or ratchet lines written (a search cut "
                                    "short is not a decision)")
        return
    if levered.records:
        records.save(levered.records, out.fixes, tuple(config.targets), compilers)
        again = sum(1 for f in out.fixes if f["record"].get("read_back"))
        out.collection.notes.append(f"wrote {levered.records}: the fix loop's records ({len(out.fixes)} "
                                    f"specializations, {again} read back from it)")
    if levered.ratchet_to:
        from ...app.library_fix import write_ratchet

        lines = records.ratchet_lines(out.fixes)
        write_ratchet(lines, levered.ratchet_to)
        out.collection.notes.append(f"wrote {levered.ratchet_to}: {len(lines)} ratchet lines for what no lever cleans")


def fixes_of(specs: list[Specialization], screener: Screener, names: dict[int, str], config: Settings,
             progress: Progress | None, records: dict[str, dict] | None = None, *,
             levered_only: bool = False) -> list[dict]:
    """The fix loop per specialization (issue 63): each one that uses scratch or does not build or
    launch on a target is rebuilt from the IR it came with, with the Triton levers applied, and
    its record made (triton.judge.record).  Two rounds, each screened like the specializations
    themselves (batched: front ends in workers, ocloc in batches): first each lever alone, in the
    levers' order, the staging pass first (the first that cleans is the change: TritonSearch.in_order);
    then a smaller K block, a config of the same kernel the run or cache holds (with_smaller_k_block);
    then, for those no single lever cleans, every other shape, where the least scratch wins.
    `records`: what an earlier run recorded (triton.app.records), by key: a specialization
    recorded is built once in its recorded shape, and searched only where that build no longer
    gives the recorded figures.  `levered_only`: the specializations are a gate's levered builds
    (staged ones too), searched from the shape they were built in."""
    from ...levers.base import grid
    from ..judge import TritonSearch, has_finding, record, result_of
    from ..model.levers import TRITON_LEVERS, TritonShape
    from . import records as recorded
    from .fix import add_row, k_block_sibling, launched_shape, one_lever_at_a_time, with_smaller_k_block

    def searched(spec: Specialization) -> bool:
        """A build as launched (not a `--stage` row beside it), or a gate's levered build."""
        return not spec.staged or levered_only

    screened: dict[int, Collection] = {id(s): got for s in specs if searched(s) and isinstance(
        got := screener.done.get(id(s)), Collection)}
    found = [s for s in specs if id(s) in screened and has_finding(screened[id(s)].reports)]
    clean_of = {id(s): screened[id(s)] for s in specs if id(s) in screened and screened[id(s)].reports
                and not has_finding(screened[id(s)].reports)}
    clean = [s for s in specs if id(s) in clean_of]
    searches = {id(s): TritonSearch(kernel=s.kernel, targets=tuple(config.targets), in_order=True) for s in found}

    alive: list[Specialization] = []
    """Every variant built, kept until the end: Screener.done is keyed by id(), and a freed
    variant's id may be a later one's (its build would be taken for the other's)."""

    def variant(spec: Specialization, shape: TritonShape) -> Specialization:
        made = replace(spec, kernel=spec.kernel.with_options(shape.launch()), staged=shape.stage, launches=0,
                       sites=[], devices=set())
        alive.append(made)
        return made

    # Read back: each recorded specialization built once, in its recorded shape.
    kept: dict[int, dict] = {}
    entries = {id(s): e for s in found if (e := (records or {}).get(recorded.key_of(s)))}
    # A record that chose a smaller K block stands while this run's clean configs give the same
    # sibling (the same row and block) with the recorded figures: nothing to build for it.
    for spec in found:
        if id(spec) in entries and (block := entries[id(spec)]["record"].get("k_block")):
            hit = k_block_sibling(spec, clean)
            if hit is not None and (names[id(hit[2])], hit[1]) == (block["row"], block["value"]) and \
                    recorded.same_figures(entries[id(spec)], {r.target: result_of(r) for r in clean_of[id(hit[2])].reports}):
                kept[id(spec)] = {**entries[id(spec)]["record"], "read_back": True}
    checks = {id(s): variant(s, recorded.recorded_shape(entries[id(s)])) for s in found
              if id(s) in entries and id(s) not in kept and not entries[id(s)]["record"].get("k_block")}
    screener.screen_all(list(checks.values()), progress)
    for spec in found:
        if id(spec) in checks:
            probe = TritonSearch(kernel=spec.kernel, targets=tuple(config.targets))
            add_row(probe, recorded.recorded_shape(entries[id(spec)]), screener.done.get(id(checks[id(spec)]), ""))
            if recorded.same_figures(entries[id(spec)], record(probe)["results"]):
                kept[id(spec)] = {**entries[id(spec)]["record"], "read_back": True}
    searching = [s for s in found if id(s) not in kept]
    for spec in searching:
        add_row(searches[id(spec)], launched_shape(spec), screener.done[id(spec)], launched_shape(spec))

    def round_of(shapes_of: Any) -> None:
        # A gate's levered build keeps its staging as the project builds it: the loop searches
        # the other levers around it (dropping the pass is not a change a gate asks for).
        variants = [(spec, shape, variant(spec, shape))
                    for spec in searching if (shapes := shapes_of(spec)) for shape in shapes
                    if not levered_only or shape.stage == spec.staged]
        screener.screen_all([v for _, _, v in variants], progress)
        for spec, shape, built in variants:
            add_row(searches[id(spec)], shape, screener.done.get(id(built), "not built: the screen was stopped"),
                    launched_shape(spec))

    round_of(lambda spec: one_lever_at_a_time(launched_shape(spec)))
    # The last single lever, a smaller K block: a clean config of the same kernel that differs in
    # that alone.  Where it cleans, the full grid is not built.  Not where the staging pass
    # applies: staging is then the change shown (the remedy for a large dot's registers, the
    # seed's loop), the best staged shape of round 2 (TritonSearch.staged_only).
    smaller = {id(s) for s in searching if searches[id(s)].first_clean is None
               and not searches[id(s)].staging_applies and k_block_sibling(s, clean)}
    built = {id(s): {r.shape for r in searches[id(s)].rows} for s in searching}
    round_of(lambda spec: None if searches[id(spec)].first_clean is not None or id(spec) in smaller else
             [shape for shape in grid(TRITON_LEVERS, TritonShape, launched_shape(spec))
              if shape not in built[id(spec)]])

    def chosen(spec: Specialization) -> dict:
        own = record(searches[id(spec)])  # after both rounds: its `why` names what they found
        if own["cleans"] or id(spec) not in smaller:
            return own
        return with_smaller_k_block(own, spec, clean, names, lambda s: clean_of[id(s)]) or own

    return [{"row": names[id(s)], "kernel": s.kernel.kernel, "file": _shown_file(s), "as_launched": s.describe,
             "template": s.template, "config": {**s.config, "num_warps": s.kernel.num_warps},
             "key": recorded.key_of(s), "as_launched_results": _figures(screener.done[id(s)]),
             "record": kept.get(id(s)) or chosen(s)} for s in found]


def _figures(got: Any) -> dict:
    """A specialization's figures as launched, per target (what a ratchet line accepts), with
    what its build costs (the fix's cost is told against it: triton.judge.cost_of)."""
    from ..judge import cost_of

    return {r.target: {"status": r.status.value, "spill_bytes": r.spill_bytes, "private_bytes": r.private_bytes,
                       "cost": cost_of(r)} for r in got.reports} if isinstance(got, Collection) else {}


def screen_run(command: list[str], config: Settings, session: Session, *, timeout: float | None = None,
               progress: Progress | None = None, levered: Levered = Levered()) -> Any:
    """`zeinspect triton --run -- CMD`: what the command launches, captured and screened (triton.app.library).

    Each launched specialization goes through Triton's front end in the command itself, at
    Triton's pre-compile hook (triton.capture.first_stage: the function that ran, with its globals): its
    TTIR is written to the capture's Triton cache.  After the command, every specialization (and
    every kernel torch.compile generated, triton.capture.inductor) is screened from its TTIR as a cache's
    entries are: batched, their front ends in workers, ocloc in batches.  A launch whose front end
    failed in the command is that specialization's finding (unread: exit 3)."""
    config = config.with_targets(config.targets)
    screener = Screener(config, session)

    def launched(spec: Specialization) -> object:
        if levered.launch:  # its options change first (with_levers): screened with the others after the command
            return None
        # A kernel rebuilt from its module (the capture without its front end) is screened as it
        # is read; one the run's front end wrote as TTIR is screened with the others after the
        # command, batched as a cache's entries are (its front ends in workers, ocloc in batches).
        return screener.screen(spec) if spec.graph is None and not spec.kernel.file.endswith(IR_SUFFIX) else None

    with tempfile.TemporaryDirectory(prefix="zeinspect-capture-") as tmp:
        got = capture(command, target=capture_target(config, session), timeout=timeout, meanwhile=_load_screen,
                      on_new=launched, folder=Path(tmp))
        return screen_captured(got, config, session, progress=progress, screener=screener, levered=levered)


def screen_cache(root: str, config: Settings, session: Session, *, progress: Progress | None = None,
                 levered: Levered = Levered()) -> Any:
    """`zeinspect triton --from-cache DIR`: each specialization the cache holds, on every target
    (staged too, and with the launch options given, as asked)."""
    from ..sources.cache import read_cache

    return screen_captured(read_cache(root), config, session, progress=progress, levered=levered)


def _load_screen() -> None:
    """The modules the screen and its report need, loaded while the captured command runs."""
    from .. import views  # noqa: F401
    from ..build import warm  # noqa: F401
    from . import single  # noqa: F401

    warm.installed()  # the installed Triton and torch, looked up once
