"""The ledger in words: one summary line, and the same for HTML and markdown.

"14 kernels declared: 14 reported"; "14 kernels declared: 5 reported, 9 UNREAD (the
incidents say where and why)"; excluded kernels with their reasons; the parts whose kind
declares no table ("not declared").
"""

from __future__ import annotations

from ..judge.coverage import Coverage


def line(coverage: Coverage | None, unit: str = "kernels") -> str | None:
    """The ledger's summary line, or None when there is nothing to account for; `unit`: what
    is counted (a Triton screen counts specializations)."""
    if coverage is None or not coverage.inputs:
        return None
    t = coverage.totals()
    parts = []
    if t["reported"] or t["declared"]:
        parts.append(f"{t['reported']} reported")
    parts += [f"{n} excluded ({why})" for why, n in t["excluded"].items()]
    parts += [f"{n} {'part' if n == 1 else 'parts'} excluded ({why})" for why, n in t["excluded_parts"].items()]
    if t["unread"]:
        parts.append(f"{t['unread']} UNREAD")
    if t["unread_parts"]:
        parts.append(f"{t['unread_parts']} {'part' if t['unread_parts'] == 1 else 'parts'} UNREAD with "
                     "kernels unknown")
    head = (f"{t['declared']} {unit.removesuffix('s') if t['declared'] == 1 else unit} declared"
            if t["declared"] is not None else f"{unit} not declared")
    text = f"{head}: {', '.join(parts) or 'none reported'}"
    if t["not_declared"] and t["declared"] is not None:
        text += f"; {t['not_declared']} {'input' if t['not_declared'] == 1 else 'inputs'} with no table of kernels"
    if not coverage.whole:
        text += " (see the incidents: an unread kernel fails the run)"
    return text


def markdown(coverage: Coverage | None) -> str:
    text = line(coverage)
    return f"**Coverage:** {text}\n" if text else ""
