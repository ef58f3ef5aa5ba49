"""The ledger's account: every declared kernel reported, excluded for a reason, or unread.

A pure function of what the inputs declared (ledger.Part), the reports, and the run's
request (targets, `--kernel` filter, the ratchet's `unreadable` lines).  For one declared
kernel of one part:

1. the part is left out by design (`Part.excluded`), or the kernel is IGC's own, or `--kernel`
   does not select it: excluded, with that reason;
2. the part could not be read: unread, with why (unless the ratchet accepts it);
3. a native image for none of the targets asked for: excluded;
4. otherwise every target the part is for needs a report of the kernel (or of its whole
   module, when a module failed before naming kernels): a target without one leaves the
   kernel unread; a kernel reported only as not applicable is excluded as such.

Per input, a kernel name counts once: unread if any part that declares it is unread, else
reported if any reports it, else excluded.  Unread is a failure (the run exits 3), never a
note: `Coverage.incidents` says which part, which kernels and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import names
from ..ledger import STOPPED, Exclusion, Part
from ..model import WHOLE_MODULE, KernelReport, Status

NAMED = 8
"""Kernels an incident names one by one (the JSON names them all)."""


@dataclass
class PartAccount:
    part: Part
    reported: list[str] = field(default_factory=list)
    excluded: dict[str, Exclusion] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)
    """Kernel -> why it has no report."""
    undeclared: list[str] = field(default_factory=list)
    """Kernels reported that the part does not declare (IGC adds some; a table can be short)."""

    @property
    def unread_whole(self) -> str | None:
        """Why a part that declares no table could not be read (its kernels are unknown)."""
        return self.part.unread if self.part.kernels is None and self.part.unread else None

    def to_json(self) -> dict:
        return {**self.part.to_json(), "reported": self.reported,
                "excluded_kernels": {k: v.value for k, v in self.excluded.items()},
                "unread_kernels": self.unread, "undeclared_reported": self.undeclared}


@dataclass
class InputAccount:
    """One input's totals, each kernel name counted once."""

    input: str
    parts: list[PartAccount] = field(default_factory=list)

    def _states(self) -> dict[str, tuple[int, str]]:
        """Kernel -> (rank, what): 0 excluded (the reason), 1 reported, 2 unread (why)."""
        states: dict[str, tuple[int, str]] = {}
        for p in self.parts:
            for kernel, reason in p.excluded.items():
                states[kernel] = max(states.get(kernel, (-1, "")), (0, reason.value))
            for kernel in p.reported:
                states[kernel] = max(states.get(kernel, (-1, "")), (1, ""))
            for kernel, why in p.unread.items():
                states[kernel] = max(states.get(kernel, (-1, "")), (2, why))
        return states

    @property
    def declared(self) -> int | None:
        if all(p.part.kernels is None for p in self.parts):
            return None
        return len({k for p in self.parts if p.part.kernels is not None for k in p.part.kernels})

    @property
    def not_declared(self) -> list[str]:
        """Parts whose kind has no table of kernels."""
        return [p.part.label for p in self.parts if p.part.kernels is None]

    def counts(self) -> dict:
        states = self._states()
        excluded: dict[str, int] = {}
        for rank, what in states.values():
            if rank == 0:
                excluded[what] = excluded.get(what, 0) + 1
        unread_parts = [p.part.label for p in self.parts if p.unread_whole]
        parts_out: dict[str, int] = {}
        for p in self.parts:
            if p.part.kernels is None and p.part.excluded is not None:
                parts_out[p.part.excluded.value] = parts_out.get(p.part.excluded.value, 0) + 1
        return {"declared": self.declared, "reported": sum(1 for r, _ in states.values() if r == 1),
                "excluded": dict(sorted(excluded.items())), "unread": sum(1 for r, _ in states.values() if r == 2),
                "unread_parts": unread_parts, "not_declared": [p.part.label for p in self.parts if p.part.kernels
                                                               is None and p.part.excluded is None],
                "excluded_parts": dict(sorted(parts_out.items()))}

    def to_json(self) -> dict:
        return {"input": self.input, **self.counts(), "parts": [p.to_json() for p in self.parts]}


@dataclass
class Coverage:
    inputs: list[InputAccount] = field(default_factory=list)

    def totals(self) -> dict:
        out: dict = {"declared": 0, "reported": 0, "excluded": {}, "unread": 0, "unread_parts": 0,
                     "not_declared": 0, "excluded_parts": {}}
        declared_any = False
        for one in self.inputs:
            c = one.counts()
            if c["declared"] is not None:
                declared_any = True
                out["declared"] += c["declared"]
            out["reported"] += c["reported"]
            out["unread"] += c["unread"]
            out["unread_parts"] += len(c["unread_parts"])
            out["not_declared"] += len(c["not_declared"])
            for why, n in c["excluded"].items():
                out["excluded"][why] = out["excluded"].get(why, 0) + n
            for why, n in c["excluded_parts"].items():
                out["excluded_parts"][why] = out["excluded_parts"].get(why, 0) + n
        if not declared_any:
            out["declared"] = None
        out["excluded"] = dict(sorted(out["excluded"].items()))
        return out

    @property
    def whole(self) -> bool:
        """Every declared kernel reported or excluded, and every part read."""
        t = self.totals()
        return not t["unread"] and not t["unread_parts"]

    def incidents(self, *, besides: str | None = STOPPED) -> list[str]:
        """One line per part with kernels left unread: what exits 3.  `besides`: a reason said
        once elsewhere (a stopped run's line: exit 130), not once per part."""
        out = []
        for one in self.inputs:
            for p in one.parts:
                if p.unread_whole:
                    out.append(f"{p.part.label}: unread, its kernels unknown: {p.unread_whole}")
                    continue
                if not p.unread:
                    continue
                by_why: dict[str, list[str]] = {}
                for kernel, why in p.unread.items():
                    by_why.setdefault(why, []).append(kernel)
                for why, kernels in by_why.items():
                    if why == besides:
                        continue
                    shown = ", ".join(names.short(k) for k in kernels[:NAMED])
                    more = f" and {len(kernels) - NAMED} more" if len(kernels) > NAMED else ""
                    out.append(f"{p.part.label}: {len(kernels)} declared "
                               f"{'kernel' if len(kernels) == 1 else 'kernels'} unread ({why}): {shown}{more}")
        return out

    def to_json(self) -> dict:
        return {"total": self.totals(), "inputs": [one.to_json() for one in self.inputs]}


Accepts = Callable[[str], "str | None"]
"""The ratchet's word on a kernel that cannot be read: its reason, or None."""


def account(parts: Iterable[Part], reports: Iterable[KernelReport], *,
            targets: Iterable[tuple[str, str | None]] | None = None, narrowed: bool = False,
            kernels: tuple[str, ...] = (), accepts: Accepts | None = None, stopped: bool = False) -> Coverage:
    """The ledger of a run.  `targets`: the (name, IP) pairs built for (None: nothing was
    built); `narrowed`: native images were narrowed to those targets (else read as they are);
    `kernels`: the `--kernel` patterns; `accepts`: the ratchet's `unreadable` lines."""
    wanted = list(targets) if targets is not None else None
    by_part: dict[str, dict[str, list[KernelReport]]] = {}
    for r in reports:
        by_part.setdefault(r.input, {}).setdefault(r.kernel, []).append(r)
    out: dict[str, InputAccount] = {}
    seen: set[tuple] = set()
    for part in parts:
        if (part.label, part.kernels) in seen:
            continue  # declared twice (a module built once per recorded shape): the first one counts
        seen.add((part.label, part.kernels))
        acc = _part(part, by_part.get(part.label, {}), _expected_targets(part, wanted, narrowed), kernels, accepts,
                    narrowed=narrowed and wanted is not None)
        if stopped:  # what a stopped run did not reach is unread for that reason, said once
            acc.unread = {k: STOPPED if why.startswith("no report") else why for k, why in acc.unread.items()}
        out.setdefault(part.input, InputAccount(part.input)).parts.append(acc)
    return Coverage(list(out.values()))


def _part(part: Part, found: dict[str, list[KernelReport]], expected: list[str] | None,
          kernels: tuple[str, ...], accepts: Accepts | None, *, narrowed: bool = False) -> PartAccount:
    acc = PartAccount(part)
    declared = part.kernels if part.kernels is not None else tuple(k for k in found if k != WHOLE_MODULE)
    whole = found.get(WHOLE_MODULE, [])
    for kernel in declared:
        reason = _excluded(part, kernel, kernels, expected)
        if reason is not None:
            acc.excluded[kernel] = reason
            continue
        if part.unread is None and _unplaced(part, found.get(kernel, []) + whole, narrowed):
            acc.excluded[kernel] = Exclusion.DEVICE_UNKNOWN
            continue
        why = part.unread or _missing(found.get(kernel, []) + whole, expected)
        if why is None:
            got = found.get(kernel, []) + whole
            if got and all(r.status is Status.NOT_APPLICABLE for r in got):
                acc.excluded[kernel] = Exclusion.NOT_APPLICABLE
            else:
                acc.reported.append(kernel)
        elif accepts is not None and accepts(kernel) is not None:
            acc.excluded[kernel] = Exclusion.ACCEPTED
        else:
            acc.unread[kernel] = why
    if part.kernels is not None:
        own = set(part.kernels)
        acc.undeclared = sorted(k for k in found if k not in own and k != WHOLE_MODULE)
    return acc


def _expected_targets(part: Part, targets: list[tuple[str, str | None]] | None, narrowed: bool
                      ) -> list[str] | None:
    """The targets a part needs a report on: every one built for when it is built here; for a
    native image narrowed to the targets asked for, those it holds code for; None: any one
    report will do (a native image read as it is)."""
    if part.targets is not None:
        return list(part.targets)
    if targets is None:
        return None
    if part.compiled:
        return [name for name, _ in targets]
    if part.ips and narrowed:
        return [name for name, ip in targets if ip in part.ips]
    return None


def _excluded(part: Part, kernel: str, patterns: tuple[str, ...], expected: list[str] | None) -> Exclusion | None:
    if part.excluded is not None:
        return part.excluded
    if names.is_internal(kernel):
        return Exclusion.INTERNAL
    if patterns and not any(names.matches(p, kernel) for p in patterns):
        return Exclusion.FILTERED
    if part.unread is None and part.ips and expected == []:
        return Exclusion.OTHER_TARGETS
    return None


def _unplaced(part: Part, got: list[KernelReport], narrowed: bool) -> bool:
    """A native image with no IP version, its reports dropped by narrowing to the targets."""
    return narrowed and not part.compiled and not part.ips and part.targets is None and not got


def _missing(got: list[KernelReport], expected: list[str] | None) -> str | None:
    """Why the kernel's reports are not whole, or None when they are."""
    if expected is None:
        return None if got else "no report"
    have = {r.target for r in got}
    missing = [t for t in expected if t not in have]
    if not missing:
        return None
    return "no report" if len(missing) == len(expected) else f"no report on {', '.join(missing)}"
