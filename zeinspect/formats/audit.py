"""Audit output: plain text, GitHub workflow commands, JSON.  Pure functions to strings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..judge.audit import AuditResult, Judgement
from ..model import SCHEMA, Compiler, Verdict, built_under
from .common import fmt_bytes, md_code, md_text, safe
from .text import GROUPED_FROM, grouped

_ORDER = [Verdict.OVERFLOW, Verdict.FAILED, Verdict.NEW, Verdict.GREW, Verdict.INTENT, Verdict.IMPROVED, Verdict.STALE]


def summary(result: AuditResult) -> str:
    """The audit's first line: what was audited, how much uses scratch, what the ratchet lists,
    and the compiler environment it was built under."""
    text = (f"audited {result.kernels} kernels on {result.targets} targets: {result.scratch_kernels} use scratch "
            f"memory, {result.listed_kernels} listed in the ratchet")
    if result.not_applicable:
        text += f"; {result.not_applicable} kernel-target pairs not applicable (device requirements not met)"
    if result.unchecked_requirements:
        text += (f"; {result.unchecked_requirements} audited with device requirements assumed met "
                 "(not decidable offline)")
    return text + built_under(j.report for j in result.judgements if j.report is not None)


def counts(result: AuditResult) -> str:
    """Findings by verdict, then what passes: the line that leads the text output."""
    found = ", ".join(f"{v.label} {result.count(v)}" for v in _ORDER)
    return (f"findings: {found}; not applicable {result.count(Verdict.NOT_APPLICABLE)}, "
            f"listed {result.count(Verdict.LISTED)}, clean {result.count(Verdict.CLEAN)} (kernel-target pairs)")


def grouped_findings(result: AuditResult, *, strict: bool) -> list[str]:
    """A library's failing findings by cause and by family, what text, HTML and SARIF lead
    with past GROUPED_FROM kernels; [] for fewer (the rows say it all)."""
    failing = [j.report for j in result.failures(strict) if j.report is not None]
    return grouped(failing) if len({r.identity for r in failing}) > GROUPED_FROM else []


def verdict_line(result: AuditResult, *, strict: bool, unread: int = 0) -> str:
    """`gate passed`, or why it failed: findings, and kernels the inputs declare that were not
    read (judge.coverage: an unread kernel fails the gate whatever the ratchet's scratch lines say)."""
    why = []
    if not result.passed(strict):
        why.append(f"{len(result.failures(strict))} findings")
    if unread:
        why.append(f"{unread} declared {'kernel' if unread == 1 else 'kernels'} unread")
    return f"gate failed ({', '.join(why)})" if why else "gate passed"


def text(result: AuditResult, *, strict: bool, verbose: bool = False, ledger: str | None = None,
         unread: int = 0) -> str:
    """The summary (and the ledger's line) first, then the findings; passing pairs only with `verbose`."""
    lines = [summary(result), *([ledger] if ledger else []), counts(result), *grouped_findings(result, strict=strict)]
    for verdict in _ORDER + ([Verdict.LISTED, Verdict.CLEAN, Verdict.NOT_APPLICABLE] if verbose else []):
        for j in result.judgements:
            if j.verdict is verdict:
                tag = "FAIL" if j.fails(strict) else "NOTE" if verdict in (Verdict.IMPROVED, Verdict.STALE) else "ok"
                lines.append(f"{tag}: {verdict.label}: {safe(j.message)}")
    lines.append(verdict_line(result, strict=strict, unread=unread))
    return "\n".join(lines) + "\n"


def _escape_property(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace(":", "%3A").replace(",", "%2C")


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github(result: AuditResult, *, strict: bool) -> str:
    """GitHub Actions workflow commands: one annotation per finding, then the summary."""
    lines = []
    for j in result.judgements:
        if j.verdict in (Verdict.LISTED, Verdict.CLEAN, Verdict.NOT_APPLICABLE):
            continue
        level = "error" if j.fails(strict) else "notice"
        file = j.report.input if j.report is not None else result.ratchet_path
        props = f"file={_escape_property(file)},title={_escape_property('zeinspect ' + j.verdict.label)}"
        if j.report is None and j.entry is not None:
            props += f",line={j.entry.lineno}"
        lines.append(f"::{level} {props}::{_escape_data(safe(j.message))}")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


MARKDOWN_LIMIT = 65_000
"""The most characters a markdown report holds (a GitHub comment's limit is 65,536)."""


def markdown(result: AuditResult, *, strict: bool, ledger: str | None = None, unread: int = 0) -> str:
    """The gate as a pull-request comment or a CI job summary: the verdict and the summary (with
    the ledger's line), then the findings in a table (kernel, target, verdict, scratch, the
    finding), names as code."""
    from .labels import labels as label_names

    head = [f"**zeinspect audit**: {verdict_line(result, strict=strict, unread=unread)}",
            "", md_text(summary(result)), "", *([md_text(ledger), ""] if ledger else []), md_text(counts(result)), ""]
    shown = [j for verdict in _ORDER for j in result.judgements if j.verdict is verdict]
    if not shown:
        return "\n".join(head).rstrip() + "\n"
    labels = label_names([j.report.kernel for j in shown if j.report is not None])
    rows = ["| kernel | target | verdict | scratch | finding |", "|---|---|---|---|---|"]
    size = sum(len(x) + 1 for x in head + rows)
    for n, j in enumerate(shown):
        r = j.report
        row = (f"| {md_code(labels[r.kernel]) if r else ''} | {md_text(r.target) if r else ''} | "
               f"{'FAIL' if j.fails(strict) else 'note'}: {j.verdict.label} | "
               f"{fmt_bytes(r.shown_scratch_bytes) if r else ''} | {md_text(j.message)} |")
        if size + len(row) > MARKDOWN_LIMIT - 200:
            rows.append(f"| ... and {len(shown) - n} more findings: see the HTML report (--html) | | | | |")
            break
        rows.append(row)
        size += len(row) + 1
    return "\n".join(head + rows) + "\n"


def verdict_json(j: Judgement, strict: bool) -> dict:
    return {"verdict": j.verdict.label, "fails": j.fails(strict), "message": j.message,
            "entry_line": j.entry.lineno if j.entry else None,
            "report": j.report.to_json() if j.report else None}


def document_pieces(result: AuditResult, compilers: list[Compiler], *, strict: bool, stats: dict | None = None,
                    notes: Iterable[str] = (), incidents: Iterable[str] = (), extra: dict | None = None,
                    whole: bool = True) -> Iterator[str]:
    """`document`, streamed one verdict at a time; `extra`: keys added to it (the profile, the
    ledger); `whole`: every declared kernel was read (else the gate did not pass)."""
    from .json import streamed

    head = document(result, compilers, strict=strict, stats=stats, notes=notes, incidents=incidents, verdicts=False,
                    whole=whole)
    head.update(extra or {})
    return streamed(head, "verdicts", (verdict_json(j, strict) for j in result.judgements))


def document(result: AuditResult, compilers: list[Compiler], *, strict: bool, stats: dict | None = None,
             notes: Iterable[str] = (), incidents: Iterable[str] = (),
             verdicts: bool = True, whole: bool = True) -> dict:
    from ..judge.build_cost import build_cost, compile_times

    # Each report once: the intent rules judge a report the scratch rule judged too (judge.paths).
    audited = list({id(j.report): j.report for j in result.judgements if j.report is not None}.values())
    doc = {
        "schema": "zeinspect.audit/1",
        "report_schema": SCHEMA,
        "passed": result.passed(strict) and whole,
        "strict": strict,
        "ratchet": result.ratchet_path,
        "summary": {"kernels": result.kernels, "targets": result.targets, "scratch_kernels": result.scratch_kernels,
                    "listed_kernels": result.listed_kernels, "not_applicable": result.not_applicable,
                    "unchecked_requirements": result.unchecked_requirements,
                    "verdicts": {v.label: result.count(v) for v in Verdict}, "text": summary(result)},
        "compilers": [c.to_json() for c in compilers],
        "verdicts": [verdict_json(j, strict) for j in result.judgements] if verdicts else None,
        "stats": stats or {},
        "notes": list(notes),
        "incidents": list(incidents),
        # What the build cost: each module's compile per target, IGC's retries, the longest first.
        "compile_times": compile_times(audited),
        "build_cost": build_cost(audited),
    }
    if not verdicts:
        del doc["verdicts"]
    return doc


def dumps(doc: dict) -> str:
    from .json import encode

    return encode(doc, 2) + "\n"
