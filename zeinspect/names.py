"""Kernel names as people read them: demangled, SYCL type names as types, long ones shortened.

SYCL kernel names are the mangled *type* names of the kernel's function object (`_ZTS...`,
"typeinfo name for X"): the name shown is X.  Demangling is libstdc++'s own
`__cxa_demangle` (the `cxxfilt` package), not ours.  Long names are shortened by one
stable rule, a pure function of the symbol, so the same kernel reads the same in every
run and every view:

1. function parameter lists become `(…)`;
2. template arguments nested two or more levels deep become `<…>`;
3. if the result is still longer than `MAX_SHORT` characters, only its last
   `MAX_SHORT - 12` are kept, after `…` (the end of a SYCL name says most: the kernel);
and a shortened name ends in `[#xxxxxx]`, six hex digits of the symbol's SHA-1, so two
kernels never share a short name by accident.  JSON keeps the exact symbol; the ratchet and
`-k` match the symbol, the demangled name or the short name.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib

MAX_SHORT = 100
TYPEINFO = "typeinfo name for "

# IGC adds these to a module's zebin; they are not user kernels.
INTERNAL_KERNELS = frozenset({"Intel_Symbol_Table_Void_Program"})


def is_internal(name: str) -> bool:
    return name in INTERNAL_KERNELS


@functools.lru_cache(maxsize=65536)
def cxx_demangle(symbol: str) -> str:
    """What c++filt prints for the symbol (as IGC's logs name kernels), or the symbol itself."""
    if not symbol.startswith("_Z"):
        return symbol
    try:
        import cxxfilt

        return cxxfilt.demangle(symbol)
    except Exception:  # noqa: BLE001 - not a valid mangled name, or no demangler: show it as it is
        return symbol


def demangled(symbol: str) -> str:
    """The demangled name (SYCL type names without "typeinfo name for"), or the symbol itself."""
    text = cxx_demangle(symbol)
    return text[len(TYPEINFO):] if text.startswith(TYPEINFO) else text


@functools.lru_cache(maxsize=65536)
def short(symbol: str) -> str:
    """The name shown in text output: demangled, then shortened by the rule above."""
    full = demangled(symbol)
    if len(full) <= MAX_SHORT:
        return full
    text = _collapse(full, "(", ")", 0)
    text = _collapse(text, "<", ">", 1)
    if len(text) > MAX_SHORT:
        text = "…" + text[-(MAX_SHORT - 12):]
    return f"{text} [#{hashlib.sha1(symbol.encode()).hexdigest()[:6]}]"


def _collapse(text: str, opening: str, closing: str, keep: int) -> str:
    """Brackets nested deeper than `keep` levels lose what they hold, which becomes `…`."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == opening:
            depth += 1
            if depth <= keep + 1:
                out.append(ch)
            continue
        if ch == closing and depth:
            depth -= 1
            if depth <= keep:
                out.append(ch)
            continue
        if depth <= keep:
            out.append(ch)
        elif out[-1] == opening:
            out.append("…")
    return "".join(out)


def forms(symbol: str) -> tuple[str, ...]:
    """Every spelling a user may use for this kernel: symbol, demangled name, short name."""
    return tuple(dict.fromkeys((symbol, cxx_demangle(symbol), demangled(symbol), short(symbol))))


def matches(pattern: str, symbol: str) -> bool:
    """A ratchet or `-k` pattern (exact or glob) against any spelling of the kernel; a pattern
    that is itself a mangled name also matches the kernel's demangled spelling."""
    if pattern == symbol or fnmatch.fnmatchcase(symbol, pattern):
        return True
    spellings = forms(symbol)
    if any(pattern == form or fnmatch.fnmatchcase(form, pattern) for form in spellings[1:]):
        return True
    return pattern.startswith("_Z") and cxx_demangle(pattern) in spellings
