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
import zlib
from pathlib import Path
from typing import Any

from . import envvars
from .fileio import atomic_write

CACHE_FORMAT = 7  # bumped when cached figures or keys change shape (4: work-group, threads per EU, code size;
#                  5: the compiler's environment in every compile's key; 6: each kernel's calls;
#                  7: entries compressed, in a folder of their own so that an older zeinspect never reads one)
_MAGIC = b"ZEICACHZ"
"""An entry: its header and payload compressed (zstd).  A compile's zebin, log and SPIR-V shrink
4-5x (entries of a Triton cache's screen, measured: 4.67x at level 3, against 3.42x for zlib at
level 1, in a third of its time), so a cache holds several times the builds in its bound."""
ZSTD_LEVEL = 3
_warned = threading.Event()


UNKNOWABLE = "zeinspect-unknowable"
"""Put in a key's parts (inputs.includes) when the result depends on files nobody could name."""
VOLATILE = "volatile-"
"""The start of such a key: never read from, nor written to, any cache (local or shared)."""


def make_key(**parts: Any) -> str:
    canon = json.dumps({"format": CACHE_FORMAT, **parts}, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canon.encode()).hexdigest()
    return VOLATILE + digest if UNKNOWABLE in canon else digest


def fetch_batch() -> int:
    """Entries asked of a shared store in one request (shared_cache: concurrent multi-object reads).
    $ZEINSPECT_FETCH_BATCH exists for bench/shared_cache.py, which measures one object per
    request against the batch to show why reads are batched."""
    return max(1, envvars.value("ZEINSPECT_FETCH_BATCH"))


_BUNDLE_MAGIC = b"ZEIBUNDL"


def pack_bundle(blobs: dict[str, bytes]) -> bytes:
    """Several whole entries in one object (each keeps its own SHA-256; the bundle has one too)."""
    parts = [_BUNDLE_MAGIC, struct.pack("<I", len(blobs))]
    for key in sorted(blobs):
        raw = key.encode()
        parts += [struct.pack("<HI", len(raw), len(blobs[key])), raw, blobs[key]]
    body = b"".join(parts)
    return body + hashlib.sha256(body).digest()


def unpack_bundle(blob: bytes) -> dict[str, bytes] | None:
    """key -> entry bytes, or None for a bundle that is damaged or not one."""
    if len(blob) < 12 + 32 or blob[:8] != _BUNDLE_MAGIC:
        return None
    body, digest = blob[:-32], blob[-32:]
    if hashlib.sha256(body).digest() != digest:
        return None
    (count,) = struct.unpack_from("<I", body, 8)
    out, at = {}, 12
    for _ in range(count):
        if at + 6 > len(body):
            return None
        key_len, size = struct.unpack_from("<HI", body, at)
        at += 6
        if at + key_len + size > len(body):
            return None
        out[body[at:at + key_len].decode("ascii", "replace")] = body[at + key_len:at + key_len + size]
        at += key_len + size
    return out if at == len(body) else None


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
        self._open_bundles: dict[str, tuple[list[str], set[str]]] = {}
        """Bundles the store lacked, by name: (all their keys, those this run has yet to hold)."""
        self._bundle_of: dict[str, list[str]] = {}
        """key -> names of the open bundles it belongs to."""
        self.used: set[str] = set()
        """Keys this run read or wrote: never trimmed by the bound at its end (app.cache.keep_bound)."""

    @property
    def enabled(self) -> bool:
        return self.directory is not None or self.store is not None

    @staticmethod
    def relative(key: str) -> str:
        """An entry's name below a cache root, the same locally and in a shared store."""
        return f"v{CACHE_FORMAT}/{key[:2]}/{key}.entry"

    @staticmethod
    def bundle_relative(keys: list[str]) -> str:
        """A bundle's name below the store's root: named by the keys it holds, so a change of any
        of them (another compiler, option or target set) is another bundle, never a rewrite."""
        name = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()
        return f"v{CACHE_FORMAT}/bundles/{name[:2]}/{name}.bundle"

    def prefetch(self, keys: list[str], groups: list[list[str]] | None = None) -> None:
        """Ask the shared store, together, for the entries the local level lacks, and keep the
        whole ones locally (a library's thousands of entries in a few requests).

        `groups` are keys that belong together (one module on every target of the run): each
        group is first asked for as one bundle, since a store answers a request in about the
        time it takes to send a few entries (bench/shared_cache.py); what no bundle held is
        asked for entry by entry.  A bundle the store lacks is written once this run holds all
        of its entries (when there is a local level to read them back from)."""
        if self.store is None or not self.store.working:
            return
        wanted = [k for k in dict.fromkeys(keys) if not k.startswith(VOLATILE) and not self._local_has(k)]
        if groups:
            wanted = self._prefetch_bundles(wanted, groups)
        batch = fetch_batch()
        for start in range(0, len(wanted), batch):
            chunk = wanted[start:start + batch]
            found = self.store.fetch([self.relative(k) for k in chunk])
            by_name = {self.relative(k): k for k in chunk}
            for name, blob in found.items():
                self._adopt(by_name[name], blob)
            if self.store.working:
                self._absent.update(k for k in chunk if self.relative(k) not in found)
            if not self.store.working:
                return

    def _prefetch_bundles(self, wanted: list[str], groups: list[list[str]]) -> list[str]:
        """The wanted keys that no bundle answered."""
        assert self.store is not None
        missing = set(wanted)
        names: dict[str, list[str]] = {}
        for group in groups:
            group = sorted(set(group))
            if len(group) > 1 and any(k in missing for k in group):
                names[self.bundle_relative(group)] = group
        listed = list(names)
        batch = fetch_batch()
        for start in range(0, len(listed), batch):
            chunk = listed[start:start + batch]
            found = self.store.fetch(chunk, counted=False)
            if not self.store.working:
                return [k for k in wanted if k in missing]
            for name in chunk:
                blob = found.get(name)
                entries = unpack_bundle(blob) if blob is not None else None
                if blob is not None and entries is None:
                    self.store.damaged(counted=False)
                adopted = 0
                for key in names[name]:
                    if entries is not None and key in missing and key in entries and \
                            self._adopt(key, entries[key]) is not None:
                        missing.discard(key)
                        adopted += 1
                self.store.count(hits=adopted)
                if entries is None or any(k not in entries for k in names[name]):
                    self._open(name, names[name])
        return [k for k in wanted if k in missing]

    def _open(self, name: str, keys: list[str]) -> None:
        if self.directory is None or self.store is None or self.store.readonly:
            return
        left = {k for k in keys if not self._local_has(k)}
        with self._lock:
            self._open_bundles[name] = (keys, left)
            for k in left:
                self._bundle_of.setdefault(k, []).append(name)
        if not left:
            self._complete(name)

    def _arrived(self, key: str) -> None:
        """`key` is now held locally: write each bundle it completes."""
        with self._lock:
            done = []
            for name in self._bundle_of.pop(key, []):
                _, left = self._open_bundles[name]
                left.discard(key)
                if not left:
                    done.append(name)
        for name in done:
            self._complete(name)

    def _complete(self, name: str) -> None:
        """Write a bundle whose entries are all held locally (none, if one cannot be read back:
        the local level was turned off, or an entry went)."""
        with self._lock:
            keys, _ = self._open_bundles.pop(name)
        blobs = {}
        for k in keys:
            path = self._path(k)
            if path is None:
                return
            try:
                blobs[k] = path.read_bytes()
            except OSError:
                return
        if self.store is not None:
            self.store.put(name, pack_bundle(blobs))

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
                self._arrived(key)
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
        if key.startswith(VOLATILE):
            with self._lock:
                self.misses += 1
            return None
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

    def get_local(self, key: str) -> tuple[dict, bytes] | None:
        """This machine's entry only: never asks the shared store, and counts no miss (for a
        lookup that is a bonus, not the run's question: probes.dumps)."""
        return self._get_local(key) if not key.startswith(VOLATILE) and self._local_has(key) else None

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
            self.used.add(key)
        return entry

    @staticmethod
    def _decode(blob: bytes) -> tuple[dict, bytes] | None:
        if len(blob) < 12 + 32 or blob[:8] != _MAGIC:
            return None
        body, digest = blob[:-32], blob[-32:]
        if hashlib.sha256(body).digest() != digest:
            return None
        import zstandard

        try:
            body = body[:8] + zstandard.ZstdDecompressor().decompress(body[8:])
        except zstandard.ZstdError:
            return None
        if len(body) < 12:
            return None
        (header_len,) = struct.unpack_from("<I", body, 8)
        if 12 + header_len > len(body):
            return None
        try:
            meta = json.loads(body[12:12 + header_len])
        except ValueError:
            return None
        return (meta, body[12 + header_len:]) if isinstance(meta, dict) else None

    def get_json(self, key: str) -> Any:
        """A `put_json` entry's value, or None when absent (or of another shape)."""
        hit = self.get(key)
        if hit is None:
            return None
        try:
            return json.loads(zlib.decompress(hit[1]))
        except (zlib.error, ValueError):
            return None

    def put_json(self, key: str, value: Any) -> None:
        """A JSON value kept compressed (derived results: costs, dumps), with no metadata."""
        self.put(key, {}, zlib.compress(json.dumps(value).encode(), 1))

    def put(self, key: str, meta: dict, payload: bytes) -> None:
        if key.startswith(VOLATILE):
            return  # an entry no later run could trust (make_key)
        self.used.add(key)
        import zstandard

        header = json.dumps(meta).encode()
        body = _MAGIC + zstandard.compress(struct.pack("<I", len(header)) + header + payload, ZSTD_LEVEL)
        blob = body + hashlib.sha256(body).digest()
        if self.store is not None:
            self.store.put(self.relative(key), blob)
        path = self._path(key)
        if path is None:
            return
        try:
            atomic_write(path, blob, durable=False)
            if self._bundle_of:
                self._arrived(key)
        except OSError as exc:
            if not _warned.is_set():
                _warned.set()
                print(f"zeinspect: warning: build cache disabled ({self.directory}: {exc.strerror or exc})",
                      file=sys.stderr)
            self.directory = None
