"""The build cache's second level: a store many machines share (a CI fleet, a Dask cluster).

`ZEINSPECT_CACHE_URL`, `--cache-url` or `cache_url:` in the gate configuration names it:
  - a folder (an NFS or any shared mount): a path, or file:///path;
  - an S3-compatible object store: s3://bucket/prefix, its endpoint and credentials taken by
    the AWS SDK from the usual places (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ~/.aws/config,
    ...), never from zeinspect's own files.
The store is reached through fsspec (s3fs for S3: the `zeinspect[remote]` extra); entries are
the local cache's own files, under the same names (`v<format>/<key[:2]>/<key>.entry`), each
carrying its SHA-256, so a damaged or foreign object is detected, ignored, counted and
rebuilt; bundles are `v<format>/bundles/<name[:2]>/<name>.bundle`.  Keys hold the compiler
identity: two compiler versions never share an entry.

A library is thousands of small entries, and a request costs about as much as sending a
few entries (measured in bench/shared_cache.py: moto's server answers about 55 objects a
second through s3fs): reads are asked for together (`fetch`, one concurrent multi-object
read through fsspec's `cat`), first as bundles (one object holding a module's entries for
every target of the run, named by the keys it holds, so a bundle is never rewritten: another
compiler, option or target set is another name; zeinspect.cache), then entry by entry for
what no bundle held; writes are buffered and sent together (`flush`, fsspec's concurrent
`pipe`).  Entries are always written one object each too, so a run on other targets still
finds them.  The first error (the store gone, refusing, answering garbage) turns the
store off for the rest of the run with one incident line; the audit goes on with local
compiles.  Messages never carry credentials.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

WRITE_BATCH = 64
"""Entries buffered before they are sent to the store together."""
_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN")


def redact(text: str) -> str:
    """`text` without any credential the environment holds, nor a URL's user:password."""
    for name in _SECRETS:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return re.sub(r"://[^/@\s]+@", "://***@", text)


@dataclass
class StoreStats:
    hits: int = 0
    misses: int = 0
    errors: int = 0
    """Requests that failed, and objects that were damaged or not an entry."""
    bytes: int = 0
    """Bytes read from and written to the store."""
    writes: int = 0


@dataclass
class SharedStore:
    """A shared store of cache entries, read-through and (unless read-only) written-through."""

    url: str
    readonly: bool = False
    stats: StoreStats = field(default_factory=StoreStats)
    incident: str | None = None
    """Why the store was turned off for this run (one line), or None."""
    _fs: Any = None
    _root: str = ""
    _folder: bool = False
    _pending: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # The URL and the libraries it needs are checked now (a bad --cache-url is a usage
        # error before any compile); the store itself is opened at its first use, so a run the
        # local cache answers never pays for s3fs's import (half a second here: bench/).
        self._root, self._folder = _check(self.url)

    @property
    def fs(self) -> Any:
        if self._fs is None:
            self._fs = _open(self._folder)
        return self._fs

    @property
    def working(self) -> bool:
        return self.incident is None

    def _path(self, relative: str) -> str:
        return f"{self._root.rstrip('/')}/{relative}"

    def _fail(self, exc: BaseException, doing: str) -> None:
        with self._lock:
            self.stats.errors += 1
            if self.incident is None:
                reason = " ".join(f"{exc.__class__.__name__}: {exc}".split())[:300]
                self.incident = redact(f"shared build cache {self.url}: {doing} failed ({reason}); "
                                       "going on without it (kernels it would have answered are compiled here)")
                print(f"zeinspect: warning: {self.incident}", file=sys.stderr)

    def fetch(self, relatives: list[str], counted: bool = True) -> dict[str, bytes]:
        """The objects that exist among `relatives`, read together; missing ones are misses
        (unless not `counted`: bundles, whose entries the cache counts as it adopts them)."""
        if not relatives or not self.working:
            return {}
        paths = {self._path(r): r for r in relatives}
        try:
            got = self.fs.cat(list(paths), on_error="omit")
        except Exception as exc:  # noqa: BLE001 - whatever the store or its library raises
            self._fail(exc, "reading")
            return {}
        found = {paths[p]: data for p, data in (got or {}).items() if p in paths and isinstance(data, bytes)}
        if not found and len(paths) == 1:  # fsspec returns the bytes themselves for one path
            if isinstance(got, bytes):
                found = {relatives[0]: got}
        with self._lock:
            if counted:
                self.stats.hits += len(found)
                self.stats.misses += len(relatives) - len(found)
            self.stats.bytes += sum(len(b) for b in found.values())
        return found

    def count(self, hits: int) -> None:
        with self._lock:
            self.stats.hits += hits

    def damaged(self, counted: bool = True) -> None:
        """An object that was read is not a whole entry: counted, and rebuilt by the caller."""
        with self._lock:
            self.stats.errors += 1
            if counted:
                self.stats.hits -= 1
                self.stats.misses += 1

    def put(self, relative: str, blob: bytes) -> None:
        if self.readonly or not self.working:
            return
        with self._lock:
            self._pending[self._path(relative)] = blob
            full = len(self._pending) >= WRITE_BATCH
        if full:
            self.flush()

    def flush(self) -> None:
        """Send the buffered entries (each written whole: a reader sees all of it or none)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending or self.readonly or not self.working:
            return
        try:
            self._pipe(pending)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc, "writing")
            return
        with self._lock:
            self.stats.writes += len(pending)
            self.stats.bytes += sum(len(b) for b in pending.values())

    def _pipe(self, pending: dict[str, bytes]) -> None:
        if self._folder:
            # A shared folder: whole-or-nothing, as the local cache writes (a temporary name, renamed).
            from pathlib import Path

            from .fileio import atomic_write

            for path, blob in pending.items():
                atomic_write(Path(path), blob, durable=False)
            return
        self.fs.pipe(pending)  # S3: each object is put whole; concurrent puts of one key: the last wins, whole

    def entries(self) -> list[dict]:
        """Every entry of the store: [{"path", "size", "mtime" (seconds since the epoch)}]."""
        found = self.fs.find(self._root, detail=True)
        out = []
        for path, info in found.items():
            if not str(path).endswith((".entry", ".bundle")):
                continue
            out.append({"path": path, "size": int(info.get("size") or 0), "mtime": _mtime(info)})
        return out

    def remove(self, paths: list[str]) -> None:
        if paths:
            self.fs.rm(paths)


def _mtime(info: dict) -> float:
    for key in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return 0.0


def _check(url: str) -> tuple[str, bool]:
    """(root path, whether it is a folder) for a store URL, without importing the store's
    libraries; a ToolchainError names a missing one, a UsageError a URL of no known kind."""
    import importlib.util

    from .errors import ToolchainError, UsageError

    if importlib.util.find_spec("fsspec") is None:
        raise ToolchainError(f"--cache-url {redact(url)}: the shared cache needs fsspec "
                             "(pip install 'zeinspect[remote]')")
    if "://" not in url or url.startswith("file://"):
        root = url.removeprefix("file://")
        os.makedirs(root, exist_ok=True)
        return os.path.abspath(root), True
    protocol, _, rest = url.partition("://")
    if protocol != "s3":
        raise UsageError(f"--cache-url {redact(url)}: a folder or s3://bucket/prefix is expected")
    if importlib.util.find_spec("s3fs") is None:
        raise ToolchainError(f"--cache-url {redact(url)}: an S3 store needs s3fs (pip install 'zeinspect[remote]')")
    return rest.rstrip("/"), False


def _open(folder: bool) -> Any:
    """The fsspec filesystem of a store _check accepted."""
    import fsspec

    if folder:
        return fsspec.filesystem("file")
    return fsspec.filesystem("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3")
                             or os.environ.get("AWS_ENDPOINT_URL") or None)
