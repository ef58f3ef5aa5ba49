"""The audit as one self-contained HTML page: summary, heat map, ratchet, details.

No network, no external script or font: the data is embedded as JSON and drawn by the
page's own script, so the file opens from a CI artifact.  The heat map draws only the rows
in view (a fixed row height and a spacer for the rest), so a library of 5,000 kernels on
19 targets stays responsive; `bench/html_report.py` measures how long such a page takes to
load.  Cells are coloured by scratch bytes per thread on a log scale (spill + private);
overflow and build failures have colours of their own and not-applicable cells are grey.
Targets are grouped by family.  Details (figures, log lines, the reproduce command, and the
explain command of a kernel that spills) are kept for findings only, which keeps a
100,000-cell page a few megabytes.  Pure.
"""

from __future__ import annotations

import html
import json
import shlex

from ..judge.audit import AuditResult, measured
from ..model import Compiler, KernelReport, Verdict, environment_of, family_label
from ..occupancy import of
from .audit import counts, grouped_findings
from .audit import summary as audit_summary
from .common import fold_rows
from .occupancy import summary

# One letter per verdict in the page's data.
_CODE = {Verdict.OVERFLOW: "O", Verdict.FAILED: "F", Verdict.NEW: "N", Verdict.GREW: "G", Verdict.INTENT: "I",
         Verdict.LISTED: "L",
         Verdict.CLEAN: "C", Verdict.NOT_APPLICABLE: "A"}


def _cell_detail(report: KernelReport, message: str) -> dict:
    return {"status": report.status.value, "spill": report.spill_bytes, "private": report.private_bytes,
            "simd": report.simd, "grf": report.grf, "limit": report.scratch_limit_bytes,
            "needed": report.needed_scratch_bytes, "message": message, "command": report.command,
            "log": list(report.log[:12]), "compiler": report.compiler, "options": report.options,
            "explain": _explain_command(report), "occupancy": summary(of(report))}


def _explain_command(report: KernelReport) -> str | None:
    """The command that shows which lines of a spilling kernel spill on this target."""
    if not report.spill_bytes:
        return None
    return (f"zeinspect explain {shlex.quote(report.input)} -k {shlex.quote(report.kernel)} -t {report.target}"
            + (f" --compiler {shlex.quote(report.compiler)}" if report.compiler else ""))


def _data(result: AuditResult, compilers: list[Compiler], *, strict: bool, seconds: float | None) -> dict:
    targets: dict[str, str | None] = {}
    rows: dict[tuple[str, str], dict] = {}
    details: dict[tuple[int, str], dict] = {}
    for j in result.judgements:
        r = j.report
        if r is None:
            continue
        targets.setdefault(r.target, r.ip)
        row = rows.setdefault((r.input, r.kernel), {"n": len(rows), "k": r.kernel, "i": r.input, "c": {},
                                                    "id": r.identity})
        scratch = r.shown_scratch_bytes if r.applicable else 0
        row["c"][r.target] = [_CODE[j.verdict], scratch]
        if j.verdict not in (Verdict.CLEAN, Verdict.NOT_APPLICABLE):
            details[(row["n"], r.target)] = _cell_detail(r, j.message)
    order = sorted(targets, key=lambda t: (_family_rank(targets[t]), targets[t] or "", t))
    column = {t: i for i, t in enumerate(order)}
    # One row for one kernel found in several places with the same cells (KernelReport.identity):
    # its other places go in the row's title, as the text table lists them.
    kept, elsewhere = fold_rows(rows, lambda row: (row["id"], json.dumps([row["c"].get(t) for t in order])))
    index = {row["n"]: i for i, row in enumerate(kept.values())}
    also = {key: [inp for inp, _ in more] for key, more in elsewhere.items()}
    kernels = [{"k": row["k"], "c": [row["c"].get(t) for t in order],
                "i": row["i"] + (f" (+{len(also[key])} more: {', '.join(also[key])})" if key in also else "")}
               for key, row in kept.items()]
    by_cell = {f"{index[n]}|{column[t]}": d for (n, t), d in details.items() if n in index}
    ratchet = []
    for j in result.judgements:
        if j.report is None and j.entry is not None:
            ratchet.append({"line": j.entry.lineno, "kernel": j.entry.kernel, "targets": j.entry.targets,
                            "verdict": j.verdict.label, "message": j.message})
    listed: dict[int, dict] = {}
    for j in result.judgements:
        if j.entry is not None and j.report is not None:
            entry = listed.setdefault(j.entry.lineno, {"line": j.entry.lineno, "kernel": j.entry.kernel,
                                                       "targets": j.entry.targets, "private": j.entry.private,
                                                       "spill": j.entry.spill, "max_private": 0, "max_spill": 0,
                                                       "reports": 0})
            entry["reports"] += 1
            # The figures the gate itself compared with the line (judge.audit.measured).
            private, spill = measured(j.report)
            entry["max_private"] = max(entry["max_private"], private)
            entry["max_spill"] = max(entry["max_spill"], spill)
    return {
        "summary": {"line": audit_summary(result), "counts": counts(result), "passed": result.passed(strict),
                    # A library's findings by cause and by family, as the text leads with them.
                    "grouped": grouped_findings(result, strict=strict),
                    "strict": strict, "kernels": result.kernels, "targets": len(order),
                    "verdicts": {v.label: result.count(v) for v in Verdict}, "seconds": seconds,
                    "compilers": [c.id for c in compilers], "ratchet": result.ratchet_path,
                    "environment": environment_of(j.report for j in result.judgements if j.report is not None),
                    "build": _build_cost([j.report for j in result.judgements if j.report is not None])},
        "targets": [{"name": t, "ip": targets[t], "family": family_label(targets[t])} for t in order],
        "kernels": kernels,
        "details": by_cell,
        "ratchet": {"entries": sorted(listed.values(), key=lambda e: e["line"]), "findings": ratchet},
    }


def _family_rank(ip: str | None) -> tuple[int, ...]:
    if not ip:
        return (1 << 30,)
    return tuple(int(x) for x in ip.split(".")[:2])


def _build_cost(reports: list) -> str:
    """The compiles that took longest (formats.json.build_cost), as the summary's one line."""
    from ..judge.build_cost import build_cost

    return "; ".join(f"{row['input']} on {row['target']} {row['seconds']:.1f} s"
                     + (f", {row['retries']} retries" if row["retries"] else "") for row in build_cost(reports)[:5])


def page(result: AuditResult, compilers: list[Compiler], *, strict: bool, seconds: float | None = None,
         title: str = "zeinspect audit", ledger: str | None = None, whole: bool = True) -> str:
    """The page; `ledger`: the ledger's summary line (formats.coverage), shown under the summary;
    `whole`: every declared kernel was read (else the gate did not pass)."""
    found = _data(result, compilers, strict=strict, seconds=seconds)
    found["summary"]["ledger"] = ledger or ""
    found["summary"]["passed"] = found["summary"]["passed"] and whole
    data = json.dumps(found, separators=(",", ":"))
    # JSON inside <script>: only "</" could end the element early.
    data = data.replace("</", "<\\/")
    return _TEMPLATE.replace("@TITLE@", html.escape(title)).replace("@DATA@", data)


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 8px}h2{font-size:15px;margin:18px 0 6px}
.pass{color:#176117;font-weight:600}.fail{color:#a01515;font-weight:600}
table.sum td{padding:1px 10px 1px 0}
#controls{margin:8px 0}#controls input{width:260px}
#map{position:relative;overflow:auto;height:60vh;border:1px solid #ccc}
#head{position:sticky;top:0;background:#fff;z-index:2;white-space:nowrap}
.row{height:18px;white-space:nowrap;display:flex}
.name{width:340px;min-width:340px;overflow:hidden;text-overflow:ellipsis;padding-right:6px;position:sticky;left:0;
background:#fff;z-index:1}
.cell{width:26px;min-width:26px;height:16px;margin:1px;cursor:pointer;border-radius:2px}
.fam{display:inline-block;text-align:center;border-bottom:2px solid #999;font-size:11px;overflow:hidden;
white-space:nowrap;text-overflow:ellipsis;box-sizing:border-box;padding:0 1px}
.tname{display:inline-block;width:28px;writing-mode:vertical-rl;transform:rotate(180deg);font-size:11px;height:70px}
.O{background:#6a1b9a}.F{background:#111}.A{background:#ddd}.C0{background:#eef7ee}
#legend span{display:inline-block;padding:0 6px;margin-right:4px;border-radius:2px}
#detail{white-space:pre-wrap;font:12px monospace;background:#f6f6f6;padding:8px;min-height:40px}
table.r{border-collapse:collapse}table.r td,table.r th{border:1px solid #ddd;padding:2px 6px;text-align:left}
</style></head><body>
<h1>@TITLE@</h1>
<div id="summary"></div>
<h2>Heat map: scratch bytes per hardware thread</h2>
<div id="legend"></div>
<div id="controls">filter <input id="filter" placeholder="kernel or file"> sort
<select id="sort"><option value="worst">worst cell first</option><option value="name">by name</option></select>
<span id="shown"></span></div>
<div id="map"><div id="head"></div><div id="spacer" style="position:relative"><div id="rows"
style="position:absolute;left:0;right:0"></div></div></div>
<h2>Details</h2><div id="detail">Click a cell.</div>
<h2>Ratchet</h2><div id="ratchet"></div>
<script id="data" type="application/json">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const ROW = 18, CAP = 262144;
const esc = s => String(s == null ? "" : s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);
function colour(code, bytes) {
  if (code === "O" || code === "F" || code === "A") return null;
  if (!bytes) return "#eef7ee";
  const t = Math.min(1, Math.log2(1 + bytes) / Math.log2(1 + CAP));
  return "hsl(" + Math.round(50 - 50 * t) + ",90%," + Math.round(88 - 50 * t) + "%)";
}
function severity(k) {
  let worst = -1;
  for (const c of k.c) {
    if (!c) continue;
    const s = c[0] === "O" ? 4e9 : c[0] === "F" ? 3e9 : c[1];
    if (s > worst) worst = s;
  }
  return worst;
}
const S = D.summary;
document.getElementById("summary").innerHTML =
  '<p class="' + (S.passed ? "pass" : "fail") + '">' + (S.passed ? "gate passed" : "gate failed") +
  (S.strict ? " (strict)" : "") + "</p><table class=sum>" +
  [["kernels", S.kernels], ["targets", S.targets],
   ["findings", ["OVERFLOW","FAILED","NEW","GREW","INTENT","IMPROVED","STALE"].map(v => v + " " + S.verdicts[v]).join(", ")],
   ["not applicable", S.verdicts["N/A"]], ["listed", S.verdicts.LISTED], ["clean", S.verdicts.CLEAN],
   ["compilers", S.compilers.join(", ") || "none"], ["ratchet", S.ratchet],
   ...(Object.keys(S.environment).length
       ? [["built under", Object.entries(S.environment).map(e => e[0] + "=" + e[1]).join(", ")]] : []),
   ...(S.build ? [["slowest compiles", S.build]] : []),
   ["time taken", S.seconds == null ? "not recorded" : S.seconds.toFixed(1) + " s"]]
  .map(r => "<tr><td>" + esc(r[0]) + "</td><td>" + esc(r[1]) + "</td></tr>").join("") + "</table><p>" +
  esc(S.line) + "</p>" + (S.ledger ? '<p id="ledger" class="' + (S.ledger.indexOf("UNREAD") < 0 ? "" : "fail") +
  '">' + esc(S.ledger) + "</p>" : "") +
  (S.grouped.length ? "<pre class=grouped>" + S.grouped.map(esc).join("\n") + "</pre>" : "");
document.getElementById("legend").innerHTML = [["#eef7ee","none"],[colour("N",64),"64 B"],[colour("N",4096),"4 KiB"],
  [colour("N",65536),"64 KiB"],[colour("N",CAP),"256 KiB"]].map(x => '<span style="background:' + x[0] + '">' +
  x[1] + "</span>").join("") + '<span class=O style="color:#fff">over the cap</span><span class=F style="color:#fff">' +
  'did not build</span><span class=A>not applicable</span>';
// Targets grouped by family.
const head = document.getElementById("head");
let fams = [];
D.targets.forEach((t, i) => { if (!fams.length || fams[fams.length-1].f !== t.family) fams.push({f: t.family, n: 0});
  fams[fams.length-1].n++; });
head.innerHTML = '<div class=row style="height:20px"><div class=name></div>' + fams.map(f =>
  '<span class=fam title="' + esc(f.f) + '" style="width:' + (28 * f.n) + 'px">' + esc(f.f) + "</span>").join("") +
  "</div>" +
  '<div class=row style="height:74px"><div class=name></div>' + D.targets.map(t =>
  '<span class=tname title="' + esc(t.ip) + '">' + esc(t.name) + "</span>").join("") + "</div>";
D.kernels.forEach((k, n) => { k.n = n; k.w = severity(k); k.key = (k.k + " " + k.i).toLowerCase(); });
let view = D.kernels.slice();
const map = document.getElementById("map"), rows = document.getElementById("rows"),
      spacer = document.getElementById("spacer");
function draw() {
  const first = Math.max(0, Math.floor((map.scrollTop - 94) / ROW) - 5);
  const count = Math.ceil(map.clientHeight / ROW) + 10;
  rows.style.top = (first * ROW) + "px";
  let out = "";
  for (let r = first; r < Math.min(view.length, first + count); r++) {
    const k = view[r];
    out += '<div class=row><div class=name title="' + esc(k.i) + '">' + esc(k.k) + "</div>";
    k.c.forEach((c, t) => {
      if (!c) { out += '<div class=cell></div>'; return; }
      const bg = colour(c[0], c[1]);
      out += '<div class="cell ' + (bg ? "" : c[0]) + '" data-k="' + k.n + '" data-t="' + t + '"' +
        (bg ? ' style="background:' + bg + '"' : "") + ' title="' + esc(D.targets[t].name) + ": " + c[1] + ' B"></div>';
    });
    out += "</div>";
  }
  rows.innerHTML = out;
}
function refresh() {
  const q = document.getElementById("filter").value.trim().toLowerCase();
  view = D.kernels.filter(k => !q || k.key.includes(q));
  if (document.getElementById("sort").value === "name") view.sort((a, b) => a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
  else view.sort((a, b) => b.w - a.w || a.n - b.n);
  spacer.style.height = (view.length * ROW) + "px";
  document.getElementById("shown").textContent = view.length + " of " + D.kernels.length + " kernels";
  draw();
}
map.addEventListener("scroll", () => requestAnimationFrame(draw));
document.getElementById("filter").addEventListener("input", refresh);
document.getElementById("sort").addEventListener("change", refresh);
rows.addEventListener("click", e => {
  const el = e.target.closest(".cell"); if (!el || el.dataset.k == null) return;
  const k = D.kernels[+el.dataset.k], t = +el.dataset.t, c = k.c[t], d = D.details[k.n + "|" + t];
  const lines = [k.k + " on " + D.targets[t].name + " (" + (D.targets[t].ip || "?") + ")", "input: " + k.i,
    "verdict: " + ({O:"OVERFLOW",F:"FAILED",N:"NEW",G:"GREW",I:"INTENT",L:"LISTED",C:"CLEAN",A:"N/A"})[c[0]],
    "scratch bytes per thread: " + c[1]];
  if (d) {
    lines.push(d.message, "status " + d.status + ", SIMD " + d.simd + ", GRF " + d.grf + ", spill " + d.spill +
      ", private " + d.private + (d.needed ? ", needs " + d.needed + " of " + d.limit : ""),
      "occupancy: " + d.occupancy, "compiler: " + d.compiler, "options: " + (d.options || "(none)"),
      "reproduce: " + (d.command || "-"));
    if (d.explain) lines.push("which lines spill: " + d.explain);
    if (d.log.length) lines.push("log:", ...d.log);
  }
  document.getElementById("detail").textContent = lines.join("\n");
});
const R = D.ratchet;
document.getElementById("ratchet").innerHTML = (R.entries.length || R.findings.length) ?
  "<table class=r><tr><th>line</th><th>kernel</th><th>targets</th><th>allows (private, spill)</th>" +
  "<th>measured at most</th><th>state</th></tr>" + R.entries.map(e => {
    const f = R.findings.find(x => x.line === e.line);
    const state = f ? f.verdict + ": " + f.message : "matches what was measured";
    return "<tr><td>" + e.line + "</td><td>" + esc(e.kernel) + "</td><td>" + esc(e.targets) + "</td><td>" +
      e.private + ", " + e.spill + "</td><td>" + e.max_private + ", " + e.max_spill + "</td><td>" + esc(state) +
      "</td></tr>";
  }).join("") + R.findings.filter(f => !R.entries.some(e => e.line === f.line)).map(f =>
    "<tr><td>" + f.line + "</td><td>" + esc(f.kernel) + "</td><td>" + esc(f.targets) +
    "</td><td></td><td></td><td>" + esc(f.verdict + ": " + f.message) + "</td></tr>").join("") + "</table>"
  : "<p>The ratchet file lists no kernel.</p>";
window.zeinspect = {ready: performance.now(), rows: () => view.length,
  cells: D.kernels.reduce((n, k) => n + k.c.filter(c => c).length, 0)};
refresh();
</script></body></html>
"""
