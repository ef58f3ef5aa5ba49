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
    text = collapse(full, "(", ")", 0)
    text = collapse(text, "<", ">", 1)
    if len(text) > MAX_SHORT:
        text = text[:MAX_SHORT - 12] + "…"  # its head names the kernel; the tail is what every template shares
    return f"{text} [#{hashlib.sha1(symbol.encode()).hexdigest()[:6]}]"


def collapse(text: str, opening: str, closing: str, keep: int) -> str:
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


BRACKETS = re.compile(r"[<>()\[\]{},]")
"""The characters a name's structure is made of: scanned for, the text between them skipped
(a cutlass kernel's name runs to 10,000 characters)."""


def _close_of(text: str, at: int) -> int:
    """The index of the bracket closing the one at `at` (len(text) when unbalanced)."""
    depth = 0
    for m in BRACKETS.finditer(text, at):
        c = m.group()
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return m.start()
    return len(text)


def split_template(text: str) -> tuple[str, list[str], str]:
    """(the name before its first template argument list, the top-level arguments, what follows
    the list); ([], text's end) when it has none.  `a::B<c, d<e>>::f` -> ('a::B', ['c', 'd<e>'], '::f')."""
    depth = 0
    for m in BRACKETS.finditer(text):
        c, i = m.group(), m.start()
        if c == "<" and depth == 0 and not text[:i].endswith("operator"):
            args: list[str] = []
            begin = i + 1
            level = 0
            for n in BRACKETS.finditer(text, i + 1):
                d = n.group()
                if d in _OPEN:
                    level += 1
                elif d in _CLOSE:
                    if level == 0:
                        args.append(text[begin:n.start()].strip())
                        return text[:i], args, text[n.start() + 1:]
                    level -= 1
                elif d == "," and level == 0:
                    args.append(text[begin:n.start()].strip())
                    begin = n.start() + 1
            args.append(text[begin:].strip())
            return text[:i], args, ""
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
    return text, [], ""


def template_head(text: str) -> str:
    """split_template's first part alone, found without reading the arguments (the name before its
    first template argument list)."""
    depth = 0
    for m in BRACKETS.finditer(text):
        c = m.group()
        if c == "<" and depth == 0 and not text.endswith("operator", 0, m.start()):
            return text[:m.start()]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
    return text


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


_LAMBDA = "::{lambda("
_CAST = re.compile(r"\((?:[A-Za-z_]\w*::)*[A-Za-z_][\w ]*\)(-?\d+)")
"""`(sycl::detail::reduction::strategy)7`: a non-type argument of an enum type, read as its number."""
_CHARS = re.compile(r"(?:, \(char\)-?\d+)+")
"""A pack of `(char)N` arguments: how oneDPL's `__composite` spells a kernel's name when it is long."""
_WRAPPERS = {"KernelFunctor", "device_kernel", "RoundedRangeKernel", "RoundedRangeKernelWithKH", "__pf_kernel_wrapper",
             "__composite"}
"""The SYCL runtime's, SYCLcompat's and oneDPL's templates that wrap the kernel a user wrote."""
ROUNDED = " [rounded range]"
"""The mark of the SYCL runtime's RoundedRangeKernel twin of a kernel (the runtime builds both)."""


def _name_start(text: str, at: int) -> int:
    """Where the qualified name that ends at `at` starts: after the unmatched bracket, comma or
    space before it (a return type is left out; `... const` belongs to the name)."""
    depth = 0
    k = at - 1
    while k >= 0:
        c = text[k]
        if c in _CLOSE:
            depth += 1
        elif c in _OPEN:
            if depth == 0:
                return k + 1
            depth -= 1
        elif depth == 0 and c == ",":
            return k + 1
        elif depth == 0 and c == " " and not text.startswith(" const", k):
            return k + 1
        k -= 1
    return 0


def _lambda_chain(text: str, at: int) -> tuple[int, list[str], list[str]]:
    """The lambdas nested in each other from `text[at:]` (`::{lambda(P)#N}`, then any
    `::operator()<T>(P) const::{lambda(Q)#M}`): (where the chain ends, [N<T>, M, ...], [P, Q,
    ...]); a generic lambda's call operator keeps the template arguments it was called with
    (`#2<KernelOneWGTag>`: one kernel per instantiation)."""
    numbers: list[str] = []
    params: list[str] = []
    j = at
    while text.startswith(_LAMBDA, j):
        close = _close_of(text, j + 2)
        m = re.fullmatch(r"\{lambda\((.*)\)#(\d+)\}", text[j + 2:close + 1], re.S)
        if m is None:
            break
        params.append(m[1])
        numbers.append(m[2])
        j = close + 1
        if not text.startswith("::operator()", j):
            break
        k = j + len("::operator()")
        if text.startswith("<", k):
            end = _close_of(text, k)
            numbers[-1] += text[k:end + 1]
            k = end + 1
        if not text.startswith("(", k):
            break
        j = _close_of(text, k) + 1
        if text.startswith(" const", j):
            j += len(" const")
    return j, numbers, params


def _scopes(name: str) -> list[str]:
    """`a::B<c::d>::f` -> ['a', 'B<c::d>', 'f']: a qualified name's scopes."""
    out, depth, begin = [], 0, 0
    i = 0
    while i < len(name):
        c = name[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0 and name.startswith("::", i):
            out.append(name[begin:i])
            i += 2
            begin = i
            continue
        i += 1
    out.append(name[begin:])
    return [p for p in out if p]


def _enclosing(name: str, qualified: bool) -> str:
    """A lambda's enclosing function as a reader names it: `F(…)`, or `C<…>::m<…>(…)` for a
    method of a class template (and a functor's template call operator), namespaces left out
    unless `qualified`."""
    scopes = _scopes(_without_call(name.removesuffix(" const")))
    if len(scopes) > 1 and scopes[-1] == "operator()":
        scopes = scopes[:-1]  # a functor's call operator: the functor names it
    if qualified:
        return "::".join(scopes) + "(…)"
    keep = scopes[-2:] if len(scopes) > 1 and ("<" in scopes[-2] or scopes[-1].startswith("operator()")) else scopes[-1:]
    return "::".join(keep) + "(…)"


def _fold_lambdas(text: str, detail: int = 0) -> str:
    """Each chain of lambdas as `lambda #3/#1 in F(…)`: its enclosing function and its place in
    it, as the mangled name numbers them (outermost first).  Lambdas are numbered per signature,
    so `detail` 2 also says each one's parameters (`#1(id<2>)`); `detail` 1 keeps the enclosing's
    namespaces."""
    for _ in range(256):  # each turn folds one chain
        at = text.find(_LAMBDA)
        if at < 0:
            break
        end, numbers, params = _lambda_chain(text, at)
        if not numbers:
            break
        begin = _name_start(text, at)
        place = "/".join(f"#{n}({p})" if detail >= 2 else f"#{n}" for n, p in zip(numbers, params))
        shown = f"lambda {place} in {_enclosing(text[begin:at], detail >= 1)}"
        text = text[:begin] + shown + text[end:]
    return text


def _decode_name_chars(text: str) -> str:
    """oneDPL's `__composite<K, (char)95, (char)90, ...>`: the chars spell the kernel's mangled
    name, which is demangled in their place."""
    def decoded(m: re.Match) -> str:
        spelled = bytes(int(n) & 0xFF for n in re.findall(r"\(char\)(-?\d+)", m[0])).decode("latin-1")
        return ", " + (demangled(spelled) if spelled.startswith("_Z") else repr(spelled))
    return _CHARS.sub(decoded, text)


@functools.lru_cache(maxsize=65536)
def readable(symbol: str, detail: int = 0) -> str:
    """The kernel as its author wrote it: demangled, SYCL's and SYCLcompat's wrappers folded
    (the runtime's rounded-range twin marked), oneDPL's spelled-out names decoded, enum
    arguments read as numbers, and lambdas named by their place in their enclosing function
    (`lambda #3/#1 in ComputePosePointToPlaneSYCL(…)`).  `detail` 1 and 2 say more of a lambda
    (its enclosing's namespaces; its parameters), for names that read alike otherwise."""
    text = demangled(symbol)
    rounded = False
    for _ in range(8):  # wrappers nest a few deep at most
        if template_head(text).rsplit("::", 1)[-1] not in _WRAPPERS:
            break
        head, args, tail = split_template(text)
        last = head.rsplit("::", 1)[-1]
        if last == "KernelFunctor" and args and args[0].startswith("&"):
            text = _without_call(args[0][1:])
        elif last == "device_kernel" and args:
            text = args[0]
        elif last in ("RoundedRangeKernel", "RoundedRangeKernelWithKH") and args:
            text, rounded = args[-1], True
        elif last == "__pf_kernel_wrapper" and args:
            text = args[0]
        elif last == "__composite" and len(args) > 1 and "(char)" in text:
            text = split_template(_decode_name_chars(text))[1][-1]
        else:
            break
    return _fold_lambdas(_CAST.sub(r"\1", text), detail) + (ROUNDED if rounded else "")


_LAMBDA_PLACE = re.compile(r"lambda #\S+ in ")


def family(symbol: str) -> str:
    """What the members of one kernel family share: the readable name without its template
    arguments, a lambda without its place (the lambdas one source lambda becomes through a
    dispatch macro are one family), the rounded-range twin with its kernel."""
    text = _LAMBDA_PLACE.sub("lambda in ", readable(symbol).removesuffix(ROUNDED))
    head, args, tail = split_template(text)
    return head + ("<…>" if args else "") + tail if tail else head


def family_name(symbol: str) -> str:
    """A family as summaries name it (`XeFMHAFwdKernel`, `lambda in memcpy`): its readable name
    without template arguments or namespaces."""
    head = family(symbol).replace("<…>", "").replace("(…)", "")
    return re.sub(r"(?:[A-Za-z_][A-Za-z0-9_]*::)+(?=[A-Za-z_~])", "", head) or symbol
