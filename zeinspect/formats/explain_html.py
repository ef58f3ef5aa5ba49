"""`zeinspect explain --html`: the source with a heat colour per line and a column per target.

One self-contained page (no network, no external script or font), so it opens from a CI
artifact.  At the top a kernel x target matrix (spill size, or the peak live GRFs of a
clean kernel); each cell links to the kernel's annotated source.  In the listing a target's
cell is red by the line's weight (spill + fill messages x 8^loop depth, on a log scale) and,
where the line moves nothing, blue by its live GRFs against the register file; the hottest
line of each kernel is outlined and is where the matrix links.  The page is drawn here, not
by script: its script only filters lines and flashes the line a link lands on.  Pure.
"""

from __future__ import annotations

import html
import json
import math

from .. import names
from ..hardware import is_ip
from ..occupancy import limits
from ..probes.explain import ExplainResult, Explanation
from .explain import (
    WEIGHT_NOTE,
    KernelView,
    Key,
    kernel_views,
    main_file,
    shape_figures,
    spill_figures,
    variable_groups,
    variables_text,
)
from .occupancy import summary

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.6em 0 .3em}
.meta{color:#555;font-size:.9em}
table{border-collapse:collapse}
.matrix td,.matrix th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
.matrix th.k{text-align:left;font-weight:normal;font-family:monospace}
.matrix a{color:inherit;text-decoration:none;display:block}
.listing{font:12px/1.35 monospace}
.listing td{padding:0 .5em;white-space:pre;border-left:1px solid #eee}
.listing th{font:bold 12px system-ui,sans-serif;padding:.2em .5em;position:sticky;top:0;background:#fff}
.listing td.n{color:#888;text-align:right}
.listing td.t{text-align:right;min-width:7em}
.listing tr.hottest{outline:2px solid #c00}
.listing tr.flash{animation:flash 1.5s}
@keyframes flash{from{background:#ffe08a}to{background:transparent}}
.totals{margin:.2em 0;padding-left:1.2em}
.hide-quiet tr.quiet{display:none}
"""

_SCRIPT = """
(function(){
  var data = JSON.parse(document.getElementById('explain-data').textContent);
  window.zeinspect = {kernels: data.kernels.length, hottest: data.kernels.map(function(k){return k.hottest;})};
  var quiet = document.getElementById('quiet');
  quiet.addEventListener('change', function(){
    document.body.classList.toggle('hide-quiet', quiet.checked);
  });
  function flash(){
    var id = decodeURIComponent(location.hash.slice(1));
    var row = id && document.getElementById(id);
    if (row && row.tagName === 'TR') { row.classList.remove('flash'); void row.offsetWidth; row.classList.add('flash'); }
  }
  window.addEventListener('hashchange', flash);
  flash();
})();
"""


def _heat(weight: int, top: int) -> str:
    """White to red on a log scale of the weight against the page's largest."""
    if weight <= 0 or top <= 0:
        return ""
    level = math.log1p(weight) / math.log1p(top)
    return f"background:hsl(0,85%,{int(96 - 46 * level)}%)"


def _cool(live: int | None, grf: int | None) -> str:
    """White to blue by the live GRFs against the register file (a clean line's headroom)."""
    if not live or not grf:
        return ""
    return f"background:hsl(215,70%,{int(99 - 22 * min(live / grf, 1.0))}%)"


def _cell_text(e: Explanation) -> str:
    isa = e.isa
    if isa.spilling:
        return f"{isa.spill_size or 0:,} B"
    peak = isa.peak
    return f"clean · {peak.pressure}/{isa.grf}" if peak and isa.grf else "clean"


def _matrix(views: list[KernelView], targets: list[str], top: int) -> list[str]:
    out = ["<table class='matrix'><tr><th>kernel</th>" + "".join(f"<th>{html.escape(t)}</th>" for t in targets)
           + "</tr>"]
    for n, view in enumerate(views):
        by_target = {e.target: e for e in view.explanations}
        hottest = view.hottest(1)
        anchor = _row_id(n, view, hottest[0]) if hottest else f"k{n}"
        row = [f"<tr><th class='k' title='{html.escape(view.kernel)}'>{html.escape(names.short(view.kernel))}<br>"
               f"<small>{html.escape(view.input)}</small></th>"]
        for t in targets:
            e = by_target.get(t)
            if e is None:
                row.append("<td>-</td>")
                continue
            style = _heat(e.isa.weight, top) or _cool(e.isa.peak.pressure if e.isa.peak else None, e.isa.grf)
            row.append(f"<td style='{style}' data-target='{html.escape(t)}'><a href='#{anchor}'>"
                       f"{html.escape(_cell_text(e))}</a></td>")
        out.append("".join(row) + "</tr>")
    out.append("</table>")
    return out


def _row_id(n: int, view: KernelView, key: Key) -> str:
    return f"k{n}-f{view.files().index(key[0])}-l{key[1]}"


def _occupancy(e: Explanation) -> str:
    """The occupancy its register count and SIMD width give (zeinspect.occupancy)."""
    if not e.isa.grf or not e.isa.simd or not is_ip(e.ip):
        return summary(None)
    return summary(limits(e.ip, grf_count=e.isa.grf, simd=e.isa.simd))


def _listing(n: int, view: KernelView, top: int) -> list[str]:
    targets = [e.target for e in view.explanations]
    grf = {e.target: e.isa.grf for e in view.explanations}
    hottest = view.hottest(1)
    main = main_file(view)
    out = [f"<h2 id='k{n}' title='{html.escape(view.kernel)}'>{html.escape(names.short(view.kernel))} "
           f"<small class='meta'>{html.escape(view.input)}</small></h2>",
           "<ul class='totals'>"]
    for e in view.explanations:
        out.append(f"<li><b>{html.escape(e.target)}</b> ({html.escape(e.ip)}): "
                   f"{html.escape(spill_figures(e.isa))}; {html.escape(shape_figures(e.isa, main))}; "
                   f"{html.escape(_occupancy(e))}</li>")
    out.append("</ul>")
    for file in view.files():
        out.append(f"<p class='meta'>{html.escape(file or '(no file named)')}</p>")
        out.append("<table class='listing'><tr><th>line</th>"
                   + "".join(f"<th>{html.escape(t)}<br>spill/fill · GRF</th>" for t in targets)
                   + "<th>source</th></tr>")
        for line in view.listing_range(file):
            key = (file, line)
            cells = view.by_line.get(key, {})
            classes = []
            if not cells:
                classes.append("quiet")
            if hottest and key == hottest[0]:
                classes.append("hottest")
            row = [f"<tr id='{_row_id(n, view, key)}' class='{' '.join(classes)}' data-line='{line}'>"
                   f"<td class='n'>{line}</td>"]
            for t in targets:
                x = cells.get(t)
                if x is None:
                    row.append("<td class='t'></td>")
                    continue
                messages = f"{x.spills}/{x.fills} · " if x.spills or x.fills else ""
                style = _heat(x.weight, top) or _cool(x.pressure, grf[t])
                tip = (f"{t}: {x.spills} spill, {x.fills} fill messages, {x.bytes_moved} bytes, loop depth "
                       f"{x.depth}, weight {x.weight}; {x.pressure} GRFs live of {grf[t]}")
                row.append(f"<td class='t' style='{style}' title='{html.escape(tip)}'>{messages}"
                           f"{x.pressure if x.pressure is not None else ''}</td>")
            row.append(f"<td>{html.escape(view.text_of(key).rstrip())}</td></tr>")
            out.append("".join(row))
        out.append("</table>")
    for e in view.explanations:
        for group in variable_groups(e, main):
            out.append(f"<p class='meta'><b>{html.escape(e.target)}</b>: {html.escape(variables_text(*group))}</p>")
        if e.isa.spilling and not e.isa.has_lines:
            out.append(f"<p class='meta'>{html.escape(e.target)}: no line information (build OpenCL C or the SYCL "
                       "image with -g); spill and fill messages per ISA block:</p>")
            out.append("<table class='listing'><tr><th>block</th><th>depth</th><th>spills</th><th>fills</th>"
                       "<th>bytes</th><th>weight</th></tr>")
            for x in [x for x in e.isa.lines if x.spills or x.fills]:
                out.append(f"<tr style='{_heat(x.weight, top)}'><td>{html.escape(x.block or '-')}</td>"
                           f"<td class='t'>{x.depth}</td><td class='t'>{x.spills}</td><td class='t'>{x.fills}</td>"
                           f"<td class='t'>{x.bytes_moved}</td><td class='t'>{x.weight}</td></tr>")
            out.append("</table>")
    return out


def page(result: ExplainResult) -> str:
    views = kernel_views(result)
    targets: list[str] = []
    for e in result.explanations:
        if e.target not in targets:
            targets.append(e.target)
    top = max((x.weight for e in result.explanations for x in e.isa.lines), default=0)
    data = {"kernels": [{"kernel": v.kernel, "input": v.input,
                         "hottest": dict(zip(("file", "line"), v.hottest(1)[0])) if v.hottest(1) else None}
                        for v in views], "targets": targets}
    body = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            "<title>zeinspect explain</title>", f"<style>{_STYLE}</style></head><body>",
            "<h1>Which lines spill</h1>",
            f"<p class='meta'>{html.escape(', '.join(c.id for c in result.compilers))}. "
            f"{html.escape(WEIGHT_NOTE)}. GRF: registers live while the line's busiest instruction runs.</p>"]
    body += _matrix(views, targets, top)
    body.append("<p><label><input type='checkbox' id='quiet'> hide lines without instructions</label></p>")
    for n, view in enumerate(views):
        body += _listing(n, view, top)
    for note in result.notes:
        body.append(f"<p class='meta'>note: {html.escape(note)}</p>")
    for incident in result.incidents:
        body.append(f"<p class='meta'>error: {html.escape(incident)}</p>")
    payload = json.dumps(data).replace("</", "<\\/")
    body.append(f"<script type='application/json' id='explain-data'>{payload}</script>")
    body.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(body) + "\n"
