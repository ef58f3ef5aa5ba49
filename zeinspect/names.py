"""Kernel names as people read them: demangled, wrappers folded, long ones shortened.

SYCL kernel names are the mangled *type* names of the kernel's function object (`_ZTS...`,
"typeinfo name for X"): the name shown is X.  Demangling is libstdc++'s own
`__cxa_demangle` (the `cxxfilt` package), not ours; what it cannot demangle (cutlass and
SYCLcompat `KernelFunctor<&device_kernel<...>>` names) the `cpp_demangle` package (the Rust
crate behind it) does.  Tables show `readable` names, labelled by `labels` (below).  Long names are shortened by one
stable rule, a pure function of the symbol, so the same kernel reads the same in every
run and every view:

1. function parameter lists become `(…)`;
2. template arguments nested two or more levels deep become `<…>`;
3. if the result is still longer than `MAX_SHORT` characters, only its first
   `MAX_SHORT - 12` are kept, before `…` (the head names the kernel; the tail is what every
   template of a library shares);
and a shortened name ends in `[#xxxxxx]`, six hex digits of the symbol's SHA-1, so two
kernels never share a short name by accident.  JSON keeps the exact symbol; the ratchet and
`-k` match the symbol, the demangled name or the short name.
"""

from __future__ import annotations

import collections
import fnmatch
import functools
import hashlib
import re

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
    except Exception:  # noqa: BLE001 - not one libstdc++ can demangle: the second demangler's turn
        pass
    try:
        import cpp_demangle

        return cpp_demangle.demangle(symbol)
    except Exception:  # noqa: BLE001 - not a valid mangled name, or no demangler: show it as it is
        return symbol


def demangled(symbol: str) -> str:
    """The demangled name (SYCL type names without "typeinfo name for"), or the symbol itself."""
    text = cxx_demangle(symbol)
    return text[len(TYPEINFO):] if text.startswith(TYPEINFO) else text


@functools.lru_cache(maxsize=65536)
def short(symbol: str) -> str:
    """The name shown in text output: readable (demangled, SYCL's wrappers folded), then
    shortened by the rule above."""
    full = readable(symbol)
    if len(full) <= MAX_SHORT:
        return full
    text = _collapse(full, "(", ")", 0)
    text = _collapse(text, "<", ">", 1)
    if len(text) > MAX_SHORT:
        text = text[:MAX_SHORT - 12] + "…"  # its head names the kernel; the tail is what every template shares
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
    """Every spelling a user may use for this kernel: symbol, demangled name, readable name,
    short name, and its family, whole or as the summary by family names it (`XeFMHAFwdKernel`),
    so that one ratchet line can name every member of a template."""
    return tuple(dict.fromkeys((symbol, cxx_demangle(symbol), demangled(symbol), readable(symbol), short(symbol),
                                family(symbol), family_name(symbol))))


def matches(pattern: str, symbol: str) -> bool:
    """A ratchet or `-k` pattern (exact or glob) against any spelling of the kernel; a pattern
    that is itself a mangled name also matches the kernel's demangled spelling."""
    if pattern == symbol or fnmatch.fnmatchcase(symbol, pattern):
        return True
    spellings = forms(symbol)
    if any(pattern == form or fnmatch.fnmatchcase(form, pattern) for form in spellings[1:]):
        return True
    return pattern.startswith("_Z") and cxx_demangle(pattern) in spellings


# -- the name people read ---------------------------------------------------------------------
#
# A SYCL kernel's type name is mostly wrappers: SYCLcompat's `KernelFunctor<&device_kernel<K>>`,
# the runtime's `RoundedRangeKernel<item, dims, L>` and `__pf_kernel_wrapper<L>`, and lambdas
# nested inside a launch function.  `readable` folds them to the user's kernel (K, or `lambda
# in F`); `labels` then tells the members of one family apart by the template arguments that
# differ among them, found by comparing the members, not from a list of known ones.

_OPEN, _CLOSE = "<([{", ">)]}"


def _close_of(text: str, at: int) -> int:
    """The index of the bracket closing the one at `at` (len(text) when unbalanced)."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def split_template(text: str) -> tuple[str, list[str], str]:
    """(the name before its first template argument list, the top-level arguments, what follows
    the list); ([], text's end) when it has none.  `a::B<c, d<e>>::f` -> ('a::B', ['c', 'd<e>'], '::f')."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<" and depth == 0 and not text[:i].endswith("operator"):
            end = _close_of(text, i)
            args: list[str] = []
            part: list[str] = []
            level = 0
            for c in text[i + 1:end]:
                if c in _OPEN:
                    level += 1
                elif c in _CLOSE:
                    level -= 1
                if c == "," and level == 0:
                    args.append("".join(part).strip())
                    part = []
                else:
                    part.append(c)
            args.append("".join(part).strip())
            return text[:i], args, text[end + 1:]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return text, [], ""


def _without_call(text: str) -> str:
    """`void f<T>(int, float)` -> `f<T>`: a function's return type and parameter list dropped."""
    text = text.strip()
    if text.startswith("(") and _close_of(text, 0) == len(text) - 1:
        text = text[1:-1].strip()  # `&(void f<T>(P))`: the address of a function, parenthesised
    if text.startswith("void "):
        text = text[5:]
    if text.endswith(")"):
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            depth += text[i] == ")"
            depth -= text[i] == "("
            if depth == 0:
                return text[:i]
    return text


@functools.lru_cache(maxsize=65536)
def readable(symbol: str) -> str:
    """The kernel as its author wrote it: demangled, with SYCL's and SYCLcompat's wrappers and
    the lambda nests of launch functions folded."""
    text = demangled(symbol)
    for _ in range(8):  # wrappers nest a few deep at most
        head, args, tail = split_template(text)
        last = head.rsplit("::", 1)[-1]
        if last == "KernelFunctor" and args and args[0].startswith("&"):
            text = _without_call(args[0][1:])
        elif last == "device_kernel" and args:
            text = args[0]
        elif last in ("RoundedRangeKernel", "RoundedRangeKernelWithKH") and args:
            text = args[-1]
        elif last == "__pf_kernel_wrapper" and args:
            text = args[0]
        else:
            break
    cut = text.find("::{lambda(")
    if cut > 0:
        text = f"lambda in {_without_call(text[:cut])}"
    return text


def family(symbol: str) -> str:
    """What the members of one kernel family share: the readable name without its template arguments."""
    head, args, tail = split_template(readable(symbol))
    return head + ("<…>" if args else "") + tail if tail else head


def family_name(symbol: str) -> str:
    """A family as summaries name it (`XeFMHAFwdKernel`, `lambda in memcpy`): its readable name
    without template arguments or namespaces."""
    head = family(symbol).replace("<…>", "")
    return re.sub(r"(?:[A-Za-z_][A-Za-z0-9_]*::)+(?=[A-Za-z_~])", "", head) or symbol


def _compact(arg: str) -> str:
    """A template argument as a table shows it: names without their namespaces, arguments
    nested in it shown, deeper ones elided."""
    text = re.sub(r"(?:[A-Za-z_][A-Za-z0-9_]*::)+(?=[A-Za-z_~])", "", arg)
    return _collapse(text, "<", ">", 1)


def _short_head(head: str) -> str:
    """A family's name without its namespaces (the summary by family names them whole)."""
    return head.rsplit("::", 1)[-1] if "(" not in head else head


_TOKEN = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*|-?\d+|\S")
"""A qualified name (one word, shown by its last part), a number, or one character."""


def _words(text: str) -> list[str]:
    """A name's words: qualified names by their last part (`half_impl::half` -> `half`), each
    number with the template it is an argument of (`C<64>`, `XeDefault<2>`)."""
    tokens = [t.rsplit("::", 1)[-1] for t in _TOKEN.findall(text)]
    out: list[str] = []
    for i, token in enumerate(tokens):
        if token.lstrip("-").isdigit() and i >= 2 and tokens[i - 1] == "<" and tokens[i - 2][:1].isalpha():
            out[-2:] = []
            token = f"{tokens[i - 2]}<{token}>"
        out.append(token)
    return out


def _spell(picked: list[str], how: int) -> str:
    """The differing words of one member, from shortest to longest spelling: each value once
    with the flags as a bit string (0); in order, a repeat in a row once (1); all of them (2)."""
    if how == 0:
        flags = "".join("1" if w == "true" else "0" for w in picked if w in ("true", "false"))
        values = list(dict.fromkeys(w for w in picked if w not in ("true", "false")))
        return ", ".join(values + ([f"flags {flags}"] if flags else []))
    if how == 1:
        return ", ".join(w for i, w in enumerate(picked) if i == 0 or picked[i - 1] != w)
    return ", ".join(picked)


def _differences(texts: list[str]) -> list[str]:
    """What tells several members of one family apart, from the words at the places their
    spellings differ, spelled as shortly as keeps the members apart (`_spell`).  Members whose
    spellings do not line up word for word are compared within each group that does."""
    words = [_words(t) for t in texts]
    out = [""] * len(texts)
    groups: dict[int, list[int]] = {}
    for n, w in enumerate(words):
        groups.setdefault(len(w), []).append(n)
    for members in groups.values():
        if len(members) == 1:
            continue
        places = [i for i in range(len(words[members[0]])) if len({words[n][i] for n in members}) > 1]
        picked = {n: [words[n][i] for i in places] for n in members}
        pending = list(members)
        for how in (0, 1, 2):
            spelled = {n: _spell(picked[n], how) for n in pending}
            counts = collections.Counter(spelled.values())
            for n in pending:
                out[n] = spelled[n]
            pending = [n for n in pending if counts[spelled[n]] > 1]
            if not pending:
                break
    return out


def labels(symbols: list[str], limit: int = MAX_SHORT) -> dict[str, str]:
    """symbol -> the label a table shows: the readable name, and for a family of several members
    only the template arguments that tell them apart, found by comparing the members
    (`XeFMHAFwdSplitKVKernel<…, DecodeFwdMainloop<XeDefault<2>, …>, …>`).  No two symbols get
    one label: a tie left is told apart by the symbol's hash."""
    out: dict[str, str] = {}
    families: dict[tuple, list[str]] = {}
    for symbol in dict.fromkeys(symbols):
        head, args, tail = split_template(readable(symbol))
        families.setdefault((head, tail, bool(args)), []).append(symbol)
    for (_, _, count), members in families.items():
        if len(members) == 1 or not count:
            for symbol in members:
                out[symbol] = _fit(readable(symbol), symbol, limit)
            continue
        texts = [readable(m) for m in members]
        differences = _differences(texts)
        head = _short_head(split_template(texts[0])[0])
        for symbol, shown in zip(members, differences):
            out[symbol] = _fit(f"{head}<{shown}>" if shown else readable(symbol), symbol, limit)
    seen: dict[str, list[str]] = {}
    for symbol, label in out.items():
        seen.setdefault(label, []).append(symbol)
    for label, same in seen.items():
        if len(same) > 1:
            for symbol in same:
                out[symbol] = f"{label} [#{hashlib.sha1(symbol.encode()).hexdigest()[:6]}]"
    return out


def _fit(text: str, symbol: str, limit: int) -> str:
    """A label no longer than `limit`: nested arguments elided first, then its end cut (its head,
    the family's name, is what a reader looks for), with the symbol's hash to keep it unique."""
    if len(text) <= limit:
        return text
    text = _collapse(_collapse(text, "(", ")", 0), "<", ">", 1)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 12]}… [#{hashlib.sha1(symbol.encode()).hexdigest()[:6]}]"
