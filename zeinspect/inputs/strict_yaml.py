"""YAML read strictly: a compiler's `.ze_info`, a gate configuration, a shapes file.

Strictly: no aliases (IGC never writes them, and refusing them defeats "billion laughs"
documents before anything is expanded) and a bound on the events, so the work is bounded
whatever the input.  Safely: only PyYAML's safe constructors, through its C parser (libyaml).

Fast: a cold audit reads one `.ze_info` per kernel and target, and a read of a shipped library's
native images reads little else; PyYAML builds each document node by node in Python.  So the
document is built here from libyaml's events, in one pass that also refuses aliases and counts
events (before, a document with a `*` in it was parsed twice): plain decimal integers and names
become int and str directly, every other scalar is resolved and constructed by PyYAML's own safe
resolver and constructors, and a document with what this builder does not do (a tag on a mapping
or sequence, a merge key, a second document, a repeated anchor, a value its constructor refuses,
a mapping as a key) is loaded by PyYAML whole, which gives its value or PyYAML's own error.  The
result is PyYAML's safe load, value for value (tests/unit/inputs/test_strict_yaml.py compares
them); on oneMKL DFT's `.ze_info` for bmg-g21, 0.22-0.24 ms a document against PyYAML's 0.31-0.36
(bench/zeinfo_read.py).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..errors import FormatError

MAX_YAML_BYTES = 64 * 1024 * 1024
"""A compiler's .ze_info is a few KB to a few MB; anything far beyond is not a compiler's output."""
MAX_YAML_EVENTS = 5_000_000

_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
"""A plain scalar YAML 1.1 (PyYAML) reads as this int, whatever else it could be."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
"""A plain scalar PyYAML reads as a string, unless it is one of _WORDS."""
_WORDS = frozenset(w for base in ("yes", "no", "true", "false", "on", "off", "null")
                   for w in (base, base.capitalize(), base.upper()))
"""The names YAML 1.1 reads as booleans or null."""
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp",
                                                            "binary"))
"""The tags whose safe constructors make a value of one scalar (others: PyYAML's whole load)."""
_NO_KEY = object()
"""An open mapping's state while it awaits a key (else: the key awaiting its value)."""
_CONSTRUCTOR_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError)
"""What PyYAML's safe constructors raise on a value their tag cannot hold (`!!int x`, `!!bool maybe`,
`!!timestamp x`, an unhashable key), beside their own ConstructorError."""


class _Whole(Exception):
    """The document needs PyYAML's own loader (what the event builder does not do, or an error
    PyYAML would report in its own order)."""


def load_yaml_strictly(text: bytes | str, what: str) -> Any:
    """The document in `text` as PyYAML's safe loader reads it; FormatError, naming `what`, for
    YAML that is invalid, too large, uses aliases, or holds a value its tag cannot hold."""
    if len(text) > MAX_YAML_BYTES:
        unit = "bytes" if isinstance(text, bytes) else "characters"
        raise FormatError(f"{what} is {len(text)} {unit}, over the {MAX_YAML_BYTES} {unit[:-1]} limit")
    # Imported here, not at the top: a warm audit answers from the build cache and never
    # parses YAML, and PyYAML is a measurable part of start-up (bench/run.py).
    import yaml

    try:
        try:
            return _built(yaml, text, what)
        except _Whole:
            return yaml.load(text, Loader=_loader(yaml))  # every event was seen: no alias, within the bound
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        raise FormatError(f"{what} is not valid YAML{where}: {problem}") from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{what} is not readable text: {exc}") from None
    except _CONSTRUCTOR_ERRORS as exc:  # a ValueError says which value; the others are PyYAML's own slips
        detail = f" ({str(exc)[:120]})" if isinstance(exc, ValueError) else ""
        raise FormatError(f"{what} is not valid YAML: a value its tag cannot hold{detail}") from None


def _loader(yaml: Any) -> Any:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: fast, and still only the safe constructors


def _built(yaml: Any, text: bytes | str, what: str) -> Any:
    """The document from its events: containers as dicts and lists, scalars by _scalar.  Every
    event is read, even when _Whole is raised at the end, so aliases and the bound are checked in
    any document; what the builder leaves to PyYAML (a tag on a container, a second document, a
    repeated anchor, a value its constructor refuses, an unhashable key) stops the building, not
    the reading, and PyYAML's whole load then gives its value or its own error."""
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[Any] = []
    keys: list[Any] = []  # per open mapping: _NO_KEY, or the key awaiting its value
    anchors: set[str] = set()
    root: Any = None
    whole = False
    documents = 0
    for events, event in enumerate(yaml.parse(text, Loader=_loader(yaml)), 1):
        if events > MAX_YAML_EVENTS:
            raise FormatError(f"{what} has more than {MAX_YAML_EVENTS} YAML events; refused")
        kind = type(event)
        if kind is yaml.AliasEvent:
            raise FormatError(f"{what} uses YAML aliases, which a compiler never writes; refused")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            whole = whole or anchor in anchors  # PyYAML's composer refuses a repeated anchor
            anchors.add(anchor)
        if kind is scalar_event:
            if whole:
                continue
            try:
                value = _scalar(yaml, event)
            except (_Whole, *_CONSTRUCTOR_ERRORS):
                whole = True
                continue
        elif kind is mapping_start or kind is sequence_start:
            whole = whole or (event.tag is not None and event.tag != "!")  # !!set, !!omap, ...: PyYAML's
            stack.append({} if kind is mapping_start else [])
            keys.append(_NO_KEY)
            continue
        elif kind in ends:
            value = stack.pop()
            keys.pop()
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            whole = whole or documents > 1  # PyYAML's single-document load refuses a second
            continue
        else:
            continue
        if whole:
            continue
        if not stack:
            root = value
        elif type(top := stack[-1]) is list:
            top.append(value)
        elif keys[-1] is _NO_KEY:
            try:
                hash(value)
            except TypeError:  # a mapping or sequence as a key: PyYAML's safe loader refuses it
                whole = True
                continue
            keys[-1] = value
        else:
            top[keys[-1]] = value
            keys[-1] = _NO_KEY
    if whole:
        raise _Whole
    return root


def _scalar(yaml: Any, event: Any) -> Any:
    value, tag = event.value, event.tag
    if tag is None:
        if event.style:
            return value  # quoted, literal or folded, no tag: a string
        if _DECIMAL.match(value):
            return int(value)
        if _NAME.match(value) and value not in _WORDS:
            return value
    return _construct(yaml, value, tag, event.style, event.implicit)


def _construct(yaml: Any, value: str, tag: str | None, style: str | None, implicit: tuple[bool, bool]) -> Any:
    """One scalar as PyYAML's safe loader resolves and constructs it: its resolver's tag, then
    that tag's constructor (called as the loader calls it, on a node of its own: thread-safe,
    nothing kept between documents)."""
    resolver, constructor = _pyyaml(yaml)
    if tag is None or tag == "!":  # PyYAML resolves a non-specific tag as it does no tag
        tag = resolver.resolve(yaml.ScalarNode, value, implicit)
    if tag not in _SCALAR_TAGS:
        raise _Whole
    return constructor.yaml_constructors[tag](constructor, yaml.ScalarNode(tag, value, style=style))


@lru_cache(maxsize=1)
def _pyyaml(yaml: Any) -> tuple[Any, Any]:
    return yaml.resolver.Resolver(), yaml.constructor.SafeConstructor()
