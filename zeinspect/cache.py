"""A content-addressed on-disk cache of compile results, safe under concurrent runs.

Key: SHA-256 over the input's bytes, its kind, the target IP, the options and the
compiler identity (and this format's version).  Each entry is one file written to a
temporary name and renamed into place, so a reader sees a whole entry or none.  The
payload carries its own SHA-256: a truncated or corrupted entry is detected, dropped
and rebuilt.  A cache that cannot be written (read-only, full disk) degrades to no
cache with one warning.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from .fileio import atomic_write

CACHE_FORMAT = 4  # bumped when cached figures change shape (4: work-group, threads per EU, code size)
_MAGIC = b"ZEICACHE"
_warned = threading.Event()


def make_key(**parts: Any) -> str:
    canon = json.dumps({"format": CACHE_FORMAT, **parts}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


class BuildCache:
    """get/put of (metadata dict, payload bytes) by key.  `None` directory = disabled."""

    def __init__(self, directory: Path | None):
        self.directory = Path(directory) if directory is not None else None
        self.hits = 0
        self.misses = 0
        self.dropped = 0
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def _path(self, key: str) -> Path | None:
        # Read the folder once: another thread may disable the cache (a full disk) at any moment.
        directory = self.directory
        return None if directory is None else directory / f"v{CACHE_FORMAT}" / key[:2] / f"{key}.entry"

    def get(self, key: str) -> tuple[dict, bytes] | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            blob = path.read_bytes()
        except OSError:
            with self._lock:
                self.misses += 1
            return None
        entry = self._decode(blob)
        if entry is None:
            # Corrupted or truncated: drop it so the next put rewrites it.
            with self._lock:
                self.dropped += 1
                self.misses += 1
            try:
                path.unlink()
            except OSError:
                pass
            return None
        with self._lock:
            self.hits += 1
        return entry

    @staticmethod
    def _decode(blob: bytes) -> tuple[dict, bytes] | None:
        if len(blob) < 12 + 32 or blob[:8] != _MAGIC:
            return None
        body, digest = blob[:-32], blob[-32:]
        if hashlib.sha256(body).digest() != digest:
            return None
        (header_len,) = struct.unpack_from("<I", body, 8)
        if 12 + header_len > len(body):
            return None
        try:
            meta = json.loads(body[12:12 + header_len])
        except ValueError:
            return None
        return (meta, body[12 + header_len:]) if isinstance(meta, dict) else None

    def put(self, key: str, meta: dict, payload: bytes) -> None:
        path = self._path(key)
        if path is None:
            return
        header = json.dumps(meta).encode()
        body = _MAGIC + struct.pack("<I", len(header)) + header + payload
        blob = body + hashlib.sha256(body).digest()
        try:
            atomic_write(path, blob, durable=False)
        except OSError as exc:
            if not _warned.is_set():
                _warned.set()
                print(f"zeinspect: warning: build cache disabled ({self.directory}: {exc.strerror or exc})",
                      file=sys.stderr)
            self.directory = None
