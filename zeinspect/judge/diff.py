"""Two sets of reports -> which kernels got worse, per target, and by how much.  Pure.

Both sides are reports in their JSON form (zeinspect.report/1's `reports`, or what a live run
gives through `KernelReport.to_json`), so a saved document and a fresh build are compared by
one code path.

Identity.  A kernel is the same kernel in both builds when its symbol, its target and its
place are: the place is its file relative to its side's root (the common folder of the
side's files, so `old/` and `new/`, or two releases of one library, pair up), the archive
member, the SYCL image's variant (its target, ESIMD, register file, required aspects and
sub-group size: `InputId.variant`) and, for Triton, the kernel and config in the label;
never the image's index or its order in the file.  Several images with one identity make
one row with a count, judged by its worst copy.

Values.  Each figure is a number, `n/a` (the kernel did not build, or the probe has no such
figure), or `unreadable` (the side's document has a value of the wrong kind, or its compile
crashed).  Only `unreadable` makes a comparison untrustworthy: its verdict is `unreadable`.

Verdicts, per kernel and target: `added`, `removed` (a kernel present on one side only, or
applicable there only), `worse`, `better`, `same`, `unreadable`.  `worse` is any of: more
scratch (by more than `min_bytes` and `min_ratio` of the old figure), a status that can no
longer build or launch, fewer threads per EU, or a largest work-group below the one the
kernel requires.  `better` is the reverse of any of those with none of them.  Everything else
that changed (registers, SIMD width, code size, Triton's retry) is listed with the figures,
and is `same`.
"""

from __future__ import annotations

import difflib
import enum
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..model import Remarks

UNREADABLE = "unreadable"
NA = "n/a"
FAILING = {"scratch_overflow", "build_failed", "wg_overflow", "slm_overflow"}
"""Statuses that cannot build or cannot launch."""
NUMBERS = ("spill_bytes", "private_bytes", "scratch_bytes", "grf", "simd", "code_bytes", "threads_per_eu",
           "max_work_group_size", "work_group_size", "loop_scratch_bytes", "retries")
"""`loop_scratch_bytes`: scratch moved per iteration of the innermost loop with any (--cost);
`retries`: how often IGC built the kernel again (listed when it changed, never worse by itself)."""


@dataclass(frozen=True)
class PartField:
    """A figure a probe's own part of a report carries (`extra.<part>`), compared like the others:
    registered by the package that owns the part (zeinspect.triton's retry), so the judge
    reads it by the part's name without knowing the part."""

    name: str
    label: str
    """How the text views name it."""
    part: str
    """The key of the part under the report's `extra`."""
    of: Callable[[dict], Any]
    """The part's JSON -> the figure."""


PART_FIELDS: dict[str, PartField] = {}


def register_field(part_field: PartField) -> None:
    PART_FIELDS[part_field.name] = part_field


def fields() -> tuple[str, ...]:
    """Every compared figure: the status, the numbers, and the registered parts' figures."""
    return ("status", *NUMBERS, *PART_FIELDS)


class Change(enum.StrEnum):
    WORSE = "worse"
    BETTER = "better"
    SAME = "same"
    ADDED = "added"
    REMOVED = "removed"
    UNREADABLE = "unreadable"


class Identity(msgspec.Struct, frozen=True, order=True):
    """A msgspec struct: sorted, hashed and written to JSON at C speed (a library's diff sorts
    and writes 100,000 of them)."""

    where: str
    """The kernel's place within its side: file relative to the side's root, member, variant,
    Triton config ("" for a side that is one file)."""
    kernel: str
    target: str

    def to_json(self) -> dict:
        return {"where": self.where, "kernel": self.kernel, "target": self.target}


class Build(msgspec.Struct, frozen=True):
    """What a report was built from, beside its figures: the module, options and environment."""

    digest: str | None
    options: str | None
    environment: tuple[tuple[str, str], ...]

    @staticmethod
    def of(report: dict) -> Build | None:
        env = report.get("environment")
        if not isinstance(env, dict):
            return None  # a document from before environments were recorded
        return Build(report.get("input_sha256") if isinstance(report.get("input_sha256"), str) else None,
                     report.get("options") if isinstance(report.get("options"), str) else None,
                     tuple(sorted((str(k), str(v)) for k, v in env.items())))


def environment_change(old: Build | None, new: Build | None) -> str | None:
    """`IGC_X unset -> VALUE, ...` when the environment is all that differs between two builds of
    one module with one compiler's options (the caller checks the compiler); None otherwise."""
    if old is None or new is None or old.environment == new.environment:
        return None
    if old.digest != new.digest or old.options != new.options or old.digest is None:
        return None
    a, b = dict(old.environment), dict(new.environment)
    return ", ".join(f"{k} {a.get(k, 'unset')} -> {b.get(k, 'unset')}" for k in sorted(a.keys() | b.keys())
                     if a.get(k) != b.get(k))


class Figures:
    """One side's figures for one identity: a number, NA or UNREADABLE per field.  A plain
    class: a frozen dataclass's __init__ costs three times as much, and a library's diff makes
    200,000 (nothing changes one once made)."""

    __slots__ = ("values", "count", "input", "compiler", "reason", "build")

    def __init__(self, values: dict, count: int = 1, input: str = "", compiler: str | None = None,
                 reason: str | None = None, build: Build | None = None):
        self.values = values
        self.count = count
        self.input = input
        self.compiler = compiler
        self.reason = reason
        self.build = build
        """How it was built (not compared, not written): what a change is attributed to."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Figures) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Figures({self.to_json()!r})"

    def get(self, name: str) -> Any:
        return self.values.get(name, NA)

    @property
    def status(self) -> str:
        status = self.values.get("status", UNREADABLE)
        return status if isinstance(status, str) else str(status)

    def to_json(self) -> dict:
        return {**self.values, "count": self.count, "input": self.input, "compiler": self.compiler,
                "reason": self.reason}


def figures_json(value: Any) -> Any:
    """msgspec's hook for what it cannot write itself: Figures, as their JSON."""
    if isinstance(value, Figures):
        return value.to_json()
    raise NotImplementedError(f"cannot write {value.__class__.__name__} as JSON")


class Entry(msgspec.Struct):
    """One kernel on one target, judged.  Written to JSON by msgspec as it is (with
    figures_json for its figures): the `zeinspect.diff/1` entry."""

    identity: Identity
    change: Change
    old: Figures | None
    new: Figures | None
    why: tuple[str, ...] = ()
    """What made it worse or better, or could not be read: `scratch 0 -> 4096 bytes`."""
    changed: tuple[str, ...] = ()
    """Every field whose value differs."""

    @property
    def scratch_delta(self) -> int:
        old = self.old.get("scratch_bytes") if self.old else 0
        new = self.new.get("scratch_bytes") if self.new else 0
        return (new if isinstance(new, int) else 0) - (old if isinstance(old, int) else 0)

    def to_json(self) -> dict:
        return msgspec.to_builtins(self, enc_hook=figures_json)


@dataclass(frozen=True)
class Thresholds:
    min_bytes: int = 0
    """A scratch increase of fewer bytes than this is not a regression."""
    min_ratio: float = 0.0
    """Nor is one smaller than this fraction of the old figure (0.1: ten per cent)."""


@dataclass
class DiffResult(Remarks):
    entries: list[Entry] = field(default_factory=list)
    old_label: str = "old"
    new_label: str = "new"
    only_old_targets: tuple[str, ...] = ()
    only_new_targets: tuple[str, ...] = ()
    environments: tuple[dict, dict] = ({}, {})
    """The compiler variables each side was built under (toolchain.environment)."""
    build: dict | None = None
    """What each side's build cost, per target and in all (build_cost_change); None: neither recorded it."""

    @property
    def environments_differ(self) -> bool:
        return self.environments[0] != self.environments[1]

    def counts(self) -> dict[str, int]:
        out = {c.value: 0 for c in Change}
        for e in self.entries:
            out[e.change.value] += 1
        return out

    def of(self, change: Change) -> list[Entry]:
        return [e for e in self.entries if e.change is change]

    def worst(self) -> list[Entry]:
        """Regressions, the largest scratch growth first (then by status, then by name)."""
        return sorted(self.of(Change.WORSE), key=lambda e: (-e.scratch_delta, e.identity))

    def likely_renames(self) -> list[tuple[Entry, Entry]]:
        """Removed and added kernels on one target whose names are alike (for the text view:
        a guess, said as one)."""
        added = [e for e in self.of(Change.ADDED) if e.old is None]
        pairs = []
        for gone in (e for e in self.of(Change.REMOVED) if e.new is None):
            same_target = [a for a in added if a.identity.target == gone.identity.target]
            if not same_target or len(same_target) > 200:  # a guess for a few renames, not for a rewrite
                continue
            best = max(same_target, key=lambda a: _likeness(gone.identity.kernel, a.identity.kernel))
            if _likeness(gone.identity.kernel, best.identity.kernel) >= 0.8:
                pairs.append((gone, best))
                added.remove(best)
        return pairs

    @property
    def regressed(self) -> bool:
        return any(e.change is Change.WORSE for e in self.entries)

    @property
    def trusted(self) -> bool:
        return not self.incidents and not any(e.change is Change.UNREADABLE for e in self.entries)


def build_cost_change(old: list[dict], new: list[dict]) -> dict | None:
    """Each side's compile time and IGC's retries (their documents' `compile_times`), in all and
    per target; None when neither side recorded any.  Times are IGC's as zeinspect measured them
    (a cached build keeps its first time), so two runs of one build compare alike."""
    if not old and not new:
        return None

    def totals(rows: list[dict]) -> dict:
        out: dict[str, dict] = {}
        for row in rows:
            seconds, retries = row.get("seconds"), row.get("retries")
            one = out.setdefault(str(row.get("target")), {"seconds": 0.0, "retries": 0, "modules": 0})
            one["seconds"] += seconds if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0
            one["retries"] += retries if isinstance(retries, int) and not isinstance(retries, bool) else 0
            one["modules"] += 1
        return out

    sides = totals(old), totals(new)
    targets = sorted(set(sides[0]) | set(sides[1]))
    empty = {"seconds": 0.0, "retries": 0, "modules": 0}
    per_target = {t: {"old": sides[0].get(t, empty), "new": sides[1].get(t, empty)} for t in targets}

    def total(one: dict) -> dict:
        return {k: round(sum(v[k] for v in one.values()), 3) if k == "seconds" else sum(v[k] for v in one.values())
                for k in empty}

    return {"old": total(sides[0]), "new": total(sides[1]), "targets": per_target}


def _likeness(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


_EMPTY: dict = {}


def _number(value: Any) -> Any:
    if value is None:
        return NA
    if value.__class__ is int:  # the common case first: 2,000,000 calls for a library's diff
        return value
    return value if isinstance(value, int) and not isinstance(value, bool) else UNREADABLE


def figures_of(report: dict, crashed: bool = False) -> dict:
    """The compared figures of one report (its JSON form)."""
    get = report.get
    status = get("status")
    occupancy = get("occupancy")
    if not isinstance(occupancy, dict):
        occupancy = _EMPTY
    values: dict[str, Any] = {  # in NUMBERS' order: the JSON view lists them so
        "status": status if isinstance(status, str) else UNREADABLE,
        "spill_bytes": _number(get("spill_bytes")), "private_bytes": _number(get("private_bytes")),
        "scratch_bytes": _number(get("scratch_bytes")), "grf": _number(get("grf")), "simd": _number(get("simd")),
        "code_bytes": _number(get("code_bytes")), "threads_per_eu": _number(occupancy.get("threads_per_eu")),
        "max_work_group_size": _number(occupancy.get("max_work_group_size")),
        "work_group_size": _number(get("work_group_size")),
        "loop_scratch_bytes": _number(cost.get("per_iteration_bytes")) if isinstance(cost := get("cost"), dict)
        else NA, "retries": _number(get("retries"))}
    if values["scratch_bytes"] == NA and isinstance(get("scratch_space_bytes"), int) and get("scratch_space_bytes"):
        values["scratch_bytes"] = report["scratch_space_bytes"]
    if get("scratch_unknown"):
        values["scratch_bytes"] = UNREADABLE
    extra = get("extra")
    for name, part_field in PART_FIELDS.items():
        part = extra.get(part_field.part) if isinstance(extra, dict) else None
        values[name] = part_field.of(part) if isinstance(part, dict) else NA
    if crashed:
        values = {name: (UNREADABLE if name != "status" else values["status"]) for name in values}
        values["status"] = UNREADABLE
    return values


def _root(files: Iterable[str]) -> str:
    distinct = sorted(set(files))
    if len(distinct) <= 1:
        return distinct[0] if distinct else ""
    return os.path.commonpath(distinct) if all(f.startswith("/") for f in distinct) or \
        not any(f.startswith("/") for f in distinct) else ""


def _text(value: Any) -> str:
    """A report's name-like field as text ("" when absent); most already are strings."""
    if not value:
        return ""
    return value if isinstance(value, str) else str(value)


def _file_of(report: dict) -> str:
    """The file a report's kernel came from: its origin's, else its input label."""
    origin = report.get("origin")
    return _text((origin.get("file") if isinstance(origin, dict) else None) or report.get("input"))


def _place(report: dict, root: str, relative: dict[str, str]) -> str:
    """`relative`: each file's path relative to `root`, computed once per file (a library's
    100,000 reports come from one file, a folder's from a few hundred)."""
    origin = report.get("origin")
    if not isinstance(origin, dict):
        origin = _EMPTY
    text = _text(report.get("input"))
    file = _file_of(report)
    member = origin.get("member")
    image = origin.get("image")
    variant = origin.get("variant")
    in_member = f"({member})" if member else ""
    label = f"{file}{in_member}[{image}]" if image else file + in_member
    suffix = ""
    if len(text) > len(label) and text.startswith(label):  # Triton: `:kernel[config 2: ...]`
        suffix = text[len(label):]
        kernel = f":{report.get('kernel')}"
        if suffix.startswith(kernel):  # the kernel is the identity's own field; keep its config
            suffix = suffix[len(kernel):]
            suffix = suffix[1:-1] if suffix.startswith("[") and suffix.endswith("]") else suffix
    rel = relative.get(file)
    if rel is None:
        # A report that names no file (a hand-edited document) has no place: never relpath("").
        rel = relative[file] = "" if file in (root, "") else os.path.relpath(file, root) if root else file
    head = rel + in_member + (f"{{{variant}}}" if variant else "")
    return f"{head} {suffix}" if head and suffix else head or suffix


_BADNESS = {"ok": 0, "not_applicable": -1}


def _worse_copy(a: dict, b: dict) -> bool:
    """Whether figures `a` are worse than `b` (what a row of several images is judged by)."""
    def rank(v: dict) -> tuple:
        scratch = v.get("scratch_bytes")
        return (v.get("status") == UNREADABLE, _BADNESS.get(str(v.get("status")), 1),
                scratch if isinstance(scratch, int) else 0)
    return rank(a) > rank(b)


def environment_of(reports: list[dict]) -> dict[str, str]:
    """Every compiler variable a side's reports were built under."""
    out: dict[str, str] = {}
    for r in reports:
        env = r.get("environment")
        if isinstance(env, dict):
            out.update((str(k), str(v)) for k, v in env.items())
    return dict(sorted(out.items()))


def side(reports: list[dict], crashed: set[int] | None = None) -> dict[Identity, Figures]:
    """One side's rows: its reports by identity, several copies as one row (the worst, counted)."""
    root = _root(_file_of(r) for r in reports if isinstance(r.get("origin"), dict) or r.get("input"))
    rows: dict[Identity, Figures] = {}
    relative: dict[str, str] = {}
    for i, r in enumerate(reports):
        ident = Identity(_place(r, root, relative), _text(r.get("kernel")), _text(r.get("target")))
        values = figures_of(r, crashed=bool(crashed and i in crashed))
        got = Figures(values, 1, _text(r.get("input")), r.get("compiler"), r.get("reason"), Build.of(r))
        kept = rows.get(ident)
        if kept is not None:
            best = got if _worse_copy(values, kept.values) else kept
            got = Figures(best.values, kept.count + 1, best.input, best.compiler, best.reason, best.build)
        rows[ident] = got
    return rows


def _grew(old: Any, new: Any, th: Thresholds) -> bool:
    if not (isinstance(old, int) and isinstance(new, int)) or new <= old:
        return False
    return new - old >= max(1, th.min_bytes) and (old == 0 or (new - old) / old >= th.min_ratio)


_COMPARED = ("status", "scratch_bytes", "threads_per_eu", "max_work_group_size")


def judge(old: Figures, new: Figures, th: Thresholds) -> tuple[Change, tuple[str, ...], tuple[str, ...]]:
    """Whether `new` is worse, better or the same as `old`, why, and every changed field."""
    if old.values == new.values and UNREADABLE not in old.values.values():
        return Change.SAME, (), ()  # most of a library between two builds; nothing below can differ
    unreadable = [n for n in _COMPARED if UNREADABLE in (old.get(n), new.get(n))]
    changed = tuple(n for n in fields() if old.get(n) != new.get(n))
    if unreadable:
        return Change.UNREADABLE, tuple(f"{n} unreadable" for n in unreadable), changed
    if (old.status == "not_applicable") != (new.status == "not_applicable"):
        return ((Change.ADDED, ("now applicable on this target",), changed) if old.status == "not_applicable"
                else (Change.REMOVED, ("no longer applicable on this target",), changed))
    worse: list[str] = []
    better: list[str] = []
    if new.status in FAILING and old.status not in FAILING:
        worse.append(f"status {old.status} -> {new.status}")
    elif old.status in FAILING and new.status not in FAILING:
        better.append(f"status {old.status} -> {new.status}")
    o, n = old.get("scratch_bytes"), new.get("scratch_bytes")
    o, n = (0 if o == NA and new.status == "ok" else o), (0 if n == NA and old.status == "ok" else n)
    if _grew(o, n, th):
        worse.append(f"scratch {o} -> {n} bytes")
    elif _grew(n, o, th):
        better.append(f"scratch {o} -> {n} bytes")
    o, n = old.get("threads_per_eu"), new.get("threads_per_eu")
    if isinstance(o, int) and isinstance(n, int) and o != n:
        (worse if n < o else better).append(f"threads per EU {o} -> {n}")
    o, n, need = old.get("max_work_group_size"), new.get("max_work_group_size"), new.get("work_group_size")
    if isinstance(o, int) and isinstance(n, int) and isinstance(need, int) and n < need <= o:
        worse.append(f"largest work-group {o} -> {n}, below the {need} it requires")
    o, n = old.get("loop_scratch_bytes"), new.get("loop_scratch_bytes")
    if _grew(o, n, th):
        worse.append(f"scratch per loop iteration {o} -> {n} bytes")
    elif _grew(n, o, th):
        better.append(f"scratch per loop iteration {o} -> {n} bytes")
    cause = environment_change(old.build, new.build) if (worse or better) and old.compiler == new.compiler else None
    if cause:
        (worse or better).append(f"the compiler's environment alone changed: {cause}")
    if worse:
        return Change.WORSE, tuple(worse), changed
    if better:
        return Change.BETTER, tuple(better), changed
    return Change.SAME, (), changed


def compare(old: dict[Identity, Figures], new: dict[Identity, Figures], th: Thresholds = Thresholds(),
            *, old_label: str = "old", new_label: str = "new") -> DiffResult:
    """Every identity of either side, judged; the targets only one side has are set apart
    (their kernels are neither added nor removed: that side did not look there)."""
    old_targets = {i.target for i in old}
    new_targets = {i.target for i in new}
    both = old_targets & new_targets
    out = DiffResult(old_label=old_label, new_label=new_label,
                     only_old_targets=tuple(sorted(old_targets - new_targets)),
                     only_new_targets=tuple(sorted(new_targets - old_targets)))
    entries = out.entries
    for ident in sorted(old.keys() | new.keys()):
        if ident.target not in both:
            continue
        a, b = old.get(ident), new.get(ident)
        if a is None or b is None:
            present = b if a is None else a
            applicable = present is not None and present.status != "not_applicable"
            if not applicable:
                continue  # n/a on the only side that has it: nothing to compare
            entries.append(Entry(ident, Change.ADDED if a is None else Change.REMOVED, a, b))
            continue
        change, why, changed = judge(a, b, th)
        if change is Change.ADDED or change is Change.REMOVED or a.status != "not_applicable" \
                or b.status != "not_applicable":
            entries.append(Entry(ident, change, a, b, why, changed))
    return out
