"""`zeinspect diff`: two builds, two compilers or two settings, compared kernel by kernel.

Each side is a saved zeinspect JSON document (read, nothing compiled) or an input built now:
anything `inspect` reads, or a source another package claims (zeinspect.triton's modules,
app.plugins.INPUTS).  One input with two compilers, two option strings or two shapes makes
two sides of the same input.  Both sides become report JSON and judge.diff compares them.

Targets: those asked for; else, against a saved document, the document's; else the targets
both compilers know, of the default ones (`--compiler A --compiler B`); else the default.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import InputError, UsageError
from ..hardware import DEFAULT_TARGETS
from ..inputs.saved import read_saved
from ..judge.build_cost import compile_times
from ..judge.diff import Change, DiffResult, Thresholds, build_cost_change, compare, environment_of, side
from ..judge.profile import ProfileJoin
from ..levers import Shape
from ..model import Remarks
from ..probes.results import Collection, Progress
from ..settings import Settings
from . import plugins
from .inspect import explain_paths, probe_paths
from .outcome import Outcome
from .profile import profiled


@dataclass
class Side(Remarks):
    label: str
    reports: list[dict] = field(default_factory=list)
    crashed: set[int] = field(default_factory=set)
    """Indexes of reports whose compile crashed or hung (their figures are unreadable)."""
    compilers: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """What was built (empty for a saved document: nothing to explain)."""
    config: Settings | None = None
    schema: str | None = None
    compile_times: list[dict] = field(default_factory=list)
    """What each module's compile took per target, and IGC's retries (formats.json.compile_times)."""


@dataclass(frozen=True)
class DiffRequest:
    old: str
    new: str | None
    """None: `old` built twice, with the two values of one of the pairs below."""
    config: Settings
    compilers: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    shapes: tuple[Shape, ...] = ()
    thresholds: Thresholds = Thresholds()
    explain: bool = False


def shapes_asked(values: Mapping[str, tuple]) -> tuple[Shape, tuple[Shape, ...]]:
    """The shape options of `diff` (each lever's values, as given): none; one value, the shape
    both sides build in; or two values of one lever, the two shapes compared (with one input).
    Returns (the base shape, the two shapes or ())."""
    given = [(name, v) for name, v in values.items() if v]
    if not given:
        return Shape(), ()
    if len(given) > 1 or len(given[0][1]) > 2:
        raise UsageError("give one shape option, once or twice")
    name, chosen = given[0]
    if len(chosen) == 2:
        return Shape(), tuple(Shape(**{name: v}) for v in chosen)
    return Shape(**{name: chosen[0]}), ()


@dataclass
class DiffRun:
    result: DiffResult
    old: Side
    new: Side
    explained: dict = field(default_factory=dict)
    """(identity) -> (old ExplainResult, new ExplainResult) for regressions, with --explain."""
    seconds: float = 0.0
    profiled: ProfileJoin | None = None
    """The new side's reports joined with the run's profile (--profile)."""

    @property
    def worse_share(self) -> float | None:
        """The share of the profiled time in the kernels that got worse (None: no profile)."""
        if self.profiled is None:
            return None
        return self.profiled.share_of({e.identity.kernel for e in self.result.of(Change.WORSE)})

    @property
    def outcome(self) -> Outcome:
        """As diff(1): trouble (could not compare) wins over a difference."""
        if not self.result.trusted:
            return Outcome.untrusted(self.result.incidents)
        return Outcome.of(len(self.result.of(Change.WORSE)), self.result.incidents)


def is_document(path: str) -> bool:
    return path.endswith(".json") and Path(path).is_file()


def read_document(path: str) -> Side:
    """A saved `--json` document of `kernel`, `inspect`, `triton` or `audit`; one line and exit
    2 when it is not one, never a traceback (inputs.saved reads only what a diff compares)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror})", path=path) from None
    doc = read_saved(data, path)
    return Side(label=path, reports=doc.reports, crashed=_crashed(doc.reports, doc.incidents),
                compilers=doc.compilers, incidents=[f"{path}: {i}" for i in doc.incidents], schema=doc.schema,
                compile_times=doc.compile_times)


def _crashed(reports: list[dict], incidents: list[str]) -> set[int]:
    """Reports whose failure is one of the run's incidents (a compiler crash or hang)."""
    if not incidents:
        return set()
    return {i for i, r in enumerate(reports)
            if r.get("status") == "build_failed" and r.get("reason") and any(str(r["reason"]) in x for x in incidents)}


def build_side(path: str, config: Settings, label: str, *, progress: Progress | None = None) -> Side:
    """One side built in its own configuration (its compiler, options or shape): a session of its
    own, the one build configuration it is."""
    source = plugins.input_source(path)
    if source is not None:
        if not config.targets_given and source.default_targets:
            config = replace(config, targets=source.default_targets)
        got: Collection = source.probe(path, config, progress)
    else:
        got = probe_paths([path], config, progress=progress).collection
    if not got.reports and not got.incidents:
        raise InputError("has no kernels to compare (no device images, no kernels)", path=path)
    reports = [r.to_json() for r in got.reports]
    return Side(label=label, reports=reports, crashed=_crashed(reports, got.incidents),
                compilers=[c.id for c in got.compilers], notes=list(got.notes), incidents=list(got.incidents),
                paths=[path], config=config, compile_times=compile_times(got.reports))


def _targets_of(side: Side) -> tuple[str, ...]:
    return tuple(sorted({str(r.get("target")) for r in side.reports if r.get("target")}))


def _common_targets(request: DiffRequest) -> tuple[str, ...]:
    """The default targets both compilers know (`diff INPUT --compiler A --compiler B`)."""
    from ..toolchain.compilers import resolve

    known = []
    for spec in request.compilers:
        found = resolve(spec, request.config.timeout)
        known.append({t for c in found for t in DEFAULT_TARGETS if c.knows(t)})
    both = set.intersection(*known) if known else set(DEFAULT_TARGETS)
    if not both:
        raise UsageError(f"the compilers {', '.join(request.compilers)} know no default target in common: "
                         "name targets with -t")
    return tuple(t for t in DEFAULT_TARGETS if t in both)


def _pairs(request: DiffRequest) -> list[tuple[str, Settings, str]]:
    """(path, config, label) for each side."""
    c = request.config
    if request.new is not None:
        if len(request.compilers) > 1 or len(request.options) > 1 or len(request.shapes) > 1:
            raise UsageError("two inputs are compared under one compiler and one setting: give --compiler, "
                             "--options or a shape option once, or compare one input under two")
        one = replace(c, compiler=request.compilers[0] if request.compilers else c.compiler,
                      options=request.options[0] if request.options else c.options,
                      shape=request.shapes[0] if request.shapes else c.shape)
        return [(request.old, one, request.old), (request.new, one, request.new)]
    given = [(name, values) for name, values in (("--compiler", request.compilers), ("--options", request.options),
                                                 ("shape", request.shapes)) if len(values) == 2]
    if len(given) != 1 or any(len(v) > 2 for v in (request.compilers, request.options, request.shapes)):
        raise UsageError("one input is compared under two of exactly one setting: --compiler A --compiler B, "
                         "--options A --options B, or a shape option given twice")
    if len(request.compilers) == 2:
        configs = [replace(c, compiler=v) for v in request.compilers]
        described = [f"--compiler {v}" for v in request.compilers]
    elif len(request.options) == 2:
        configs = [replace(c, options=v) for v in request.options]
        described = [f"--options {v!r}" for v in request.options]
    else:
        configs = [replace(c, shape=v) for v in request.shapes]
        described = [v.describe() for v in request.shapes]
    return [(request.old, cfg, f"{request.old} ({text})") for cfg, text in zip(configs, described)]


def diff(request: DiffRequest, *, progress: Progress | None = None) -> DiffRun:
    started = time.monotonic()
    pairs = _pairs(request)
    sides: list[Side | None] = [read_document(p) if is_document(p) else None for p, _, _ in pairs]
    targets = request.config.targets
    explicit = request.config.targets_given
    if not explicit and None in sides:  # a side to build (two saved documents need no targets)
        saved = [s for s in sides if s is not None]
        if saved:
            targets, explicit = tuple(sorted(set.union(*(set(_targets_of(s)) for s in saved)))), True
        elif request.compilers and request.new is None:
            targets, explicit = _common_targets(request), True
    built = []
    for (path, config, label), got in zip(pairs, sides):
        if got is None:
            got = build_side(path, replace(config, targets=targets, targets_given=explicit), label,
                             progress=progress)
        built.append(got)
    old, new = built
    rows = []
    joined = profiled(request.config, new.reports)
    environments = (environment_of(old.reports), environment_of(new.reports))
    for s in (old, new):
        rows.append(side(s.reports, s.crashed))
        s.reports = []  # judged from here on by their rows: a library's reports are half a gigabyte
    result = compare(rows[0], rows[1], request.thresholds, old_label=old.label, new_label=new.label)
    result.incidents = old.incidents + new.incidents
    result.environments = environments
    result.build = build_cost_change(old.compile_times, new.compile_times)
    if old.schema and new.schema and old.schema != new.schema:
        result.notes.append(f"the documents' schemas differ ({old.schema}, {new.schema}): their common "
                            "figures are compared")
    for s in (old, new):
        # A probe's notes mostly name their file already: the side's label once, not twice.
        result.notes += [n if n.startswith(s.label) else f"{s.label}: {n}" for n in s.notes]
    out = DiffRun(result, old, new, profiled=joined)
    if request.explain:
        out.explained = _explain(out)
    out.seconds = time.monotonic() - started
    return out


def _explain(run: DiffRun) -> dict:
    """Which lines spill, in both builds, for each regression of a side built here."""
    out: dict = {}
    if not (run.old.config and run.new.config):
        return out
    for entry in run.result.worst()[:10]:
        ident = entry.identity
        pair = []
        for s, figures in ((run.old, entry.old), (run.new, entry.new)):
            assert s.config is not None
            config = replace(s.config, targets=(ident.target,), kernels=(ident.kernel,))
            path = figures.input.split("[", 1)[0] if figures else s.paths[0]
            pair.append(explain_paths([path if Path(path).exists() else s.paths[0]], config).explained)
        out[ident] = tuple(pair)
    return out


__all__ = ["DiffRequest", "DiffRun", "Side", "Thresholds", "build_side", "diff", "read_document"]
