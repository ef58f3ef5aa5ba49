"""The `zeinspect.report/1` JSON document (schema documented in the README)."""

from __future__ import annotations

import json

from ..model import SCHEMA, Compiler, KernelReport


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
