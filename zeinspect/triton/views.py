"""`zeinspect triton`: cards per run (as compiled, then staged), or one JSON document.  Pure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..formats.common import safe
from ..formats.json import dumps, report_document
from ..formats.text import cards, cell
from .judge import ranking
from .model.part import triton_part
from .model.ttgir import pointer_note


def text(runs: list) -> str:
    """`runs`: (label, Collection) pairs, the last one the result."""
    return "".join(f"== {label}\n" + cards(got.reports) for label, got in runs)


def document(runs: list, stats: dict) -> dict:
    final = runs[-1][1]
    doc = report_document(final.reports, final.compilers, stats=stats, incidents=final.incidents)
    if len(runs) > 1:
        doc["before_staging"] = [r.to_json() for r in runs[0][1].reports]
    return doc


NOT_LISTED = "n/a"


def screen_text(kernel_label: str, screen: list, remedies: dict | None = None) -> str:
    """Configs as rows, targets as columns; then the ranking and each finding's reason."""
    targets = list(dict.fromkeys(r.target for _, got in screen for r in got.reports))
    rows = [["#", "config"] + targets]
    for n, (config, got) in enumerate(screen, start=1):
        by_target = {r.target: r for r in got.reports}
        rows.append([str(n), config.describe()] + [cell(by_target[t]) + _slm(by_target[t]) if t in by_target
                                                   else NOT_LISTED for t in targets])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [f"{safe(kernel_label)}: {len(screen)} autotune configs on {len(targets)} targets"]
    out += ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows]
    out.append("cells: scratch bytes per hardware thread (+ shared local memory at launch); OVER over the scratch "
               "cap; SLM over the shared local memory (cannot launch); FAIL did not build")
    if any(NOT_LISTED in row[2:] for row in rows[1:]):
        out.append(f"{NOT_LISTED}: not among the configs the module builds for that target")
    out.append("ranking (best first): " + ", ".join(f"#{i + 1}" for i in ranking(screen)))
    for n, (_, got) in enumerate(screen, start=1):
        for r in got.reports:
            if r.applicable and not r.built:
                out.append(f"#{n} on {r.target}: {r.status.value}: {safe(r.reason or '')}")
    for n, (tuned, _) in enumerate(screen, start=1):
        for note in [*tuned.notes] + ([f"not screened: {tuned.unusable}"] if tuned.unusable else []):
            out.append(f"#{n}: {safe(note)}")
    for n, (_, got) in enumerate(screen, start=1):
        said = next((note for r in got.reports if (r.uses_scratch or not r.built) and (part := triton_part(r))
                     and (note := pointer_note(part.loop_carried))), None)
        if said:
            out.append(f"#{n}: {safe(said)}")
    out += [f"#{index + 1} {line}" for index, rec in sorted((remedies or {}).items()) for line in [remedy_line(rec)]]
    return "\n".join(out) + "\n"


def remedy_line(rec: dict) -> str:
    """What the Triton levers make of a kernel or config with a finding (triton.judge.record)."""
    if not rec["found"]:
        return f"remedy: none of the Triton levers: {rec['why']}"
    state = "cleans it on every target" if rec["cleans"] else "leaves scratch memory"
    return f"remedy: {rec['triton']}: {state} ({rec['why']})"


def _slm(report: Any) -> str:
    return f" +{report.slm_bytes // 1024}K" if report is not None and report.slm_bytes and report.slm_bytes >= 1024 \
        else ""


def screen_document(screen: list, stats: dict, remedies: dict | None = None) -> dict:
    """One report per config x target, each with its `config`, `slm_bytes` and PTSS headroom."""
    compilers = list(dict.fromkeys(c for _, got in screen for c in got.compilers))
    doc = report_document([], compilers, stats=stats, incidents=[i for _, got in screen for i in got.incidents])
    on = [{r.target for r in got.reports} for _, got in screen]
    everywhere = set().union(*on)
    # `targets` only for a config the module builds for some of the targets, not all.
    doc["configs"] = [c.to_json() | ({"targets": sorted(these)} if these != everywhere else {})
                      for (c, _), these in zip(screen, on)]
    doc["ranking"] = ranking(screen)
    doc["remedies"] = {str(index): rec for index, rec in (remedies or {}).items()}
    doc["reports"] = [r.to_json() | {"config": c.to_json(), "config_index": n, "headroom_bytes": r.headroom_bytes}
                      for n, (c, got) in enumerate(screen) for r in got.reports]
    return doc


def render(result: Any, *, as_json: bool, stats: dict) -> str:
    """What `zeinspect triton` prints for a triton.app.TritonResult: cards per run, or the screen's
    table; JSON documents with the explanation beside them when one was asked for."""
    from ..formats import explain as explain_fmt
    from ..formats.json import dumps

    if result.screen:
        if as_json:
            doc = screen_document(result.screen, stats, result.remedies)
            if result.explained_configs:
                doc["explain"] = {str(n): explain_fmt.document(got) for n, got in result.explained_configs.items()}
            return dumps(doc)
        out = screen_text(result.kernel.label, result.screen, result.remedies)
        for n, got in result.explained_configs.items():
            out += explain_fmt.section(got, f"config #{n + 1} ({result.screen[n][0].describe()}): ")
        if result.explain_asked and not result.explained_configs:
            out += "\n== which lines spill: no config uses scratch memory\n"
        return out
    remedy = result.remedies.get(0)
    if as_json:
        doc = document(result.runs, stats)
        if result.explained is not None:
            doc["explain"] = explain_fmt.document(result.explained)
        if remedy is not None:
            doc["remedy"] = remedy
        return dumps(doc)
    return (text(result.runs) + (f"{remedy_line(remedy)}\n" if remedy is not None else "")
            + (explain_fmt.section(result.explained) if result.explained is not None else ""))


def render_request(req: Any, result: Any, *, as_json: bool, stats: dict) -> str:
    """What `zeinspect triton` prints for a request (triton.model.request.TritonRequest) and its result
    (its way, a triton.model.request.Way, compared by name: the views import nothing of the use cases)."""
    if req.way in ("run", "cache"):
        shown = library_document(result, stats) if as_json else library_text(result)
    elif req.way == "module":
        shown = package_document(result, stats) if as_json else package_text(result, req.kernel.file)
    else:
        shown = render(result, as_json=as_json, stats=stats)
    if result.profiled is None:
        return shown
    from ..formats import profile

    if as_json:
        return dumps({**json.loads(shown), "profile": profile.document(result.profiled)})
    first = profile.mismatch_lines(result.profiled)  # the user's driver disagreeing leads the report
    return "".join(f"{line}\n" for line in first) + shown + profile.text(result.profiled)


def package_text(found: Any, path: str) -> str:
    """`zeinspect triton FILE.py|DIR`: the summary, then the findings as `inspect` lists them."""
    from ..formats.coverage import line
    from ..formats.text import table

    out = package_summary(found, path)
    ledger = line(found.coverage)
    if found.reports:
        out += table(found.reports, verbose=False, ledger=ledger)
    elif ledger:
        out += ledger + "\n"
    return out


def package_document(found: Any, stats: dict) -> str:
    from ..formats.json import dumps

    coverage = found.coverage
    doc = report_document(found.reports, found.collection.compilers, stats=stats, notes=found.collection.notes,
                          incidents=found.collection.incidents + coverage.incidents())
    doc["coverage"] = coverage.to_json()
    doc["screened"] = found.screened
    doc["unscreened"] = [u.to_json() for u in found.unscreened]
    doc["load_errors"] = found.load_errors
    return dumps(doc)


def library_text(screen: Any) -> str:
    """`triton --run` and `--from-cache`: the source's summary, then the kernels x
    specializations x targets table."""
    from ..formats.coverage import line
    from ..formats.text import table

    head = source_summary(screen.source)
    ledger = line(screen.coverage, unit="specializations")
    if not screen.collection.reports:
        return head + "\n" + (f"{ledger}\n" if ledger else "") + "".join(f"note: {n}\n" for n in screen.collection.notes)
    body = table(screen.collection.reports, title=head, ledger=ledger)
    return body + fixes_text(screen.fixes) + "".join(f"note: {n}\n" for n in screen.collection.notes)


FIX_ROWS_SHOWN = 3
"""Members a fix group names one by one (the JSON names them all)."""


def fixes_text(fixes: list[dict]) -> str:
    """--fix on a cache or a run: per kernel, the change that cleans its specializations."""
    from .judge import fix_groups

    if not fixes:
        return ""
    lines = ["fix, per kernel (the first Triton lever that builds without scratch; the change in Triton's terms):"]
    for g in fix_groups(fixes):
        members = g["specializations"]
        count = f"{len(members)} specialization{'s' if len(members) != 1 else ''}"
        outcome = ("builds without scratch on every target" if g["cleans"]
                   else "builds everywhere, with the least scratch" if g["found"]
                   else "no shape builds on every target")
        what = f"{g['kernel']} (template {g['template']})" if g.get("template") else g["kernel"]
        lines.append(f"  {what} ({g['file']}), {count}: {g['change']}: {outcome}")
        ranges = [f"{k} {v[0]}..{v[1]}" if len(v) == 2 and not isinstance(v[0], str) else
                  f"{k} {', '.join(map(str, v))}" for k, v in (g.get("configs") or {}).items()]
        if len(members) > 1 and ranges:
            lines.append(f"    configs: {'; '.join(ranges)}")
        lines.append(f"    why: {g['why']}")
        if costs := cost_text(g.get("cost") or {}):
            lines.append(f"    cost: {costs}")
        if g.get("inductor"):
            lines.append(f"    Inductor: {g['inductor']}")
        shown = ", ".join(members[:FIX_ROWS_SHOWN]) + (f", and {len(members) - FIX_ROWS_SHOWN} more"
                                                       if len(members) > FIX_ROWS_SHOWN else "")
        lines.append(f"    {shown}")
    return "\n".join(lines) + "\n"


def cost_text(cost: dict) -> str:
    """A fix group's cost per target (triton.judge.fix_groups): Xe-core occupancy and SLM as
    launched, then in the chosen build; a member that did not build as launched has no figure."""
    def span(values: list, unit: Any) -> str:
        if not values:
            return "none built"
        return unit(values[0]) if values[0] == values[-1] else f"{unit(values[0])}..{unit(values[-1])}"

    def pct(v: float) -> str:
        return f"{round(v * 100)}%"

    def kib(v: int) -> str:
        return f"{v // 1024}K" if v >= 1024 else f"{v} B"

    parts = []
    for target, c in sorted(cost.items()):
        parts.append(f"{target} occupancy {span(c.get('as_launched_occupancy', []), pct)} -> "
                     f"{span(c.get('chosen_occupancy', []), pct)}, SLM {span(c.get('as_launched_slm_bytes', []), kib)} -> "
                     f"{span(c.get('chosen_slm_bytes', []), kib)}")
    return "; ".join(parts)


def library_document(screen: Any, stats: dict) -> str:
    coverage = screen.coverage
    doc = report_document(screen.collection.reports, screen.collection.compilers, stats=stats,
                          notes=screen.collection.notes, incidents=screen.collection.incidents + screen.unread_incidents())
    doc[screen.source.KIND] = {**screen.source.to_json(), "summary": source_summary(screen.source)}
    doc["coverage"] = coverage.to_json()
    if screen.fixes:
        from .judge import fix_groups

        doc["fixes"] = {"specializations": screen.fixes, "groups": fix_groups(screen.fixes)}
    from ..formats.json import dumps

    return dumps(doc)


def package_summary(screen: Any, path: str) -> str:
    """The summary `zeinspect triton FILE.py|DIR` prints first (a triton.app.package.PackageScreen)."""
    done = "screened" if screen.reports or not screen.screened else "ready to screen"
    lines = [f"{path}: {screen.modules} module(s), {len(screen.screened) + len(screen.unscreened)} launched "
             f"kernel(s): {len(screen.screened)} {done}, "
             f"{sum(1 for u in screen.unscreened if u.needs)} need values, "
             f"{sum(1 for u in screen.unscreened if not u.needs)} cannot build here"]
    for u in screen.unscreened:
        if u.needs:
            lines.append(f"  needs values: {u.kernel}: {', '.join(u.needs)}")
    if any(u.needs for u in screen.unscreened):
        lines.append("  (give them with --constexprs NAME=VALUE and --signature NAME=TYPE or '*TYPE' for every "
                     "pointer; KERNEL.NAME=... gives a value to one kernel)")
    for u in screen.unscreened:
        if not u.needs:
            lines.append(f"  cannot build here: {u.kernel}: {u.reason}")
    for error in screen.load_errors:
        lines.append(f"  did not load: {error}")
    return "\n".join(lines) + "\n"


def source_summary(source: Any) -> str:
    """The first line of a library screen: what its source (triton.sources: a capture, a Triton
    cache) held."""
    return capture_summary(source) if source.KIND == "capture" else cache_summary(source)


def capture_summary(capture: Any) -> str:
    launched = [s for s in capture.specializations if s.graph is None]
    generated = [s for s in capture.specializations if s.graph is not None]
    kernels = len({s.label for s in launched})
    status = ("timed out" if capture.timed_out else "crashed" if capture.exit_code is not None and capture.exit_code < 0
              else f"exit {capture.exit_code}")
    text = (f"captured {capture.launches} launches of {kernels} kernels ({len(launched)} "
            f"specializations) from `{' '.join(capture.command)[:120]}` ({status}; the command's own status, "
            "not the screen's)")
    if generated:
        graphs = len({s.graph for s in generated})
        text += (f"; torch.compile: Inductor generated {len({(s.graph, s.kernel.kernel) for s in generated})} "
                 "Triton kernels "
                 f"({len(generated)} autotune configs) for xpu in {graphs} graph{'s' if graphs > 1 else ''}, "
                 "all screened (nothing generated runs here)")
    if capture.specializations and "xpu" not in capture.devices:
        text += (f"; its tensors were on {', '.join(sorted(capture.devices)) or 'no device'}, not an Intel GPU: "
                 "a library that picks values by device took its other branch")
    if capture.xpu is not None:
        text += f"; {stand_in_summary(capture.xpu)}"
    return text


def stand_in_summary(stand_in: Any) -> str:
    read = ", ".join(stand_in.answered) or "nothing"
    where = ("tensors on xpu in host memory, computed on the CPU" if stand_in.tensors == "host"
             else "tensors on the CPU")
    text = f"torch.xpu stood in for {stand_in.name} ({stand_in.target}), {where}; the command read: {read}"
    if stand_in.refused:
        text += f"; XPU-only calls it could not answer: {', '.join(stand_in.refused)}"
    return text


def cache_summary(cache: Any) -> str:
    kernels = len({s.kernel.kernel for s in cache.specializations})
    text = (f"read {cache.entries} cached kernels ({kernels} kernels, {len(cache.specializations)} "
            f"specializations) from the Triton cache {cache.root}")
    if cache.written_for:
        text += f", written for {', '.join(sorted(cache.written_for))}"
    if cache.versions:
        import triton

        others = sorted(v for v in cache.versions if v != triton.__version__)
        text += (f" by Triton {', '.join(others)} (built here with {triton.__version__})" if others
                 else f" by Triton {triton.__version__}")
    if cache.from_ir:
        text += (f"; {cache.from_ir} {'entry' if cache.from_ir == 1 else 'entries'} compiled from an IR file, "
                 "not from Python (no TTIR kept), not screened")
    return text


def _request_text(shown: tuple[Any, Any], opts: Any) -> Iterator[str]:
    req, result = shown
    yield render_request(req, result, as_json=False, stats=opts.stats)


def _request_json(shown: tuple[Any, Any], opts: Any) -> Iterator[str]:
    req, result = shown
    yield render_request(req, result, as_json=True, stats=opts.stats)


TRITON = {"text": _request_text, "json": _request_json}
"""`zeinspect triton`'s writers (formats.writers' registry form): the result is (request, result)."""
