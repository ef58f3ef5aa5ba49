"""The `zeinspect.report/1` JSON document (schema documented in the README)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

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


def streamed(head: dict, key: str, items: Iterable[dict]) -> Iterator[str]:
    """`head` with `key` holding `items`, encoded one item at a time: the same JSON as
    `dumps({**head, key: list(items)})` (but `key` last), without ever holding the whole
    document, which for a library on 19 targets is 100,000 items."""
    before, after = dumps({**head, key: _HOLE}).split(json.dumps(_HOLE), 1)
    yield before + "["
    first = True
    for item in items:
        text = json.dumps(item, indent=2, ensure_ascii=True).replace("\n", "\n    ")
        yield ("\n    " if first else ",\n    ") + text
        first = False
    yield ("\n  ]" if not first else "]") + after


def report_pieces(reports: list[KernelReport], compilers: list[Compiler], *, stats: dict | None = None,
                  notes: list[str] | None = None, incidents: list[str] | None = None,
                  extra: dict | None = None) -> Iterator[str]:
    """`report_document` (with `extra` keys beside its own), streamed (see `streamed`)."""
    head = report_document([], compilers, stats=stats, notes=notes, incidents=incidents) | (extra or {})
    del head["reports"]
    return streamed(head, "reports", (r.to_json() for r in reports))
