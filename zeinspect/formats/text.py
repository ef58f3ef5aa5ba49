"""Plain-text output: the per-kernel card (`zeinspect kernel`) and the table (`zeinspect inspect`).

Pure functions of reports; they return strings and never print.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from .. import names
from ..model import CAUSES, KernelReport, Status, built_under
from .common import fmt_bytes, fmt_opt, fold_rows, safe
from .labels import labels as label_names

MARK_OVERFLOW = "OVER"
MARK_FAILED = "FAIL"
MARK_NOT_APPLICABLE = "n/a"
MARK_SLM = "SLM"
MARK_WG = "WG"
STATUS_MARKS = {Status.SCRATCH_OVERFLOW: MARK_OVERFLOW, Status.BUILD_FAILED: MARK_FAILED,
                Status.SLM_OVERFLOW: MARK_SLM, Status.WG_OVERFLOW: MARK_WG,
                Status.NOT_APPLICABLE: MARK_NOT_APPLICABLE}
"""A cell's mark for a report that did not build, or cannot launch or run there."""


def cell(report: KernelReport | None) -> str:
    if report is None:
        return ""
    if report.path_taken is False:  # built to be compared with the native image: never run there
        return f"({_cell(report)})"
    return _cell(report)


def _cell(report: KernelReport) -> str:
    if report.status in STATUS_MARKS:
        return STATUS_MARKS[report.status]
    used = report.shown_scratch_bytes
    if used:
        return fmt_bytes(used)
    if report.log_spilled_regs:
        return "spill?"
    return "-"


def _finding(r: KernelReport) -> bool:
    return r.applicable and r.path_taken is not False and (r.status is not Status.OK or r.uses_scratch)


def summary(reports: list[KernelReport]) -> str:
    """One line: kernels, targets, and how many use scratch, do not build, are not applicable, are clean."""
    kernels: dict[tuple[str, str], list[KernelReport]] = {}
    for r in reports:
        kernels.setdefault(r.identity, []).append(r)
    over = sum(1 for g in kernels.values() if any(r.status is Status.SCRATCH_OVERFLOW for r in g))
    failed = sum(1 for g in kernels.values() if any(r.status is Status.BUILD_FAILED for r in g))
    scratch = sum(1 for g in kernels.values() if any(r.built and r.uses_scratch for r in g))
    na = sum(1 for r in reports if not r.applicable)
    clean = sum(1 for g in kernels.values() if not any(_finding(r) for r in g))
    unchecked = sum(1 for r in reports if r.applicable and r.unchecked_requirements)
    return (f"{len(kernels)} kernels on {len({r.target for r in reports})} targets: {scratch} use scratch memory, "
            f"{over} over the scratch cap, {failed} did not build, {clean} clean; "
            f"{na} kernel-target pairs not applicable"
            + (f"; {unchecked} audited with device requirements assumed met (not decidable offline)"
               if unchecked else "") + built_under(reports))


GROUPED_FROM = 20
"""Rows past which a table leads with its findings grouped by cause and by family."""


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 and n % 1024 == 0 else fmt_bytes(n)


def grouped(reports: list[KernelReport], families: int = 10) -> list[str]:
    """A library's findings grouped as a reader decides on them: by cause, as the compiler
    tells them apart, then by family (the kernels one template makes), the costliest first.
    Counts are distinct kernels; every report stays in the rows and the JSON underneath."""
    by_cause: dict[str, set] = {}
    stack: list[KernelReport] = []
    for r in reports:
        if r.cause is not None:
            by_cause.setdefault(r.cause, set()).add(r.identity)
            if r.cause == "stack_calls":
                stack.append(r)
    if not by_cause:
        return []
    out = ["by cause: " + "; ".join(f"{CAUSES[c].split(' (')[0]} {len(k)}" for c, k in
                                    sorted(by_cause.items(), key=lambda kv: -len(kv[1])))]
    if stack:
        low, high = min(r.spill_bytes or 0 for r in stack), max(r.spill_bytes or 0 for r in stack)
        reserved = _kib(low) if low == high else f"{_kib(low)} to {_kib(high)}"
        callees = sorted({c for r in stack for c in r.callees})
        named = (f"the callees, as each zebin's symbol table names them: "
                 f"{', '.join(safe(names.readable(c)) for c in callees[:5])}"
                 + (f" and {len(callees) - 5} more" if len(callees) > 5 else "")) if callees else \
            "IGC's log names the kernels, not the callees"
        out.append(f"  stack calls: {len(by_cause['stack_calls'])} kernels make calls IGC did not inline; each "
                   f"reserves {reserved} of scratch for the call stack (in its spill figure); {named}")
    members: dict[str, set] = {}
    users: dict[str, dict] = {}
    for r in reports:
        name = names.family(r.kernel)
        members.setdefault(name, set()).add(r.identity)
        if r.cause is not None:
            users.setdefault(name, {})[r.identity] = max(r.shown_scratch_bytes,
                                                         users.get(name, {}).get(r.identity, 0))
    ranked = sorted(users.items(), key=lambda kv: (-len(kv[1]), -max(kv[1].values()), kv[0]))
    if ranked and any(len(members[name]) > 1 for name, _ in ranked):
        out.append("by family (kernels one template makes; the most scratch users first):")
        for name, used in ranked[:families]:
            low, high = min(used.values()), max(used.values())
            span = fmt_bytes(low) if low == high else f"{fmt_bytes(low)}-{fmt_bytes(high)}"
            out.append(f"  {safe(names.family_name(next(iter(used))[1]))}: "
                       f"{len(members[name])} instances, {len(used)} use scratch ({span} per thread)")
        if len(ranked) > families:
            out.append(f"  ... and {len(ranked) - families} more families with scratch users")
    return out


def table(reports: list[KernelReport], *, title: str | None = None, verbose: bool = True,
          ledger: str | None = None) -> str:
    """Kernels as rows, targets as columns, scratch bytes per hardware thread in the cells.

    Leads with a summary (and the ledger's line under it, when given); without `verbose` only
    kernels with a finding on some target are rows (a library of thousands of clean kernels
    reads as its findings)."""
    if not reports:
        return "no kernels\n" + (f"{ledger}\n" if ledger else "")
    targets: list[str] = []
    rows: dict[tuple[str, str], dict[str, KernelReport]] = {}
    for r in reports:
        if r.target not in targets:
            targets.append(r.target)
        rows.setdefault((r.input, r.kernel), {})[r.target] = r
    hidden = 0
    several_inputs = len({k[0] for k in rows}) > 1  # before hiding: a row says its image when others exist
    if not verbose:
        shown = {k: v for k, v in rows.items() if any(_finding(r) for r in v.values())}
        hidden = len(rows) - len(shown)
        rows = shown
    readable = label_names([kernel for _, kernel in rows])
    places = _places([inp for inp, _ in rows]) if several_inputs else {}
    rows, elsewhere = fold_rows(rows, _reads)
    labels = [safe((f"{places[inp]}:{readable[kernel]}" if several_inputs else readable[kernel])
                   + (f" (+{len(elsewhere[inp, kernel])} more)" if (inp, kernel) in elsewhere else ""))
              for inp, kernel in rows]
    first = max([len("kernel")] + [len(label) for label in labels if len(label) <= LABEL_COLUMN])
    widths = [max(len(safe(t)), 5) for t in targets]
    lines = []
    if title:
        lines.append(title)
    lines.append(summary(reports))
    if ledger:
        lines.append(ledger)
    if len(rows) > GROUPED_FROM:
        lines += grouped(reports)
    if rows:
        lines.append("  ".join(["kernel".ljust(first)] + [safe(t).rjust(w) for t, w in zip(targets, widths)]))
    for label, by_target in zip(labels, rows.values()):
        cells = [cell(by_target.get(t)).rjust(w) for t, w in zip(targets, widths)]
        if len(label) > first:
            # A label longer than the column (a kernel told apart by many arguments) stands on
            # its own line, its cells under it: every other row keeps a readable width.
            lines.append(label)
            label = ""
        lines.append("  ".join([label.ljust(first)] + cells))
    if hidden:
        lines.append(f"({hidden} kernels without findings not shown: -v lists them)")
    if elsewhere:
        lines.append("the same kernel, with the same figures, in more places (one row each, marked +N):")
        for (_, kernel), more in elsewhere.items():
            shown_places = ", ".join(safe(places.get(p, p)) for p, _ in more[:PLACES_SHOWN])
            rest = f", and {len(more) - PLACES_SHOWN} more" if len(more) > PLACES_SHOWN else ""
            lines.append(f"  {safe(readable[kernel])}: also in {shown_places}{rest}")
    lines += costliest(reports)
    lines += build_cost_lines(reports)
    lines.append("")
    lines.append(f"cells: scratch bytes per hardware thread (spill + private); - none; "
                 f"{MARK_OVERFLOW} over the per-thread scratch cap; {MARK_SLM} over the shared local memory "
                 f"(cannot launch); {MARK_WG} a work-group larger than the kernel can launch; {MARK_FAILED} did not "
                 "build; "
                 f"{MARK_NOT_APPLICABLE} has a device requirement the target does not meet"
                 + ("; (N) a JIT path the runtime does not take there, built to compare with its native image"
                    if any(r.path_taken is False for r in reports) else ""))
    return "\n".join(lines) + "\n"


UNSEEN = "no scratch message the ISA tells apart here (private accesses through a bindless surface)"


def cost_text(cost: dict) -> str:
    """A report's cost (inputs.isa.ScratchCost's JSON) in words."""
    moved = ", ".join(f"{b} at depth {d}" for d, b in cost["bytes_by_depth"].items())
    if not any(cost["messages"].values()):
        return UNSEEN
    if not cost["in_loops"]:
        return f"outside loops only ({moved or 'no message'} bytes in all): paid once, not per iteration"
    return (f"{cost['per_iteration_bytes']} bytes per iteration of its innermost loop with any (depth "
            f"{cost['loop_depth']}); bytes moved by depth: {moved}")


def costliest(reports: list[KernelReport], limit: int = 10) -> list[str]:
    """The kernels whose scratch traffic in loops costs most (--cost), per target, the costliest first."""
    measured = [r for r in reports if r.cost is not None]
    if not measured:
        return []
    ranked = sorted(measured, key=lambda r: (-r.cost["per_iteration_bytes"], r.kernel, r.target))  # type: ignore[index]
    out = ["scratch traffic (bytes per iteration of the innermost loop with any; from IGC's ISA):"]
    labels = label_names([r.kernel for r in ranked])
    for r in ranked[:limit]:
        cost = r.cost or {}
        shown = (f"{cost['per_iteration_bytes']} B/iteration at depth {cost['loop_depth']}" if cost["in_loops"]
                 else "outside loops only" if any(cost["messages"].values()) else UNSEEN)
        out.append(f"  {safe(labels[r.kernel])} on {safe(r.target)}: {shown}")
    outside = sum(1 for r in measured if not (r.cost or {}).get("in_loops") and any((r.cost or {})["messages"].values()))
    out.append(f"  ({len(measured)} measured; {outside} touch scratch outside loops only)")
    return out


def build_cost_lines(reports: list[KernelReport]) -> list[str]:
    """The compiles that cost the build the most (formats.json.build_cost), one line each; none
    for a single compile, whose time the summary of the run already is."""
    from ..judge.build_cost import build_cost

    ranked = build_cost(reports)
    if len(ranked) < 2:
        return []
    out = ["build cost, the compiles that took longest here (IGC's retries: [RetryManager] rebuilds):"]
    for row in ranked:
        kernels = f"{row['kernels']} kernel{'s' if row['kernels'] != 1 else ''}"
        retried = row["retried"]
        again = (f", {row['retries']} retries ({', '.join(names.short(k) for k in sorted(retried)[:3])}"
                 f"{', ...' if len(retried) > 3 else ''})" if retried else "")
        out.append(f"  {row['seconds']:7.1f} s  {safe(row['input'])} on {safe(row['target'])}: {kernels}{again}")
    return out


LABEL_COLUMN = 100
"""The widest the kernel column grows; a longer label stands on a line of its own."""
PLACES_SHOWN = 8
"""Places listed for a row found in several (the JSON has every report)."""


def _reads(by_target: dict[str, KernelReport]) -> tuple:
    """What a table row reads as: its kernel (KernelReport.identity) and its cells."""
    return next(iter(by_target.values())).identity, tuple(sorted((t, cell(r)) for t, r in by_target.items()))


def _places(inputs: list[str]) -> dict[str, str]:
    """Each input as a row names it, relative to what the user gave: a package's members by
    their path in the package (the summary names the package once), files by their path under
    the folder they share (a folder's files, a package folder's libraries), one file by its
    name; an image keeps its place in its file (`lib.so[.tgtimg[12]]`)."""
    unique = list(dict.fromkeys(inputs))
    split = {inp: _file_and_place(inp) for inp in unique if "!" not in inp}
    folders = {os.path.dirname(file) for file, _ in split.values()}
    try:
        common = os.path.commonpath(list(folders)) if folders else ""
    except ValueError:  # absolute and relative paths mixed: each as given
        common = ""
    return {inp: inp.split("!", 1)[1] if inp not in split else
            (os.path.relpath(split[inp][0], common) if common else split[inp][0]) + split[inp][1] for inp in unique}


def _file_and_place(inp: str) -> tuple[str, str]:
    """`lib.so(member.o)[image]` -> ('lib.so', '(member.o)[image]'): the file and where in it."""
    name_at = inp.rfind("/") + 1
    cut = min((i for i in (inp.find("(", name_at), inp.find("[", name_at)) if i >= 0), default=len(inp))
    return inp[:cut], inp[cut:]


def _row(r: KernelReport) -> list[str]:
    from ..occupancy import of

    headroom = r.headroom_bytes
    occupancy = of(r) if r.applicable else None
    return [
        safe(r.target), r.ip or "?", r.status.value, fmt_opt(r.simd), fmt_opt(r.grf), fmt_opt(r.spill_bytes),
        fmt_opt(r.private_bytes), fmt_opt(r.scratch_bytes), fmt_opt(r.slm_bytes),
        "-" if r.log_spilled_regs is None and r.built else fmt_opt(r.log_spilled_regs),
        "?" if headroom is None else str(headroom),
        "?" if occupancy is None else str(occupancy.threads_per_eu),
        "?" if occupancy is None else str(occupancy.max_work_group_size),
    ]


CARD_COLUMNS = ["target", "ip", "status", "simd", "grf", "spill", "private", "scratch", "slm", "log-regs", "headroom",
                "thr/EU", "max-wg"]


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(v.ljust(w) if i < 3 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def cards(reports: list[KernelReport]) -> str:
    """One card per kernel: a row of figures per target, then per IP the compiler, command and log."""
    by_kernel: OrderedDict[tuple[str, str], list[KernelReport]] = OrderedDict()
    for r in reports:
        by_kernel.setdefault((r.input, r.kernel), []).append(r)
    out = []
    for (inp, kernel), group in by_kernel.items():
        out.append(f"kernel {safe(names.short(kernel))}   ({safe(inp)}, {group[0].shape.describe()})")
        if names.short(kernel) != kernel:
            out.append(f"  symbol {safe(kernel)}")
        out.append("  figures per hardware thread in bytes; log-regs = registers the build log says spilled; "
                   "headroom = bytes left below the scratch cap; thr/EU = hardware threads per EU at its register "
                   "count; max-wg = the largest work-group it can launch")
        out.extend("  " + line for line in _grid([CARD_COLUMNS] + [_row(r) for r in group]))
        seen_ip: set = set()
        for r in group:
            key = (r.ip, r.compiler)
            if key in seen_ip:
                continue
            seen_ip.add(key)
            shared = ", ".join(safe(x.target) for x in group if (x.ip, x.compiler) == key)
            out.append(f"  [{shared}] ip {r.ip or '?'}, compiled by {r.compiler or 'n/a (existing binary)'}")
            if r.environment:
                out.append(f"    built under {safe(', '.join(f'{k}={v}' for k, v in r.environment))}")
            if r.scratch_limit_bytes is not None and r.applicable:
                if r.needed_scratch_bytes is not None:
                    what = f"needs {r.needed_scratch_bytes} bytes of scratch space"
                    used = r.needed_scratch_bytes
                else:
                    used = r.scratch_space_bytes or 0
                    what = (f"scratch space the compiler reserves {used} (spill and private in scratch, "
                            "rounded up by the compiler)")
                out.append(f"    scratch cap {r.scratch_limit_bytes} bytes per thread; {what}; "
                           f"headroom {r.scratch_limit_bytes - used}")
            if r.cost is not None:
                out.append(f"    scratch traffic: {cost_text(r.cost)}")
            if r.driver_private_bytes is not None and r.driver_private_bytes != r.private_bytes:
                out.append(f"    driver: zeKernelGetProperties would report privateMemSize {r.driver_private_bytes} "
                           f"(the zebin says {r.private_bytes})")
            if r.options:
                out.append(f"    options: {safe(r.options)}")
            if r.reason:
                out.append(f"    reason: {safe(r.reason)}")
            for note in r.notes:
                out.append(f"    note: {safe(note)}")
            for line in r.log:
                out.append(f"    log: {safe(line)}")
            if r.command:
                out.append(f"    reproduce: {safe(r.command)}")
        out.append("")
    return "\n".join(out)


def side_by_side(runtime: list[KernelReport], aot: list[KernelReport]) -> str:
    """`kernel --runtime --compare-aot`: the driver's figures, the driver's own binary, ocloc's."""
    out = []
    for r in runtime:
        twin = next((a for a in aot if a.kernel == r.kernel), None)
        binary = (r.extra or {}).get("native_binary_figures") or {}
        out.append(f"kernel {safe(r.kernel)}   ({safe(r.input)}) on {safe(r.target)}, ip {r.ip or '?'}")
        rows = [["figure", "runtime (zeKernelGetProperties)", "driver's native binary (.ze_info)",
                 f"AOT ({twin.compiler})" if twin else "AOT"]]
        for label, attr, key in (("status", "status", None), ("simd", "simd", "simd"), ("grf", "grf", "grf"),
                                 ("spill", "spill_bytes", "spill_bytes"), ("private", "private_bytes", "private_bytes"),
                                 ("slm", "slm_bytes", "slm_bytes")):
            value = getattr(r, attr)
            value = getattr(value, "value", value)
            other = getattr(twin, attr) if twin else None
            other = getattr(other, "value", other)
            rows.append([label, fmt_opt(value), "-" if key is None else fmt_opt(binary.get(key)),
                         fmt_opt(other) if twin else "n/a"])
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        out.extend("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows)
        for note in r.notes:
            out.append(f"  note: {safe(note)}")
        if r.reason:
            out.append(f"  reason: {safe(r.reason)}")
        for line in r.log:
            out.append(f"  log: {safe(line)}")
        out.append("")
    return "\n".join(out)
