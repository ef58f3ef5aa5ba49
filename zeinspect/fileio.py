"""Files written whole or not at all, and content digests: the bottom of every layer.

Used by the cache, the toolchain's remembered answers, the ratchet, extracted images and
every report a command writes, so it depends on nothing in the package.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

# Read once, at import (before any thread): os.umask can only be read by setting it.
_UMASK = os.umask(0)
os.umask(_UMASK)


def _mode_for(path: Path) -> int:
    """The mode the file has, or the one a plain open() would give it (mkstemp's is 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def atomic_write(path: Path | str, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` so that `path` is always the old file or the new one.

    `durable` also forces the bytes to disk before the rename, for files a user keeps (a
    ratchet, an extracted image).  Cache entries skip it: each carries its own SHA-256, so
    one left incomplete by a power cut is detected and rebuilt, and an fsync per compile
    costs more than the compile of a small kernel."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


RACY_NS = 2_000_000_000


def changed_lately(mtime_ns: int) -> bool:
    """As git's racily clean index: a file changed within the last seconds may change again
    without its modification time or size telling, so what was read of it is not remembered."""
    return mtime_ns > time.time_ns() - RACY_NS
