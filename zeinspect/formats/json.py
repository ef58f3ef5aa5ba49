"""The `zeinspect.report/1` JSON document (docs/schemas/report-1.json, docs/reference/figures.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import __version__
from ..judge.build_cost import build_cost, compile_times
from ..model import SCHEMA, Compiler, KernelReport, environment_of

_HOLE = "\u0000zeinspect-list\u0000"


def report_document(reports: list[KernelReport], compilers: list[Compiler], *, stats: dict | None = None,
                    notes: list[str] | None = None, incidents: list[str] | None = None) -> dict:
    return {
        "schema": SCHEMA,
        "zeinspect": __version__,
        "compilers": compilers_json(compilers, reports),
        "reports": [r.to_json() for r in reports],
        "stats": stats or {},
        "notes": list(notes or []),
        "incidents": list(incidents or []),
        "compile_times": compile_times(reports),
        "build_cost": build_cost(reports),
    }


def compilers_json(compilers: list[Compiler], reports: list[KernelReport]) -> list[dict]:
    """Each compiler with the variables of its environment the reports were built under."""
    return [c.to_json() | {"environment": environment_of(r for r in reports if r.compiler == c.id)}
            for c in compilers]


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def _escape(match: re.Match) -> str:
    n = ord(match.group())
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000  # as json.dumps writes it: a surrogate pair
    return f"\\u{0xd800 | (n >> 10):04x}\\u{0xdc00 | (n & 0x3ff):04x}"


def encode(document: object, indent: int = 2, enc_hook: Callable[[Any], Any] | None = None) -> str:
    """`json.dumps(document, indent=indent, ensure_ascii=True)` at C speed: the same text, but
    for the spelling of large floats' exponents (`1e16`, not `1e+16`; the same value).

    Python's json module encodes in C only without `indent`; with it, it falls back to its
    pure-Python encoder (74 us for one report here, against 4.5 us through msgspec), and a
    library's document is 100,000 reports.  msgspec writes UTF-8: what is not ASCII (only
    ever inside strings) is escaped as json.dumps escapes it."""
    import msgspec

    text = msgspec.json.format(msgspec.json.encode(document, enc_hook=enc_hook), indent=indent).decode()
    return _NON_ASCII.sub(_escape, text) if not text.isascii() or "\x7f" in text else text


def dumps(document: dict) -> str:
    return encode(document, 2) + "\n"


def streamed(head: dict, key: str, items: Iterable[dict]) -> Iterator[str]:
    """`head` with `key` holding `items`, encoded one item at a time: the same JSON as
    `dumps({**head, key: list(items)})` (but `key` last), without ever holding the whole
    document, which for a library on 19 targets is 100,000 items."""
    before, after = dumps({**head, key: _HOLE}).split(json.dumps(_HOLE), 1)
    yield before + "["
    first = True
    for item in items:
        text = encode(item, 2).replace("\n", "\n    ")
        yield ("\n    " if first else ",\n    ") + text
        first = False
    yield ("\n  ]" if not first else "]") + after


def report_pieces(reports: list[KernelReport], compilers: list[Compiler], *, stats: dict | None = None,
                  notes: list[str] | None = None, incidents: list[str] | None = None,
                  extra: dict | None = None) -> Iterator[str]:
    """`report_document` (with `extra` keys beside its own), streamed (see `streamed`)."""
    head = report_document([], compilers, stats=stats, notes=notes, incidents=incidents) | (extra or {})
    head["compilers"] = compilers_json(compilers, reports)
    head["compile_times"] = compile_times(reports)
    head["build_cost"] = build_cost(reports)
    del head["reports"]
    return streamed(head, "reports", (r.to_json() for r in reports))
