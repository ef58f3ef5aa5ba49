"""The build cache's second level: a store many machines share (a CI fleet, a Dask cluster).

`ZEINSPECT_CACHE_URL`, `--cache-url` or `cache_url:` in the gate configuration names it:
  - a folder (an NFS or any shared mount): a path, or file:///path;
  - an S3-compatible object store: s3://bucket/prefix, its endpoint and credentials taken
    from the usual places (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ~/.aws/config, ...), never
    from zeinspect's own files.
S3 is reached through obstore (the Rust object_store crate of Apache Arrow: requests signed,
retried and run concurrently there; the `zeinspect[remote]` extra).  It was chosen over
s3fs, which the first version used, for its start-up: obstore imports in 6 ms here, s3fs
(aiobotocore, aiohttp) in 0.41 s and botocore's S3 client in 0.44 s more, which alone was
over the half-second a new machine's warm audit of a small module may take (bench/).  When
the environment names no key, boto3's own credential chain (profiles in ~/.aws/config and
~/.aws/credentials, SSO, assumed roles) answers for obstore; obstore's own chain covers
instance, container and web-identity credentials.  A folder is read and written as files.

Entries are the local cache's own files, under the same names (`v<format>/<key[:2]>/<key>.entry`),
each carrying its SHA-256, so a damaged or foreign object is detected, ignored, counted and
rebuilt; bundles are `v<format>/bundles/<name[:2]>/<name>.bundle`.  Keys hold the compiler
identity: two compiler versions never share an entry.

A library is thousands of small entries, and a request costs about as much as sending a
few entries: reads are asked for together (`fetch`, concurrent requests), first as bundles
(one object holding a module's entries for every target of the run, named by the keys it
holds, so a bundle is never rewritten: another compiler, option or target set is another
name; zeinspect.cache), then entry by entry for what no bundle held; writes are buffered and
sent together (`flush`).  Entries are always written one object each too, so a run on other
targets still finds them.  The first error (the store gone, refusing, answering garbage)
turns the store off for the rest of the run with one incident line; the audit goes on with
local compiles.  Messages never carry credentials.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

WRITE_BATCH = 64
"""Entries buffered before they are sent to the store together."""
CONCURRENCY = 32
"""Requests in flight at once (obstore's client runs them; the threads only wait)."""
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
    _backend: Any = None
    _root: str = ""
    _folder: bool = False
    _pending: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # The URL and the libraries it needs are checked now (a bad --cache-url is a usage
        # error before any compile); the store itself is opened at its first use, so a run the
        # local cache answers never starts a client.
        self._root, self._folder = _check(self.url)

    @property
    def backend(self) -> Any:
        if self._backend is None:
            self._backend = _Folder(Path(self._root)) if self._folder else _S3(self._root)
        return self._backend

    @property
    def working(self) -> bool:
        return self.incident is None

    def _fail(self, exc: BaseException, doing: str) -> None:
        with self._lock:
            self.stats.errors += 1
            if self.incident is None:
                self.incident = redact(f"shared build cache {self.url}: {doing} failed ({_reason(exc)}); "
                                       "going on without it (kernels it would have answered are compiled here)")
                print(f"zeinspect: warning: {self.incident}", file=sys.stderr)

    def fetch(self, relatives: list[str], counted: bool = True) -> dict[str, bytes]:
        """The objects that exist among `relatives`, read together; missing ones are misses
        (unless not `counted`: bundles, whose entries the cache counts as it adopts them)."""
        if not relatives or not self.working:
            return {}
        try:
            found = self.backend.get_many(relatives)
        except Exception as exc:  # noqa: BLE001 - whatever the store or its library raises
            self._fail(exc, "reading")
            return {}
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
            self._pending[relative] = blob
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
            self.backend.put_many(pending)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc, "writing")
            return
        with self._lock:
            self.stats.writes += len(pending)
            self.stats.bytes += sum(len(b) for b in pending.values())

    def entries(self) -> list[dict]:
        """Every entry and bundle of the store: [{"path" (below the store's root), "size",
        "mtime" (seconds since the epoch)}]."""
        try:
            listed = self.backend.listing()
        except Exception as exc:  # noqa: BLE001 - `cache stats|prune` cannot go on without the listing
            raise self._unreachable(exc, "listing") from None
        return [e for e in listed if str(e["path"]).endswith((".entry", ".bundle"))]

    def remove(self, paths: list[str]) -> None:
        if not paths:
            return
        try:
            self.backend.delete(paths)
        except Exception as exc:  # noqa: BLE001
            raise self._unreachable(exc, "removing entries") from None

    def _unreachable(self, exc: BaseException, doing: str) -> Exception:
        from .errors import ToolchainError

        return ToolchainError(redact(f"shared build cache {self.url}: {doing} failed ({_reason(exc)})"))


class _Folder:
    """A shared folder: whole-or-nothing writes, as the local cache writes (a temporary name, renamed)."""

    def __init__(self, root: Path):
        self.root = root

    def get_many(self, relatives: list[str]) -> dict[str, bytes]:
        found = {}
        for r in relatives:
            try:
                found[r] = (self.root / r).read_bytes()
            except FileNotFoundError:
                continue
        return found

    def put_many(self, blobs: dict[str, bytes]) -> None:
        from .fileio import atomic_write

        for r, blob in blobs.items():
            atomic_write(self.root / r, blob, durable=False)

    def listing(self) -> list[dict]:
        out = []
        for path in self.root.rglob("*"):
            try:
                info = path.stat()
            except OSError:  # removed meanwhile by another machine's prune
                continue
            if path.is_file():
                out.append({"path": path.relative_to(self.root).as_posix(), "size": info.st_size,
                            "mtime": info.st_mtime})
        return out

    def delete(self, relatives: list[str]) -> None:
        for r in relatives:
            (self.root / r).unlink(missing_ok=True)


class _S3:
    """s3://bucket/prefix through obstore; requests in flight together on a few threads (obstore
    releases the interpreter while its Rust client waits)."""

    def __init__(self, root: str):
        import obstore.store

        bucket, _, prefix = root.partition("/")
        # A store in trouble must cost seconds, not the library's default of ten retries over up
        # to three minutes per request: the AWS SDKs' standard three attempts (AWS_MAX_ATTEMPTS
        # as they read it), short back-offs, and bounded connects and requests.
        attempts = os.environ.get("AWS_MAX_ATTEMPTS", "")
        retries = max(0, int(attempts) - 1) if attempts.isdigit() else 2
        retry: Any = {"max_retries": retries, "retry_timeout": timedelta(seconds=20),
                      "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=2)}}
        options: Any = {"connect_timeout": timedelta(seconds=5), "timeout": timedelta(seconds=120)}
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
        if endpoint.startswith("http://"):
            options["allow_http"] = True  # a plain-HTTP endpoint the user named (a server on their network)
        kwargs: dict[str, Any] = {}
        provider = _profile_credentials()
        if provider is not None:
            kwargs["credential_provider"] = provider
        self.store = obstore.store.S3Store(bucket, prefix=prefix or None, client_options=options, retry_config=retry,
                                           **kwargs)

    def get_many(self, relatives: list[str]) -> dict[str, bytes]:
        import obstore
        from obstore.exceptions import NotFoundError

        def one(r: str) -> tuple[str, bytes | None]:
            try:
                return r, bytes(obstore.get(self.store, r).bytes())
            except (FileNotFoundError, NotFoundError):  # obstore raises the former for a missing object
                return r, None

        if len(relatives) == 1:
            got = [one(relatives[0])]
        else:
            with ThreadPoolExecutor(min(CONCURRENCY, len(relatives))) as pool:
                got = list(pool.map(one, relatives))
        return {r: blob for r, blob in got if blob is not None}

    def put_many(self, blobs: dict[str, bytes]) -> None:
        import obstore

        def one(item: tuple[str, bytes]) -> None:
            obstore.put(self.store, item[0], item[1])  # each object put whole; of concurrent puts the last wins

        with ThreadPoolExecutor(min(CONCURRENCY, len(blobs))) as pool:
            list(pool.map(one, blobs.items()))

    def listing(self) -> list[dict]:
        import obstore

        out = []
        for chunk in obstore.list(self.store, chunk_size=1000):
            for meta in chunk:
                modified = meta.get("last_modified")
                out.append({"path": str(meta["path"]), "size": int(meta.get("size") or 0),
                            "mtime": float(modified.timestamp()) if modified is not None else 0.0})
        return out

    def delete(self, relatives: list[str]) -> None:
        import obstore

        for start in range(0, len(relatives), 1000):
            obstore.delete(self.store, relatives[start:start + 1000])


def _reason(exc: BaseException) -> str:
    """An exception as one short line (a store library's messages run over many)."""
    return " ".join(f"{exc.__class__.__name__}: {exc}".split())[:300]


def _profile_credentials() -> Any:
    """boto3's credential chain (profiles, SSO, assumed roles) when the environment names no key
    and the user has AWS configuration files; else None: obstore reads the environment and the
    instance, container and web-identity credentials itself."""
    if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        return None
    files = [os.environ.get("AWS_SHARED_CREDENTIALS_FILE"), os.environ.get("AWS_CONFIG_FILE"),
             os.path.expanduser("~/.aws/credentials"), os.path.expanduser("~/.aws/config")]
    if not (os.environ.get("AWS_PROFILE") or any(f and os.path.isfile(f) for f in files)):
        return None
    try:
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        return None
    return Boto3CredentialProvider()


def _check(url: str) -> tuple[str, bool]:
    """(root path, whether it is a folder) for a store URL, without importing the store's
    libraries; a ToolchainError names a missing one, a UsageError a URL of no known kind."""
    import importlib.util

    from .errors import ToolchainError, UsageError

    if "://" not in url or url.startswith("file://"):
        root = url.removeprefix("file://")
        os.makedirs(root, exist_ok=True)
        return os.path.abspath(root), True
    protocol, _, rest = url.partition("://")
    if protocol != "s3":
        raise UsageError(f"--cache-url {redact(url)}: a folder or s3://bucket/prefix is expected")
    if not rest.strip("/"):
        raise UsageError(f"--cache-url {redact(url)}: no bucket named (s3://bucket/prefix)")
    if importlib.util.find_spec("obstore") is None:
        raise ToolchainError(f"--cache-url {redact(url)}: an S3 store needs obstore (pip install 'zeinspect[remote]')")
    return rest.strip("/"), False
