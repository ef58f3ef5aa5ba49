"""A profile joined with the reports (judge.profile), as people read it: the headline per
target, then one row per kernel by its share of the profiled kernel time (the biggest first), each
with its scratch, its scratch traffic in loops and its cause per target; the kernels with no
report and the reports with no time, counted and listed.  Text, JSON, HTML and the line a
diff's markdown carries.  Pure functions."""

from __future__ import annotations

import html

from .. import names
from ..judge.profile import ProfiledKernel, ProfileJoin
from ..model import Status
from .common import fmt_bytes, safe
from .text import LABEL_COLUMN, STATUS_MARKS

SHOWN = 40
"""Rows a text table shows (the JSON has every kernel)."""


def _cell(k: ProfiledKernel, target: str) -> str:
    if not k.reports:
        return "no report"
    if (status := k.status(target)) is not None:
        return STATUS_MARKS.get(Status(status), status) if status in set(Status) else status
    used = k.scratch(target)
    if not used:
        return "-"
    loop = k.loop_bytes(target)
    cause = (k.cause(target) or "").replace("_", " ")
    return f"{fmt_bytes(used)}{f' ({loop} B/iter)' if loop else ''} {cause}".strip()


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def split_line(joined: ProfileJoin) -> str:
    """The profile's device time in its four parts, which add up to it."""
    d = joined.device_split()
    unit = (lambda x: f"{x:g}") if joined.profile.source == "csv" else _ms
    other = ", ".join(f"{kind} {unit(t)}" for kind, t in d["not_kernels"].items())
    return (f"device time {unit(d['total'])} = kernels with a report {unit(d['kernels_with_report'])} + kernels "
            f"with no report {unit(d['kernels_without_report'])} + not kernels {unit(sum(d['not_kernels'].values()))}"
            + (f" ({other})" if other else "") + f" + unattributed {unit(d['unattributed'])}")


def mismatch_lines(joined: ProfileJoin) -> list[str]:
    """The user's driver against zeinspect, every figure that differs: what a report leads with."""
    found, how = joined.driver_check()
    if not found:
        return []
    return ([f"the driver's own figures (unitrace's Kernel Properties) differ from zeinspect's for {len(found)} "
             f"{'figure' if len(found) == 1 else 'figures'}, compared on {how}: zeinspect is wrong, or the driver "
             "built the kernel otherwise (another compiler, other options, another image):"]
            + [f"  MISMATCH: {safe(m.describe())}" for m in found])


def text(joined: ProfileJoin) -> str:
    p = joined.profile
    lines = [f"profile {safe(p.path)} ({p.source}{', ' + safe(p.device) if p.device else ''}): "
              f"{len(p.kernels)} kernels, {sum(k.launches for k in p.kernels.values())} launches, "
             + (f"{p.total:g} in the CSV's unit" if p.source == "csv" else f"{_ms(p.total)} of kernel time")]
    lines.append(f"  {split_line(joined)}; shares below are of kernel time")
    lines += [f"  {joined.headline(t)}" for t in joined.targets]
    if (note := joined.proxy_note()) is not None:
        lines.append(f"  note: {note}")
    heads = ["share", "launches", "kernel"] + joined.targets
    # A row is a kernel as the trace names it (its specializations' figures folded in the cells).
    rows = [[f"{100 * k.share:.1f} %", str(k.launches), safe(names.short(k.name))] +
            [_cell(k, t) for t in joined.targets] for k in joined.kernels[:SHOWN]]
    widths = [max(len(r[i]) for r in [heads, *rows] if i != 2 or len(r[i]) <= LABEL_COLUMN)
              for i in range(len(heads))]
    for r in [heads, *rows]:
        if len(r[2]) > widths[2]:
            # As in the report's table: a label longer than the column stands on its own line.
            lines.append(f"{' ' * (widths[0] + widths[1] + 4)}{r[2]}")
            r = [*r[:2], "", *r[3:]]
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    if len(joined.kernels) > SHOWN:
        rest = joined.kernels[SHOWN:]
        lines.append(f"... and {len(rest)} more kernels ({100 * sum(k.share for k in rest):.1f} % of the time)")
    missing = joined.unmatched
    lines.append(f"{len(missing)} profiled kernels have no report ({100 * sum(k.share for k in missing):.1f} % of the "
                 f"time: another library's, or not among the inputs){':' if missing else ''}")
    lines += [f"  {100 * k.share:.1f} % {safe(names.short(k.name))}" for k in missing[:SHOWN]]
    lines.append(f"{len(joined.unprofiled)} kernels with reports took no time in the profile")
    lines += [f"  {safe(names.short(n))}" for n in joined.unprofiled[:SHOWN]]
    return "\n".join(lines) + "\n"


def document(joined: ProfileJoin) -> dict:
    p = joined.profile
    found, how = joined.driver_check()
    return {"path": p.path, "source": p.source, "reader": p.reader, "device": p.device, "total_seconds": p.total,
            "device_time": joined.device_split() | {
                "not_kernel_names": {n: {"kind": k.kind, "seconds": k.seconds, "launches": k.launches}
                                     for n, k in p.other.items()},
                "kernels_without_report_names": [k.name for k in joined.unmatched]},
            "driver_check": {"compared_on": how, "mismatches": [
                {"kernel": m.kernel, "target": m.target, "figure": m.figure, "driver": m.driver,
                 "zeinspect": list(m.zeinspect)} for m in found],
                "properties": {n: f.to_json() for n, f in p.properties.items()}},
            "shapes": {n: sorted(v) for n, v in p.shapes.items()},
            "proxy": joined.proxy_note(),
            "headline": {t: {"share_with_scratch": joined.share_with_scratch(t),
                             "share_in_loops": joined.share_in_loops(t), "text": joined.headline(t)}
                         for t in joined.targets},
            "kernels": [{"name": k.name, "seconds": k.seconds, "launches": k.launches, "share": k.share,
                         "reports": sorted({r.kernel for r in k.reports}),
                         "targets": {t: {"scratch_bytes": k.scratch(t), "loop_bytes": k.loop_bytes(t),
                                         "cause": k.cause(t)} for t in joined.targets} if k.reports else None}
                        for k in joined.kernels],
            "no_report": [k.name for k in joined.unmatched], "no_time": joined.unprofiled}


def html_section(joined: ProfileJoin) -> str:
    heads = "".join(f"<th>{html.escape(t)}</th>" for t in joined.targets)
    rows = "".join(
        f"<tr><td>{100 * k.share:.1f} %</td><td>{k.launches}</td><td title='{html.escape(k.name)}'>"
        f"{html.escape(names.short(k.name))}</td>"
        + "".join(f"<td>{html.escape(_cell(k, t))}</td>" for t in joined.targets) + "</tr>"
        for k in joined.kernels)
    heads_line = "".join(f"<li>{html.escape(line)}</li>" for line in
                         [*mismatch_lines(joined), split_line(joined), *(joined.headline(t) for t in joined.targets)])
    note = joined.proxy_note()
    return (f"<section id=profile><h2>Where the profiled device time goes</h2><ul>{heads_line}</ul>"
            + (f"<p>{html.escape(note)}</p>" if note else "")
            + f"<table><tr><th>share</th><th>launches</th><th>kernel</th>{heads}</tr>{rows}</table></section>")


