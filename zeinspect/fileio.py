"""Files written whole or not at all, and content digests: the bottom of every layer.

Used by the cache, the toolchain's remembered answers, the ratchet, extracted images and
every report a command writes, so it depends on nothing in the package.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to `path` so that `path` is always the old file or the new one.

    `durable` also forces the bytes to disk before the rename, for files a user keeps (a
    ratchet, an extracted image).  Cache entries skip it: each carries its own SHA-256, so
    one left incomplete by a power cut is detected and rebuilt, and an fsync per compile
    costs more than the compile of a small kernel."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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
