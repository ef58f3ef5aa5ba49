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
import os
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


_batch = os.environ.get("ZEINSPECT_FETCH_BATCH", "")
FETCH_BATCH = max(1, int(_batch)) if _batch.isdigit() else 256
"""Entries asked of a shared store in one request (shared_cache: concurrent multi-object reads).
The environment variable exists for bench/shared_cache.py, which measures one object per
request against the batch to show why reads are batched."""


class BuildCache:
    """get/put of (metadata dict, payload bytes) by key.  `None` directory = no local level.

    With a `store` (zeinspect.shared_cache), reads go local, then to the store (a hit there is
    verified and copied locally); writes go local, then to the store unless it is read-only."""

    def __init__(self, directory: Path | None, store: Any = None):
        self.directory = Path(directory) if directory is not None else None
        self.store = store
        self.hits = 0
        self.misses = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._reported = False
        self._memory: dict[str, tuple[dict, bytes]] = {}
        self._absent: set[str] = set()
        """Keys the shared store was asked for in this run and did not have."""
        """Shared entries prefetched when there is no local level (a Dask worker's)."""

    @property
    def enabled(self) -> bool:
        return self.directory is not None or self.store is not None

    @staticmethod
    def relative(key: str) -> str:
        """An entry's name below a cache root, the same locally and in a shared store."""
        return f"v{CACHE_FORMAT}/{key[:2]}/{key}.entry"

    def prefetch(self, keys: list[str]) -> None:
        """Ask the shared store, together, for the entries the local level lacks, and keep the
        whole ones locally (a library's thousands of entries in a few requests)."""
        if self.store is None or not self.store.working:
            return
        wanted = [k for k in dict.fromkeys(keys) if not self._local_has(k)]
        for start in range(0, len(wanted), FETCH_BATCH):
            chunk = wanted[start:start + FETCH_BATCH]
            found = self.store.fetch([self.relative(k) for k in chunk])
            by_name = {self.relative(k): k for k in chunk}
            for name, blob in found.items():
                self._adopt(by_name[name], blob)
            if self.store.working:
                self._absent.update(k for k in chunk if self.relative(k) not in found)
            if not self.store.working:
                return

    def _local_has(self, key: str) -> bool:
        path = self._path(key)
        return path is not None and path.exists()

    def _adopt(self, key: str, blob: bytes) -> tuple[dict, bytes] | None:
        """A shared entry, verified, kept locally (or in memory when there is no local level)."""
        entry = self._decode(blob)
        if entry is None:
            self.store.damaged()  # damaged or foreign: ignored, counted, rebuilt (and rewritten)
            self._absent.add(key)
            return None
        path = self._path(key)
        if path is not None:
            try:
                atomic_write(path, blob, durable=False)
            except OSError:
                pass
        else:
            self._memory[key] = entry
        return entry

    def flush(self) -> None:
        """Send what waits for the shared store."""
        if self.store is not None:
            self.store.flush()

    def take_incident(self) -> str | None:
        """Why the shared store was turned off, once per run (for the run's notes)."""
        if self.store is None or self.store.incident is None or self._reported:
            return None
        self._reported = True
        return str(self.store.incident)

    def _path(self, key: str) -> Path | None:
        # Read the folder once: another thread may disable the cache (a full disk) at any moment.
        directory = self.directory
        return None if directory is None else directory / self.relative(key)

    def get(self, key: str) -> tuple[dict, bytes] | None:
        entry = self._get_local(key)
        if entry is None and key in self._memory:
            entry = self._memory.pop(key)
            with self._lock:
                self.hits += 1
        if entry is None and self.store is not None and self.store.working and key not in self._absent:
            blob = self.store.fetch([self.relative(key)]).get(self.relative(key))
            entry = self._adopt(key, blob) if blob is not None else None
            if entry is not None:
                with self._lock:
                    self.hits += 1
        return entry

    def _get_local(self, key: str) -> tuple[dict, bytes] | None:
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
        header = json.dumps(meta).encode()
        body = _MAGIC + struct.pack("<I", len(header)) + header + payload
        blob = body + hashlib.sha256(body).digest()
        if self.store is not None:
            self.store.put(self.relative(key), blob)
        path = self._path(key)
        if path is None:
            return
        try:
            atomic_write(path, blob, durable=False)
        except OSError as exc:
            if not _warned.is_set():
                _warned.set()
                print(f"zeinspect: warning: build cache disabled ({self.directory}: {exc.strerror or exc})",
                      file=sys.stderr)
            self.directory = None
