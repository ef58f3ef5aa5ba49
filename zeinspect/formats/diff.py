"""`zeinspect diff` as text, a pull-request comment (markdown), JSON, HTML and SARIF.  Pure.

Text leads with the counts per verdict, then the worst regressions (kernel, target, old ->
new, and the line whose spill traffic grew most when --explain ran), then, with -v, every
change.  Markdown stays under 65,000 characters (GitHub's comment limit is 65,536) whatever
the library's size: past that, rows become a count and a pointer to the HTML.
"""

from __future__ import annotations

import html
import json
from typing import Any

from .. import __version__, names
from ..judge.diff import NA, PART_FIELDS, Change, DiffResult, Entry, Figures
from .common import md_code, md_text, safe
from .labels import labels as label_names
from .profile import document as profile_document

SCHEMA = "zeinspect.diff/1"
MARKDOWN_LIMIT = 65_000
SHOWN = 20
"""Regressions the text view lists without -v."""
_FIELDS_SHOWN = (("status", "status"), ("scratch_bytes", "scratch"), ("spill_bytes", "spill"),
                 ("private_bytes", "private"), ("grf", "GRF"), ("simd", "SIMD"), ("threads_per_eu", "thr/EU"),
                 ("max_work_group_size", "max-wg"), ("code_bytes", "code"),
                 ("loop_scratch_bytes", "scratch/loop iteration"))


def _shown() -> tuple[tuple[str, str], ...]:
    """The figures a text view names, with the registered parts' (judge.diff.PART_FIELDS)."""
    return _FIELDS_SHOWN + tuple((f.name, f.label) for f in PART_FIELDS.values())


def _value(v: Any) -> str:
    return "yes" if v is True else "no" if v is False else str(v)


def _figures(f: Figures | None) -> str:
    if f is None:
        return "absent"
    shown = [f"{label} {_value(f.get(name))}" for name, label in _shown()
             if f.get(name) != NA and name != "status"]
    return f.status + (f" ({', '.join(shown)})" if shown else "") + (f" x{f.count}" if f.count > 1 else "")


def _changed(e: Entry) -> str:
    parts = []
    for name, label in _shown():
        if name in e.changed:
            a = e.old.get(name) if e.old else NA
            b = e.new.get(name) if e.new else NA
            parts.append(f"{label} {_value(a)} -> {_value(b)}")
    return ", ".join(parts)


def _name(e: Entry) -> str:
    where = f" [{e.identity.where}]" if e.identity.where else ""
    return safe(names.short(e.identity.kernel)) + safe(where)


def summary_line(result: DiffResult) -> str:
    c = result.counts()
    return (f"{len(result.entries)} kernel-target pairs compared: {c['worse']} worse, {c['better']} better, "
            f"{c['same']} same, {c['added']} added, {c['removed']} removed"
            + (f", {c['unreadable']} could not be compared" if c["unreadable"] else "")
            + ("; built under different compiler environments (old: "
               f"{_environment(result.environments[0])}; new: {_environment(result.environments[1])})"
               if result.environments_differ else ""))


def build_line(build: dict) -> str:
    """What the build cost on each side: IGC's compile time as measured here, and its retries."""
    old, new = build["old"], build["new"]
    if not old["modules"] or not new["modules"]:
        side = "old" if not old["modules"] else "new"
        return f"build: compile time and retries not recorded on the {side} side (a document without compile_times)"
    change = (f" ({(new['seconds'] - old['seconds']) / old['seconds']:+.0%})" if old["seconds"] and new["seconds"]
              else "")
    per = [f"{t} {v['old']['seconds']:.1f} -> {v['new']['seconds']:.1f} s"
           + (f", retries {v['old']['retries']} -> {v['new']['retries']}" if v['old']['retries'] != v['new']['retries']
              else "")
           for t, v in build["targets"].items()]
    return (f"build: compile {old['seconds']:.1f} s -> {new['seconds']:.1f} s{change}, IGC retries {old['retries']} -> "
            f"{new['retries']}" + (f" ({'; '.join(per)})" if len(per) > 1 else ""))


def _environment(env: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items()) or "none"


def _hottest(explained: Any) -> str | None:
    """The line whose spill and fill messages grew most between the two explained builds."""
    if not explained:
        return None
    old, new = explained

    def weights(result: Any) -> dict:
        out: dict = {}
        for e in result.explanations:
            for x in e.isa.lines:
                key = (x.file, x.line) if x.line is not None else (None, x.block)
                out[key] = out.get(key, 0) + x.spills + x.fills
        return out

    a, b = weights(old), weights(new)
    grown = sorted(((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b)), key=lambda t: (-t[0], str(t[1])))
    if not grown or grown[0][0] <= 0:
        return None
    delta, (file, line) = grown[0]
    place = f"{file or '?'}:{line}" if isinstance(line, int) else f"ISA block {line}"
    return f"{place}: {a.get((file, line), 0)} -> {b.get((file, line), 0)} spill/fill messages"


FAMILIES_SHOWN = 10


def by_family(result: DiffResult) -> list[tuple[str, int, int]]:
    """(family, kernel-target pairs worse, better), the most regressions first: what a reader of
    a library's diff decides on first (117 worse and 84 better say nothing until grouped).
    Empty when the changes come from one family or none."""
    counts: dict[str, list[int]] = {}
    for e in result.entries:
        if e.change in (Change.WORSE, Change.BETTER):
            family = names.family_name(e.identity.kernel)
            counts.setdefault(family, [0, 0])[0 if e.change is Change.WORSE else 1] += 1
    if len(counts) < 2:
        return []
    return sorted(((f, w, b) for f, (w, b) in counts.items()), key=lambda t: (-t[1], -t[2], t[0]))


def text(run: Any, *, verbose: bool = False) -> str:
    result: DiffResult = run.result
    out = [f"old: {safe(result.old_label)}", f"new: {safe(result.new_label)}", summary_line(result)]
    if run.profiled is not None:
        out.append(safe(profile_line(run)))
    if result.build is not None:
        out.append(build_line(result.build))
    if result.only_old_targets or result.only_new_targets:
        out.append(f"targets on one side only (not compared): old {', '.join(result.only_old_targets) or '-'}; "
                   f"new {', '.join(result.only_new_targets) or '-'}")
    families = by_family(result)
    if families:
        out.append("by family (kernel-target pairs; the most regressions first):")
        out += [f"  {safe(f)}: {w} worse, {b} better" for f, w, b in families[:FAMILIES_SHOWN]]
        if len(families) > FAMILIES_SHOWN:
            out.append(f"  ... and {len(families) - FAMILIES_SHOWN} more families")
    worst = result.worst()
    if worst:
        out.append("worse:")
    for e in worst if verbose else worst[:SHOWN]:
        out.append(f"  {_name(e)} on {e.identity.target}: {'; '.join(e.why)}")
        out.append(f"    old {_figures(e.old)}")
        out.append(f"    new {_figures(e.new)}")
        hot = _hottest(run.explained.get(e.identity)) if getattr(run, "explained", None) else None
        if hot:
            out.append(f"    line that changed most: {safe(hot)}")
    if len(worst) > SHOWN and not verbose:
        out.append(f"  ... and {len(worst) - SHOWN} more (-v lists every one)")
    for e in result.of(Change.UNREADABLE):
        out.append(f"  could not compare {_name(e)} on {e.identity.target}: {'; '.join(e.why)}")
    if verbose:
        for change in (Change.BETTER, Change.SAME, Change.ADDED, Change.REMOVED):
            listed = [e for e in result.of(change) if change is not Change.SAME or e.changed]
            if listed:
                out.append(f"{change.value}:")
            for e in listed:
                detail = "; ".join(e.why) or _changed(e) or _figures(e.new or e.old)
                out.append(f"  {_name(e)} on {e.identity.target}: {detail}")
    renames = result.likely_renames()
    for gone, came in renames[:SHOWN]:
        out.append(f"likely renamed (a guess from the names): {_name(gone)} -> {_name(came)} on {gone.identity.target}")
    out += [f"note: {safe(n)}" for n in result.notes]
    out += [f"could not compare: {safe(i)}" for i in result.incidents]
    return "\n".join(out) + "\n"


def profile_line(run: Any) -> str:
    """What the change costs by the profile: the share of profiled time it adds scratch to."""
    note = run.profiled.proxy_note()
    return (f"this PR adds scratch to kernels covering {100 * run.worse_share:.1f} % of the profile "
            f"({run.profiled.profile.path})" + (f"; {note}" if note else ""))


def markdown(run: Any, *, html_name: str | None = None) -> str:
    """A pull-request comment: the summary line, then the regressions in a collapsible table."""
    result: DiffResult = run.result
    worst = result.worst()
    head = [f"**zeinspect diff**: {md_text(summary_line(result))}", ""]
    if run.profiled is not None:
        head += [md_text(profile_line(run)), ""]
    if not worst and result.trusted:
        return "\n".join(head + ["No kernel got worse."]) + "\n"
    families = by_family(result)
    if families:
        head += ["| family | worse | better |", "|---|---|---|"]
        head += [f"| {md_code(f)} | {w} | {b} |" for f, w, b in families[:FAMILIES_SHOWN]]
        if len(families) > FAMILIES_SHOWN:
            head.append(f"| ... and {len(families) - FAMILIES_SHOWN} more families | | |")
        head.append("")
    rows = ["| kernel | target | why | old | new |", "|---|---|---|---|---|"]
    labels = label_names([e.identity.kernel for e in worst])
    size = sum(len(x) + 1 for x in head + rows) + 200
    shown = 0
    for e in worst:
        row = (f"| {md_code(labels[e.identity.kernel])}{' ' + md_text(e.identity.where) if e.identity.where else ''} "
               f"| {md_text(e.identity.target)} | {md_text('; '.join(e.why))} | {md_text(_figures(e.old))} "
               f"| {md_text(_figures(e.new))} |")
        if size + len(row) + 1 > MARKDOWN_LIMIT - 400:
            break
        rows.append(row)
        size += len(row) + 1
        shown += 1
    body = head + [f"<details><summary>{len(worst)} regression(s)</summary>", ""] + rows
    if shown < len(worst):
        body.append("")
        body.append(f"... and {len(worst) - shown} more regression(s) not shown here"
                    + (f": see {html_name}" if html_name else ": see the HTML report (--html)"))
    body += ["", "</details>"]
    if not result.trusted:
        body += ["", f"**Could not compare everything**: {len(result.of(Change.UNREADABLE))} pair(s) unreadable, "
                 f"{len(result.incidents)} incident(s)."]
    return "\n".join(body) + "\n"


def document(run: Any) -> dict:
    result: DiffResult = run.result
    return {"schema": SCHEMA, "old": result.old_label, "new": result.new_label, "counts": result.counts(),
            "regressed": result.regressed, "trusted": result.trusted,
            "only_old_targets": list(result.only_old_targets), "only_new_targets": list(result.only_new_targets),
            "compilers": {"old": run.old.compilers, "new": run.new.compilers},
            "environments": {"old": result.environments[0], "new": result.environments[1]},
            "build": result.build,
            "entries": result.entries,  # written by msgspec as they are (judge.diff.Entry)
            "likely_renames": [{"old": a.identity.to_json(), "new": b.identity.to_json()}
                               for a, b in result.likely_renames()],
            "notes": result.notes, "incidents": result.incidents, "seconds": round(run.seconds, 3),
            **({"profile": {**profile_document(run.profiled), "worse_share": run.worse_share}}
               if run.profiled is not None else {})}


def dumps(run: Any) -> str:
    from ..judge.diff import figures_json
    from .json import encode

    return encode(document(run), 1, enc_hook=figures_json) + "\n"


_COLOUR = {Change.WORSE: "#e06666", Change.BETTER: "#6aa84f", Change.SAME: "#eeeeee", Change.ADDED: "#9fc5e8",
           Change.REMOVED: "#b4a7d6", Change.UNREADABLE: "#ffd966"}


def page(run: Any) -> str:
    """One self-contained page: kernels x targets in delta colours; a click shows both sides."""
    result: DiffResult = run.result
    targets = sorted({e.identity.target for e in result.entries})
    rows: dict[tuple[str, str], dict[str, Entry]] = {}
    for e in result.entries:
        rows.setdefault((e.identity.where, e.identity.kernel), {})[e.identity.target] = e
    ordered = sorted(rows.items(), key=lambda kv: (not any(e.change is Change.WORSE for e in kv[1].values()), kv[0]))
    data = {}
    lines = ["<table><tr><th>kernel</th>" + "".join(f"<th>{html.escape(t)}</th>" for t in targets) + "</tr>"]
    for n, ((where, kernel), cells) in enumerate(ordered):
        label = names.short(kernel) + (f" [{where}]" if where else "")
        tds = []
        for t in targets:
            got = cells.get(t)
            if got is None:
                tds.append("<td></td>")
                continue
            e = got
            key = f"{n}|{t}"
            data[key] = {"kernel": kernel, "where": where, "target": t, "change": e.change.value, "why": list(e.why),
                         "old": _figures(e.old), "new": _figures(e.new), "changed": _changed(e)}
            delta = e.scratch_delta
            tds.append(f"<td class=c data-key='{html.escape(key)}' style='background:{_COLOUR[e.change]}' "
                       f"title='{e.change.value}'>{'+' if delta > 0 else ''}{delta if delta else ''}</td>")
        lines.append(f"<tr><td>{html.escape(label)}</td>{''.join(tds)}</tr>")
    lines.append("</table>")
    legend = " ".join(f"<span style='background:{c};padding:0 6px'>{k.value}</span>" for k, c in _COLOUR.items())
    return f"""<!doctype html><html><head><meta charset=utf-8><title>zeinspect diff</title>
<style>body{{font:14px system-ui,sans-serif;margin:1.5em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:12px}}td.c{{cursor:pointer;text-align:right;min-width:40px}}
#detail{{white-space:pre-wrap;font:12px monospace;background:#f6f6f6;padding:8px;margin-top:1em}}</style></head>
<body><h1>zeinspect diff</h1><p>{html.escape(result.old_label)} &rarr; {html.escape(result.new_label)}</p>
<p id=summary>{html.escape(summary_line(result))}</p><p>{legend} (cells: scratch bytes per thread, new minus old)</p>
{''.join(lines)}<div id=detail>Click a cell.</div>
<script>const D={_script_json(data)};
window.zeinspect={{cells:Object.keys(D).length}};
document.addEventListener("click",ev=>{{const c=ev.target.closest("td.c");if(!c)return;const d=D[c.dataset.key];
document.getElementById("detail").textContent=[d.kernel+" on "+d.target+(d.where?" ["+d.where+"]":""),
"change: "+d.change+(d.why.length?" ("+d.why.join("; ")+")":""),"old: "+d.old,"new: "+d.new,
d.changed?"changed: "+d.changed:""].join("\\n");}});</script>
<p style='color:#888'>zeinspect {__version__}</p></body></html>
"""


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data).replace("</", "<\\/")


def sarif(run: Any) -> dict:
    """The regressions as SARIF 2.1.0 results (rule `WORSE`), one per kernel and target."""
    result: DiffResult = run.result
    results = []
    for e in result.worst():
        location = {"physicalLocation": {"artifactLocation": {"uri": (e.new.input if e.new else "").split("[")[0]
                                                              or result.new_label}}}
        results.append({"ruleId": "WORSE", "ruleIndex": 0, "level": "error",
                        "message": {"text": f"{names.short(e.identity.kernel)} on {e.identity.target} got worse: "
                                            f"{'; '.join(e.why)}"},
                        "locations": [location],
                        "properties": {"identity": e.identity.to_json(), "old": e.old.to_json() if e.old else None,
                                       "new": e.new.to_json() if e.new else None}})
    rule = {"id": "WORSE", "name": "Worse", "shortDescription": {"text": "A kernel uses more scratch memory, can no "
            "longer build or launch, or runs fewer threads per EU than in the old build."},
            "defaultConfiguration": {"level": "error"}}
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "zeinspect", "version": __version__, "rules": [rule]}},
                      "results": results, "properties": {"counts": result.counts()}}]}
