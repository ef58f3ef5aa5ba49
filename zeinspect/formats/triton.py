"""`zeinspect triton`: cards per run (as compiled, then staged), or one JSON document.  Pure."""

from __future__ import annotations

from .json import report_document
from .text import cards


def text(runs: list) -> str:
    """`runs`: (label, Collection) pairs, the last one the result."""
    return "".join(f"== {label}\n" + cards(got.reports) for label, got in runs)


def document(runs: list, stats: dict) -> dict:
    final = runs[-1][1]
    doc = report_document(final.reports, final.compilers, stats=stats, incidents=final.incidents)
    if len(runs) > 1:
        doc["before_staging"] = [r.to_json() for r in runs[0][1].reports]
    return doc
