"""`NAME=VALUE,NAME=VALUE` option values (`--signature`, `--constexprs`, gate entries)."""

from __future__ import annotations

from .errors import UsageError


def parse_pairs(text: str | None, what: str) -> dict:
    """NAME=VALUE pairs; in a signature a bare `*TYPE` is the type of every pointer (key `*`)."""
    out = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if what == "signature" and part.startswith("*") and "=" not in part:
            out["*"] = part
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--{what}: expected NAME=VALUE pairs separated by commas, not {part!r}")
        out[key.strip()] = value.strip()
    return out
