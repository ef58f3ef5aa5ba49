"""The headers an OpenCL C module may read besides itself, as one digest for its cache keys.

Why: a build-cache key over the module's bytes alone let an edited header pass as the old build
(a kernel whose private array a header sizes stayed "clean" after the header made it 512 KB).
Measured with ocloc 26.27 / IGC 2.40 and with Debian 12's ocloc 22.43 / IGC 1.0 (`ocloc compile
-file m.cl -options ...`): the front end finds a header that `#include "x.h"` names in the folder
of the file that includes it (the module itself is compiled from a file in a fresh temporary
folder, so nothing of the user's is found there) and in each `-I DIR` / `-IDIR` of the build
options; `<x.h>` in the `-I` folders alone.  Both refuse `-isystem`, `-iquote`, `-idirafter` and
`-include` as build options ("Unrecognized build options") and read neither CPATH nor
C_INCLUDE_PATH.  A relative `-I` is relative to that temporary folder too.

The digest over-approximates, so that it cannot miss: every `#include` line counts, whatever
preprocessor conditions or comments surround it; for each name every place the compiler could
look is recorded (the file's SHA-256 where it exists, its absence where not), not only the first
found; every header found is read the same way.  A header added, removed or edited anywhere on
that path changes the key.  A module whose include the scan cannot resolve (`#include MACRO`, a
place that exists but cannot be read, more than MAX_HEADERS headers) gets a key of its own at
every call: built every time, never answered from an entry that may be stale.  Not seen: an
include directive split over lines by a backslash (a `#` ending in a backslash, `include` on the next line).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]*)"|<([^>\n]*)>|(\S))', re.M)
MAX_HEADERS = 4096
"""Headers read for one module before the scan gives up (the module is then built every time)."""


def include_dirs(options: str) -> list[str]:
    """The absolute `-I` folders of a build's options, in their order: read with the shell's
    quoting and without it (how the compiler splits a quoted folder is not ours to guess; a
    folder too many only costs a look)."""
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
    return [d for d in dict.fromkeys(dirs) if os.path.isabs(d)]


class _Unknowable(Exception):
    pass


def _read(path: str) -> bytes | None:
    """A header's bytes, or None where there is none; a place that exists but cannot be read
    (permissions, a device) is unknowable: the compiler's answer may change without the file."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        raise _Unknowable from exc


def headers_digest(source: bytes, options: str) -> str:
    """"" for a module that includes nothing (its key is its bytes', as before); otherwise the
    SHA-256 of every header it may read (module docstring), or one unique to this call where
    the scan cannot tell.  Not cached across calls: a long-lived process (the pytest plugin, a
    worker) must see a header edited between two audits."""
    if b"include" not in source:
        return ""
    try:
        seen = _headers(source, include_dirs(options))
    except _Unknowable:
        return "unknowable-" + os.urandom(16).hex()
    if not seen:
        return ""  # "include" only in a comment or a name, or an include with nowhere to look
    manifest = "\n".join(f"{place}\t{digest or '-'}" for place, digest in sorted(seen.items()))
    return hashlib.sha256(manifest.encode()).hexdigest()


def _headers(source: bytes, dirs: list[str]) -> dict[str, str | None]:
    """Every place a header may be read from, with its SHA-256 or None where there is none."""
    seen: dict[str, str | None] = {}
    pending: list[tuple[bytes, str | None]] = [(source, None)]
    while pending:
        text, here = pending.pop()
        for m in _INCLUDE.finditer(text):
            if m.group(3) is not None or len(seen) > MAX_HEADERS:
                raise _Unknowable
            quoted = m.group(1) is not None
            name = os.fsdecode(m.group(1) if quoted else m.group(2))
            if os.path.isabs(name):
                places = [name]
            else:
                places = [os.path.join(d, name) for d in ([here] if quoted and here else []) + dirs]
            for place in map(os.path.normpath, places):
                if place in seen:
                    continue
                data = _read(place)
                seen[place] = None if data is None else hashlib.sha256(data).hexdigest()
                if data is not None:
                    pending.append((data, os.path.dirname(place)))
    return seen


def keyed_source(digest: str, source: bytes, options: str) -> str:
    """An OpenCL C module's identity in a cache key: its own digest, and its headers' when it has any."""
    headers = headers_digest(source, options)
    return f"{digest}+{headers}" if headers else digest
