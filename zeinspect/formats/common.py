"""Helpers every output format shares: terminal-safe text and compact byte figures."""

from __future__ import annotations


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


def fmt_bytes(n: int | None) -> str:
    """Exact below 10 000, then KiB: a table cell stays narrow and still says the size."""
    if n is None:
        return "?"
    if n < 10000:
        return str(n)
    return f"{n / 1024:.0f}K"


def fmt_opt(n: object) -> str:
    return "?" if n is None else str(n)
