"""Labels of kernel names in a table: the shortest text that tells the rows apart.

Each row of a table names its kernel by a label: its readable name (names.readable) where that
is short and unique, else what tells the members of one family apart (their differing template
arguments, or the words that differ), spelled as shortly as keeps them apart.  Only the views
use labels: JSON, the ratchet and `-k` keep and match the symbol (names).
"""

from __future__ import annotations

import collections
import hashlib
import re

from ..names import BRACKETS, collapse, demangled, readable, split_template, template_head


def _compact(arg: str) -> str:
    """A template argument as a table shows it: names without their namespaces, arguments
    nested in it shown, deeper ones elided."""
    text = re.sub(r"(?:[A-Za-z_][A-Za-z0-9_]*::)+(?=[A-Za-z_~])", "", arg)
    return collapse(text, "<", ">", 1)


def _short_head(head: str) -> str:
    """A family's name without its namespaces (the summary by family names them whole)."""
    return head.rsplit("::", 1)[-1] if "(" not in head else head


_TOKEN = re.compile(r"lambda #[\d/#]+ in (?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*|"
                    r"(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*|-?\d+|\S")
"""A lambda's place and its enclosing function, a qualified name (one word, shown by its last
part), a number, or one character."""


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


_NAMESPACES = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)+(?=[A-Za-z_~])")
LABEL_WORDS_FROM = 160
"""A family whose members, told apart by their structure, read longer than this are told apart
by the words that differ instead (cutlass' kernels: dozens of shared arguments, a few differ)."""


def _plain(text: str) -> str:
    """Namespaces left out (`(anonymous namespace)::` too)."""
    return _NAMESPACES.sub("", text.replace("(anonymous namespace)::", ""))


def _compact_text(text: str, depth: int) -> str:
    """A name as a table shows it: no namespaces, parameter lists as `(…)`, template arguments
    nested deeper than `depth` elided."""
    return collapse(collapse(_plain(text), "(", ")", 0), "<", ">", depth)


class _Node:
    """A name's structure: text, then a template argument list (each argument a node), and so
    on (`A<b, c<d>>::f<e>` is 'A', [b, c<d>], '::f', [e]); parameter lists stay text.  Parsed
    in one pass over the name's brackets (`_parse`)."""

    __slots__ = ("parts", "whole")

    def __init__(self, whole: str = "", parts: list | None = None) -> None:
        self.whole = whole
        self.parts: list = parts if parts is not None else []

    def text(self) -> str:
        return self.whole

    def shape(self) -> tuple:
        return tuple(_plain(p) if isinstance(p, str) else len(p) for p in self.parts)


def _parse(text: str) -> _Node:
    """`text` as a tree of template argument lists (what split_template finds, level by level)."""
    root = _Node(text)
    # The open nodes: (node, where it starts, where its current text part starts, the list it goes in).
    stack: list[tuple[_Node, int, int, list]] = [(root, 0, 0, [])]
    parens = 0

    def finish(end: int) -> None:
        node, begin, part, into = stack.pop()
        node.parts.append(text[part:end])
        node.whole = text[begin:end].strip()
        if isinstance(node.parts[0], str):
            node.parts[0] = node.parts[0].lstrip()
        if isinstance(node.parts[-1], str):
            node.parts[-1] = node.parts[-1].rstrip()
        node.parts = [p for p in node.parts if p != ""]
        into.append(node)

    for m in BRACKETS.finditer(text):
        c, i = m.group(), m.start()
        if c in "([{":
            parens += 1
        elif c in ")]}":
            parens -= 1
        elif parens:
            continue
        elif c == "<" and not text.endswith("operator", 0, i):
            node, begin, part, into = stack[-1]
            node.parts.append(text[part:i])
            arguments: list = []
            node.parts.append(arguments)
            stack[-1] = (node, begin, i + 1, into)
            stack.append((_Node(), i + 1, i + 1, arguments))
        elif c in ",>" and len(stack) > 1:
            into = stack[-1][3]
            finish(i)
            if c == ",":
                stack.append((_Node(), i + 1, i + 1, into))
            else:
                node, begin, _, outer = stack[-1]
                stack[-1] = (node, begin, i + 1, outer)
    if len(stack) > 1:  # unbalanced: what is open ends with the text
        while len(stack) > 1:
            finish(len(text))
        stack[-1] = (root, 0, len(text), [])
    finish(len(text))
    root.whole = text
    return root


def _told_apart(nodes: list[_Node]) -> list[str | None]:
    """Each node as it differs from the others: their shared structure kept, each argument every
    node has alike shown as `…` (None: the node is the others' in every way)."""
    texts = [n.text() for n in nodes]
    if len(set(texts)) == 1:
        return [None] * len(nodes)
    shapes = [n.shape() for n in nodes]
    if len(set(shapes)) > 1:
        # Nodes of different structure: each structure's nodes told apart among themselves.
        out: list[str | None] = [None] * len(nodes)
        by_shape: dict[tuple, list[int]] = {}
        for i, shape in enumerate(shapes):
            by_shape.setdefault(shape, []).append(i)
        for members in by_shape.values():
            told: list[str | None] = _told_apart([nodes[i] for i in members]) if len(members) > 1 else [None]
            for i, v in zip(members, told):
                out[i] = v if v is not None else _compact_text(texts[i], 2)
        return out
    rendered: list[list[str]] = [[] for _ in nodes]
    for at, part in enumerate(shapes[0]):
        if isinstance(part, str):
            for r in rendered:
                r.append(_compact_text(part, 0))
            continue
        lists = [n.parts[at] for n in nodes]
        columns: list[list[str | None]] = []
        seen: list[list[str]] = []
        for i in range(part):
            column = [arguments[i].text() for arguments in lists]
            # An argument that repeats an earlier one for every node says nothing new.
            columns.append([None] * len(nodes) if column in seen else _told_apart([a[i] for a in lists]))
            seen.append(column)
        for k, r in enumerate(rendered):
            shown: list[str] = []
            for column in columns:
                value = column[k]
                if value is not None:
                    shown.append(value)
                elif not shown or shown[-1] != "…":
                    shown.append("…")
            r.append("<" + ", ".join(shown) + ">")
    return ["".join(r) for r in rendered]


def _by_words(texts: list[str]) -> list[str]:
    """Members told apart by the words at the places their names differ (`_differences`)."""
    head = _plain(_short_head(split_template(texts[0])[0]))
    return [f"{head}<{d}>" if d else _compact_text(t, 1) for t, d in zip(texts, _differences(texts))]


def _family_labels(texts: list[str]) -> list[str]:
    """The members of one family, each as it differs from the others: by structure (shared
    arguments folded to `…`), or by the differing words where that reads shorter and keeps them
    apart as well."""
    if min(map(len, texts)) > LABEL_WORDS_FROM * 8:
        # Names of thousands of characters (cutlass' kernels): their structure cannot be shown in
        # a row, and reading it costs more than the words do.
        words = _by_words(texts)
        if len(set(words)) == len(words):
            return words
    shown = [v if v is not None else _compact_text(t, 1) for t, v in zip(texts, _told_apart([_parse(t) for t in texts]))]
    if max(map(len, shown)) > LABEL_WORDS_FROM or len(set(shown)) < len(shown):
        words = _by_words(texts)
        if len(set(words)) >= len(set(shown)) and max(map(len, words)) < max(map(len, shown)):
            return words
    return shown


def _fuller(symbol: str, level: int) -> str:
    """A name said more fully, level by level, for labels two kernels still share."""
    if level == 0:
        return _compact_text(readable(symbol), 3)
    if level == 1:  # with namespaces: the same function in two namespaces
        return collapse(collapse(readable(symbol, 1), "(", ")", 0), "<", ">", 6)
    if level == 2:
        return _plain(readable(symbol, 2))
    return demangled(symbol)


def labels(symbols: list[str]) -> dict[str, str]:
    """symbol -> the label a table shows: the readable name (namespaces and parameter lists left
    out), and for a family of several members only what tells them apart, found by comparing
    them: `XeFMHAFwdSplitKVKernel<half_t, C<4>, C<1>, C<8>, C<64>, 4, …>`, `lambda #1 in
    ParallelForSYCLImpl_<lambda #3/#2 in CopySYCL(…)>(…)`.  Two kernels that still read alike
    are said more fully, up to their whole demangled names; only one name spelled twice (the
    same symbol, or a name no demangler reads) is told apart by its hash."""
    out: dict[str, str] = {}
    families: dict[str, list[str]] = {}
    for symbol in dict.fromkeys(symbols):
        families.setdefault(_plain(template_head(readable(symbol))), []).append(symbol)
    for members in families.values():
        if len(members) == 1:
            out[members[0]] = _compact_text(readable(members[0]), 2)
            continue
        for symbol, label in zip(members, _family_labels([readable(m) for m in members])):
            out[symbol] = label
    for level in range(4):
        clashing = [s for same in _alike(out).values() if len(same) > 1 for s in same]
        if not clashing:
            break
        for symbol in clashing:
            out[symbol] = _fuller(symbol, level)
    for label, same in _alike(out).items():
        if len(same) > 1:
            for symbol in same:
                out[symbol] = f"{label} [#{hashlib.sha1(symbol.encode()).hexdigest()[:6]}]"
    return out


def _alike(shown: dict[str, str]) -> dict[str, list[str]]:
    by_label: dict[str, list[str]] = {}
    for symbol, label in shown.items():
        by_label.setdefault(label, []).append(symbol)
    return by_label
