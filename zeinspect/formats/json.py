"""The `zeinspect.report/1` JSON document (schema documented in the README)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from ..model import SCHEMA, Compiler, KernelReport

_HOLE = "\u0000zeinspect-list\u0000"


def report_document(reports: list[KernelReport], compilers: list[Compiler], *, stats: dict | None = None,
                    notes: list[str] | None = None, incidents: list[str] | None = None) -> dict:
    return {
        "schema": SCHEMA,
        "compilers": [c.to_json() for c in compilers],
        "reports": [r.to_json() for r in reports],
        "stats": stats or {},
        "notes": list(notes or []),
        "incidents": list(incidents or []),
    }


def dumps(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=True) + "\n"


def write_streamed(head: dict, key: str, items: Iterable[dict], write: Callable[[str], None]) -> None:
    """Write `head` with `key` holding `items`, encoding one item at a time: the same JSON as
    `dumps({**head, key: list(items)})` (but `key` last), without ever holding the whole
    document, which for a library on 19 targets is 100,000 items."""
    before, after = dumps({**head, key: _HOLE}).split(json.dumps(_HOLE), 1)
    write(before + "[")
    first = True
    for item in items:
        text = json.dumps(item, indent=2, ensure_ascii=True).replace("\n", "\n    ")
        write(("\n    " if first else ",\n    ") + text)
        first = False
    write(("\n  ]" if not first else "]") + after)


def write_report_document(reports: list[KernelReport], compilers: list[Compiler], write: Callable[[str], None], *,
                          stats: dict | None = None, notes: list[str] | None = None,
                          incidents: list[str] | None = None, extra: dict | None = None) -> None:
    """`report_document` (with `extra` keys beside its own), streamed (see write_streamed)."""
    head = report_document([], compilers, stats=stats, notes=notes, incidents=incidents) | (extra or {})
    del head["reports"]
    write_streamed(head, "reports", (r.to_json() for r in reports), write)
