"""Helpers every output format shares: terminal-safe text and compact byte figures."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def safe(text: object) -> str:
    """Names read from files are data: escape anything a terminal would interpret."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0 or ch in "\u2028\u2029\u202e\u202d\u2066\u2067\u2068\u2069":
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def md_code(text: object) -> str:
    """A name as a code span in a GitHub-flavoured markdown table cell: its characters as they
    are (no entity or backslash escape is read inside a code span, so none is written: `<`
    stays `<`), a `|` escaped as GFM's table rule asks, and a fence longer than any run of
    backticks in it."""
    body = safe(text).replace("|", "\\|")
    run = max((len(r) for r in re.findall(r"`+", body)), default=0)
    fence = "`" * (run + 1)
    pad = " " if body.startswith(("`", " ")) or body.endswith(("`", " ")) else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_text(text: object) -> str:
    """Plain text in a markdown table cell: every ASCII punctuation markdown could read as
    markup escaped with a backslash (CommonMark reads each as the character itself)."""
    return re.sub(r"([\\`*_\[\]<>|#!&~])", r"\\\1", safe(text))


def fmt_bytes(n: int | None) -> str:
    """Exact below 10 000, then KiB: a table cell stays narrow and still says the size."""
    if n is None:
        return "?"
    if n < 10000:
        return str(n)
    return f"{n / 1024:.0f}K"


def fmt_opt(n: object) -> str:
    return "?" if n is None else str(n)


def fold_rows(rows: Mapping[K, V], reads: Callable[[V], Hashable]) -> tuple[dict[K, V], dict[K, list[K]]]:
    """One row for the rows that read the same (`reads`: the same kernel, KernelReport.identity,
    with the same cells): the same symbol in several files of one package, or in several images
    of one library.  Returns the rows kept, in order, and for each kept row the keys of the
    others it stands for.  What the text table and the HTML report both show."""
    kept: dict[K, V] = {}
    first: dict[Hashable, K] = {}
    elsewhere: dict[K, list[K]] = {}
    for key, row in rows.items():
        reading = reads(row)
        if reading in first:
            elsewhere.setdefault(first[reading], []).append(key)
            continue
        first[reading] = key
        kept[key] = row
    return kept, elsewhere
