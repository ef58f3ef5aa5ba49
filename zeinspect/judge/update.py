"""`zeinspect ratchet update`: rewrite the ratchet to what was measured, tightening only.

Entries are tightened to the largest figures measured over the (kernel, target) reports
they match and removed when the kernel they name no longer uses scratch memory.  Where the
audit measured every matched report's loop traffic (--cost, `cost: true`, the loop rule),
the entry records it (`loop=BYTES`) beside the bytes.  Entries
for kernels that this audit did not see at all are kept (the audit may cover a subset of
the project) and said so.  Growing an entry or adding one for a new scratch user needs
`--allow-grow`, and is then reported.  The file is replaced atomically.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Verdict
from .audit import AuditResult, measured, most_loop_traffic
from .ratchet import NATIVE, Ratchet, append, kernel_matches, remove, with_figures


@dataclass
class UpdatePlan:
    changes: list[str] = field(default_factory=list)
    grew: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """What would grow or be added without --allow-grow, or cannot be listed at all."""
    kept: list[str] = field(default_factory=list)


def update(ratchet: Ratchet, result: AuditResult, *, allow_grow: bool) -> UpdatePlan:
    plan = UpdatePlan()
    reports = [j.report for j in result.judgements if j.report is not None]
    doomed = []
    for entry in list(ratchet.entries):
        matched = [j for j in result.judgements if j.entry is entry and j.report is not None]
        users = [r for j in matched if (r := j.report) is not None and r.uses_scratch
                 and j.verdict not in (Verdict.OVERFLOW, Verdict.FAILED)]
        if not matched and not any(kernel_matches(entry.kernel, r.kernel) for r in reports):
            plan.kept.append(f"line {entry.lineno}: {entry.kernel} was not in this audit; kept")
            continue
        if not users:
            doomed.append(entry)
            plan.changes.append(f"line {entry.lineno}: removed {entry.kernel} {entry.targets} (no scratch memory now)")
            continue
        private = max(measured(r)[0] for r in users)
        spill = max(measured(r)[1] for r in users)
        loop = most_loop_traffic(users) if ratchet.dialect == NATIVE else None  # the tab dialect has no column
        loop_grows = entry.loop is not None and loop is not None and loop > entry.loop
        grows = private > entry.private or spill > entry.spill or loop_grows
        if grows and not allow_grow:
            plan.refused.append(f"line {entry.lineno}: {entry.kernel} would grow to {private} private, {spill} spill"
                                f"{_loop(loop)} (from {entry.private}, {entry.spill}{_loop(entry.loop)}); rerun with "
                                "--allow-grow to accept")
            private, spill = min(private, entry.private), min(spill, entry.spill)
            loop = entry.loop if loop_grows else loop
        if (private, spill) != (entry.private, entry.spill) or (loop is not None and loop != entry.loop):
            verb = "grew" if grows and allow_grow else "tightened"
            text = (f"line {entry.lineno}: {verb} {entry.kernel} {entry.targets} to {private} private, {spill} spill"
                    f"{_loop(loop)} (was {entry.private}, {entry.spill}{_loop(entry.loop)})")
            (plan.grew if verb == "grew" else plan.changes).append(text)
            with_figures(ratchet, entry, private, spill, loop)
    if doomed:
        remove(ratchet, doomed)

    # One line per kernel name, as a ratchet line names a kernel (whatever file or image holds it:
    # a library's images each carry a copy of its kernels): the most it uses anywhere.
    new: dict[str, list] = {}
    for j in result.judgements:
        if j.report is None:
            continue
        if j.verdict is Verdict.NEW:
            new.setdefault(j.report.kernel, []).append(j.report)
        elif j.verdict in (Verdict.OVERFLOW, Verdict.FAILED):
            plan.refused.append(f"{j.report.kernel} on {j.report.target} is over the scratch cap or did not build: "
                                "a ratchet entry cannot allow that")
    today = datetime.date.today().isoformat()
    for kernel, group in new.items():
        inp = group[0].input
        if any(r.scratch_unknown for r in group):
            plan.refused.append(f"{kernel}: spills of unknown size (build log without figures); list it by hand")
            continue
        private = max(measured(r)[0] for r in group)
        spill = max(measured(r)[1] for r in group)
        if not allow_grow:
            plan.refused.append(f"{kernel} ({inp}) uses scratch memory ({private} private, {spill} spill) and is not "
                                "listed; rerun with --allow-grow to add it")
            continue
        loop = most_loop_traffic(group) if ratchet.dialect == NATIVE else None
        append(ratchet, kernel, "*", private, spill, f"added by zeinspect ratchet update {today}", Path(inp).stem,
               loop=loop)
        plan.grew.append(f"added {kernel} * {private} private, {spill} spill{_loop(loop)}")
    return plan


def _loop(loop: int | None) -> str:
    return f", loop={loop}" if loop is not None else ""
