"""The files an OpenCL C module may read besides itself, as one digest for its cache keys.

Why: a build-cache key over the module's bytes alone let an edited header pass as the old build
(a kernel whose private array a header sizes stayed "clean" after the header made it 512 KB).

Where the compiler looks, measured with ocloc 26.27 / IGC 2.40 and Debian 12's ocloc 22.43 /
IGC 1.0 (`ocloc compile -file m.cl -options ...`, and strace of a missing include): `"x.h"` in
the folder of the file that includes it, then the `-I DIR` / `-IDIR` folders of the build
options in their order, then the compile's working folder, `/usr/local/include` and
`/usr/include`; `<x.h>` the same without the includer's folder.  Folders of headers further up
the include stack are not searched.  zeinspect compiles the module from a file in a fresh
temporary folder, which is also the working folder: a relative `-I`, and the module's own quoted
includes, find nothing of the user's there unless they climb out of it with `..`.  Both refuse
`-isystem`, `-iquote`, `-idirafter` and `-include` ("Unrecognized build options") and read
neither CPATH nor C_INCLUDE_PATH.

The digest over-approximates, so that it cannot miss:
- the text is read as the preprocessor reads it before directives (a byte-order mark, any line
  ends, lines joined at a backslash, a `#warning` or `#error` line's text raw, any non-ASCII
  byte as space around `#`), four ways: trigraphs taken and not, comments taken out and kept;
  every `#include`, `#import`, `#embed`, `__has_include(...)` and `#pragma GCC dependency` any
  way finds counts, whatever conditions surround it;
- for each name every place the compiler could look is recorded, with the file's SHA-256 where
  one exists and its absence where not, not only the first found, and every header found is read
  the same way (a path is opened as the compiler opens it: `..` after a symbolic link is the
  link's target's parent; a name keeps its escapes, as clang opens it);
- `#include_next` is read as `#include` (it reads a file of a later folder: all are looked at);
- where the scan cannot tell (`#include MACRO` outside comments, `__has_include(MACRO)`, a
  place that is not a regular file or cannot be read, more than MAX_PLACES places), the key
  says so: such a build is never read from or stored in the cache (cache.py).
A header added, removed or edited anywhere on that path changes the key.  Three review rounds
tried to break the scan (tests/unit/inputs/test_includes.py holds each case they found).  Not
covered: a header edited while the compile runs (the key is taken before it), a directive split
by a comment after its `#` that is also behind a `/*` clang reads as text, and a Dask worker
whose headers differ from the client's (docs/guides/scaling-out.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
import tempfile

from ..cache import UNKNOWABLE
from ..fileio import changed_lately, sha256

MAX_PLACES = 65536
"""Places looked at for one module (each name in each folder) before the scan gives up (the
module is then built every time)."""
MAX_HEADER_BYTES = 64 << 20
SYSTEM_DIRS = ("/usr/local/include", "/usr/include")

_WS = rb"(?:[ \t\f\v]|[\x80-\xff])*"
"""Space around a directive's `#`: clang's, and Unicode's (a no-break space is one) as any
non-ASCII byte, which can only add a directive."""
_NAME = rb'(?:"((?:\\[^\n]|[^"\\\n])*)"|<((?:\\[^\n]|[^>\\\n])*)>)'
"""A header name as clang lexes it (an escaped character is skipped, and kept as spelled)."""
_DIRECTIVE = re.compile(rb"^" + _WS + rb"(?:#|%:)" + _WS + rb"(include_next|include|import|embed)\b" + _WS
                        + rb"(?:" + _NAME + rb")?", re.M)
_HAS = re.compile(rb"\b(__has_include_next|__has_include|__has_embed|GCC" + _WS + rb"dependency)\b" + _WS
                  + rb"(?:\(?" + _WS + _NAME + rb")?")
"""`__has_include(...)` asks whether a file is there; `#pragma GCC dependency "x"` fails where it is not."""
_WORDS = re.compile(rb"include|import|embed|dependency")
_NEWLINE = re.compile(rb"\r\n|\n\r|\r")
"""Clang's line ends: a pair either way round is one."""
_SPLICE = re.compile(rb"\\[ \t\f\v]*\n")
_LEXEME = re.compile(rb"(?m:^" + _WS + rb"(?:#|%:)" + _WS + rb"(?:warning|error)\b[^\n]*)"
                     rb'|//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\[^\n]|[^"\\\n])*"?|\'(?:\\[^\n]|[^\'\\\n])*\'?', re.S)
"""What decides where comments are: a `#warning` or `#error` line (read raw by clang: a `/*` in
it opens nothing), a comment, a string or character literal (which ends at its line's end)."""
_TRIGRAPHS = {b"??" + bytes([k]): bytes([v]) for k, v in zip(b"=/'()!<>-", b"#\\^[]|{}~")}
_TRIGRAPH = re.compile(rb"\?\?[=/'()!<>-]")
_memo: dict[tuple[bytes, str], tuple[tuple[tuple[str, tuple | None], ...], str]] = {}


class _Unknowable(Exception):
    pass


def include_dirs(options: str) -> list[str]:
    """The `-I` folders of a build's options, in their order: read with the shell's quoting and
    without it (how the compiler splits a quoted folder is not ours to guess; a folder too many
    only costs a look)."""
    try:
        quoted = shlex.split(options)
    except ValueError:  # an unbalanced quote: ocloc fails on it too
        quoted = []
    dirs: list[str] = []
    for tokens in (quoted, options.split()):
        for n, tok in enumerate(tokens):
            if tok == "-I" and n + 1 < len(tokens):
                dirs.append(tokens[n + 1])
            elif tok.startswith("-I") and len(tok) > 2:
                dirs.append(tok[2:])
    return list(dict.fromkeys(dirs))


def headers_digest(source: bytes, options: str) -> str:
    """"" for a module that may read no other file (its key is its bytes', as before); otherwise
    the SHA-256 of every place it may read (module docstring), or UNKNOWABLE and a nonce.  A scan
    is remembered while every place it looked at keeps its signature (a run asks once per target;
    a long-lived process, the pytest plugin or a worker, must still see a header edited between
    two audits)."""
    if not _WORDS.search(source) and b"\\" not in source and b"??/" not in source:
        return ""  # no directive word, and none a line splice could make
    kept = _memo.get((source, options))
    if kept is not None and all(_signature(place) == sig for place, sig in kept[0]):
        return kept[1]
    try:
        seen = _places(source, options)
    except (_Unknowable, ValueError, OSError):
        return f"{UNKNOWABLE}-{os.urandom(8).hex()}"
    digest = "" if not seen else hashlib.sha256(b"\n".join(
        os.fsencode(place) + b"\t" + (found[0] if found else b"-") for place, found in sorted(seen.items()))).hexdigest()
    if not any(found and changed_lately(found[1][0]) for found in seen.values()):
        if len(_memo) >= 64:
            _memo.pop(next(iter(_memo)))
        _memo[(source, options)] = (tuple((place, found[1] if found else None) for place, found in seen.items()), digest)
    return digest


def _signature(path: str) -> tuple | None:
    try:
        return _signed(os.stat(path))
    except OSError:
        return None


def _signed(st: os.stat_result) -> tuple:
    """What tells a file changed (the change time too: a write that keeps size and time)."""
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev


def keyed_source(digest: str, source: bytes, options: str) -> str:
    """An OpenCL C module's identity in a cache key: its own digest, and its headers' when it has any."""
    headers = headers_digest(source, options)
    return f"{digest}+{headers}" if headers else digest


def _places(source: bytes, options: str) -> dict[str, tuple[bytes, tuple] | None]:
    """Every place a file may be read from: its SHA-256 (hex) and signature (_signature, taken
    before it was read: a later write changes it), or None where there is no file."""
    dirs = [d if os.path.isabs(d) else _outside_temp(d) for d in include_dirs(options)]
    search = [d for d in dirs if d] + list(SYSTEM_DIRS)
    seen: dict[str, tuple[bytes, tuple] | None] = {}
    scanned: set[tuple[str, str | None]] = set()
    pending: list[tuple[bytes, str | None]] = [(source, None)]
    while pending:
        text, here = pending.pop()
        for quoted, name in _includes(text):
            if os.path.isabs(name):
                places = [name]
            else:
                places = [os.path.join(d, name) for d in ([here] if quoted and here else []) + search]
                places += [p for p in [_outside_temp(name)] if p]
            for place in places:
                if place in seen:
                    continue
                if len(seen) >= MAX_PLACES:
                    raise _Unknowable
                found = _read(place)
                if found is None:
                    seen[place] = None
                    continue
                data, sig = found
                seen[place] = (sha256(data).encode(), sig)
                visit = (os.path.realpath(place), os.path.realpath(os.path.dirname(place)))
                if visit not in scanned:
                    scanned.add(visit)
                    pending.append((data, visit[1]))
    return seen


def _includes(text: bytes) -> list[tuple[bool, str]]:
    """(quoted, name) of every file the text may read.  Read four ways, and every way's finds
    count: with trigraphs and without; with comments taken out (a directive after `/* */`) and
    kept (so that no `/*` the scan takes for a comment where clang does not, in a `#warning`
    line's text, a `<...>` name or an odd literal, can hide a directive)."""
    found: list[tuple[bool, str]] = []
    stripped = {_cleaned(text, trigraphs=t, comments=True) for t in (False, True)}
    for variant in stripped | {_cleaned(text, trigraphs=t, comments=False) for t in (False, True)}:
        for m in [*_DIRECTIVE.finditer(variant), *_HAS.finditer(variant)]:
            if m.group(2) is None and m.group(3) is None:
                if variant in stripped:
                    raise _Unknowable  # a name a macro makes
                continue  # with comments kept, prose ("#include's protect themselves", limits.h)
            # `include_next` reads a later folder's file: every folder is looked at anyway.
            found.append((m.group(2) is not None, os.fsdecode(m.group(2) if m.group(2) is not None else m.group(3))))
    return found


def _cleaned(text: bytes, *, trigraphs: bool, comments: bool) -> bytes:
    """The text as the preprocessor sees it when it looks for directives: one kind of line end,
    trigraphs replaced (or only `??=`, which can only add a directive), lines joined at a
    backslash, and with `comments` each comment a space (strings kept)."""
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    text = _NEWLINE.sub(b"\n", text)
    text = _TRIGRAPH.sub(lambda m: _TRIGRAPHS[m.group()], text) if trigraphs else text.replace(b"??=", b"#")
    text = _SPLICE.sub(b"", text)
    if not comments:
        return text
    return _LEXEME.sub(lambda m: b" " if m.group().startswith((b"//", b"/*")) else m.group(), text)


def _outside_temp(rel: str) -> str | None:
    """Where a relative path leads from the compile's fresh temporary folder, when it climbs out
    of it with `..` (nothing of the user's is inside it); None when it stays inside."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    depth = 1
    for n, part in enumerate(parts):
        depth += -1 if part == ".." else 1
        if depth == 0:
            return os.path.join(os.path.realpath(tempfile.gettempdir()), *parts[n + 1:])
    return None


def _read(path: str) -> tuple[bytes, tuple] | None:
    """A file's bytes as the compiler would read them and its signature, or None where there is
    none; a place that exists but is not a regular file of sane size (a FIFO, a device) is
    unknowable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        raise _Unknowable from exc
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return None  # the compiler looks on, as where nothing is
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HEADER_BYTES:
            raise _Unknowable
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_HEADER_BYTES + 1)
        return data, _signed(st)
    finally:
        os.close(fd)
