"""The fix loop on a product, as people read it: one row per family (and cause), one column per
target, each cell the shape chosen and the scratch after it (before it in brackets); then the
change that makes each family's shape stay, with its cost in occupancy, and the ratchet lines
for what no shape cleans.  Text, a JSON document and a self-contained HTML page.  Pure
functions of app.library_fix.LibraryFix.
"""

from __future__ import annotations

import html
from typing import Any

from .. import names
from ..judge.families import Family
from ..model import CAUSES, GrfMode
from .common import fmt_bytes, safe

SCHEMA = "zeinspect.library-fix/1"


def shape_text(shape: Any, written: Any) -> str:
    """A shape in a few words: what it changes from the kernel as written."""
    if shape is None:
        return "none builds"
    parts = []
    if GrfMode(shape.grf) is not GrfMode.DEFAULT:
        parts.append({"256": "256 regs", "auto": "auto regs", "128": "128 regs"}[GrfMode(shape.grf).value])
    if shape.sub_group is not None and shape.sub_group != (written.sub_group or 0):
        parts.append("sg any" if shape.sub_group == 0 else f"sg {shape.sub_group}")
    return ", ".join(parts) or "as written"


def _cause(f: Family) -> str:
    return "does not build" if f.cause == "failed" else CAUSES.get(f.cause, f.cause).split(" (")[0]


def cell(f: Family, target: str) -> str:
    before, after = f.scratch(target, after=False), f.scratch(target, after=True)
    shapes = {shape_text(m.chosen, m.search.written) for m in f.members}
    chosen = shapes.pop() if len(shapes) == 1 else "mixed"
    return f"{chosen}: {fmt_bytes(after)} ({fmt_bytes(before)})"


def text(fix: Any) -> str:
    searched = [i for i in fix.images if i.search is not None]
    native = [i for i in fix.images if i.search is None]
    users = fix.members
    cleaned = sum(1 for m in users if m.search.cleans)
    lines = [f"fix on {', '.join(fix.targets)}: {len(fix.images)} images ({len(searched)} searched, "
             f"{sum(1 for i in searched if i.source == 'generic_ir')} of them from a native image's generic_ir member; "
             f"{len(native)} native-only), {len(users)} scratch users in {len(fix.families)} families, {cleaned} "
             f"cleaned by a shape; {fix.compiles} module builds in {fix.seconds:.1f} s"]
    if fix.families:
        heads = ["family", "cause", "kernels"] + list(fix.targets)
        rows = [[safe(f.name), _cause(f), f"{len(f.cleaned)}/{len(f.members)}"] +
                [cell(f, t) for t in fix.targets] for f in fix.families]
        widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
        lines.append("families (kernels: cleaned/all); cells: the shape chosen, scratch after it (as written):")
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in [heads, *rows]]
        lines.append("")
        lines.append("the change that makes each family's shape stay, and its cost:")
        for f in fix.families:
            changes = f.changes()
            if changes:
                lines.append(f"  {safe(f.name)} ({_cause(f)}): {'; and '.join(changes)}; {f.cost(fix.targets)}")
            elif not f.cleaned:
                lines.append(f"  {safe(f.name)} ({_cause(f)}): no shape cleans it: {f.reason()}")
            else:
                lines.append(f"  {safe(f.name)} ({_cause(f)}): its kernels chose different shapes: "
                             + ", ".join(sorted({shape_text(m.chosen, m.search.written) for m in f.members})))
    if fix.ratchet:
        lines.append("")
        lines.append("ratchet lines for what no shape cleans:")
        lines += [f"  {safe(line.render())}" for line in fix.ratchet]
    for image in native:
        lines.append(f"note: {safe(image.input)}: {image.note}")
    lines += [f"note: {safe(n)}" for n in fix.notes]
    return "\n".join(lines) + "\n"


def document(fix: Any) -> dict:
    return {"schema": SCHEMA, "targets": fix.targets, "seconds": round(fix.seconds, 3), "compiles": fix.compiles,
            "images": [{"input": i.input, "source": i.source, "note": i.note or None,
                        "compiles": i.search.compiles if i.search else 0,
                        "not_tried": [{"shape": s.to_json(), "why": why} for s, why in i.search.not_tried]
                        if i.search else []} for i in fix.images],
            "families": [f.to_json(fix.targets) for f in fix.families],
            "ratchet": [line.render() for line in fix.ratchet], "notes": fix.notes, "incidents": fix.incidents,
            "written": fix.written}


def page(fix: Any) -> str:
    """One self-contained HTML page: the families table (rows: families; columns: targets)."""
    head = "".join(f"<th>{html.escape(t)}</th>" for t in fix.targets)
    rows = []
    for f in fix.families:
        cells = "".join(f"<td class='{'clean' if f.scratch(t, after=True) == 0 else 'left'}'>{html.escape(cell(f, t))}"
                        "</td>" for t in fix.targets)
        change = "; and ".join(f.changes()) or (f.reason() if not f.cleaned else "")
        rows.append(f"<tr><th title='{html.escape(names.family_name(f.members[0].kernel))}'>{html.escape(f.name)}</th>"
                    f"<td>{html.escape(_cause(f))}</td><td>{len(f.cleaned)}/{len(f.members)}</td>{cells}"
                    f"<td>{html.escape(change)}</td><td>{html.escape(f.cost(fix.targets))}</td></tr>")
    summary = html.escape(text(fix).splitlines()[0])
    return ("<!doctype html><html><head><meta charset='utf-8'><title>zeinspect fix</title><style>"
            "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:3px 6px;text-align:left;font-size:13px}td.clean{background:#dfd}td.left{background:#fdd}</style>"
            f"</head><body><h1>zeinspect fix</h1><p>{summary}</p><table><tr><th>family</th><th>cause</th>"
            f"<th>kernels (cleaned/all)</th>{head}<th>change</th><th>cost</th></tr>{''.join(rows)}</table>"
            "<p>Cells: the shape chosen, the scratch after it (as written in brackets), bytes per thread.</p>"
            "</body></html>\n")
