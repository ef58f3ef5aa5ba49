"""`zeinspect cache stats|prune`: the build cache's two levels, measured and trimmed.

The local level is `$ZEINSPECT_CACHE_DIR` (entries `v<format>/<key[:2]>/<key>.entry`), the
shared level the store `--cache-url` names (zeinspect.shared_cache); both are pruned by the
time each entry was written (reads are not recorded: touching each entry a warm audit reads
would slow the warm path, and object stores do not record reads).  Entries of older cache
formats are never read again: `prune` removes them whatever their age.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..cache import CACHE_FORMAT, BuildCache
from ..errors import UsageError
from ..paths import build_cache_dir
from .outcome import Outcome

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


def parse_size(text: str) -> int:
    """`500M`, `2G`, `1.5GiB`, `4096` -> bytes (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise UsageError(f"--max-size {text!r}: a size such as 500M or 2G is expected")
    return int(float(m[1]) * 1024 ** "bkmgt".index((m[2] or "b").lower()))


@dataclass
class Level:
    name: str
    where: str
    entries: int = 0
    bytes: int = 0
    oldest: float | None = None
    newest: float | None = None
    older_format: int = 0
    """Entries of older cache formats (never read again)."""
    removed: int = 0
    removed_bytes: int = 0
    bundles: int = 0
    """Bundles (several entries of one module in one object: shared stores only); their bytes
    are in `bytes`."""
    bound: int | None = None
    """The local level's bound in bytes (ZEINSPECT_CACHE_MAX_SIZE), kept at each command's end."""

    def to_json(self) -> dict:
        return {"level": self.name, "where": self.where, "entries": self.entries, "bundles": self.bundles,
                "bytes": self.bytes, "bound": self.bound,
                "oldest": self.oldest, "newest": self.newest, "older_format_entries": self.older_format,
                "removed": self.removed, "removed_bytes": self.removed_bytes}


@dataclass
class CacheReport:
    levels: list[Level] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        return Outcome.of(0)


def _local_entries(root: Path) -> list[dict]:
    out = []
    for path in root.glob("v*/*/*.entry"):
        try:
            st = path.stat()
        except OSError:
            continue
        out.append({"path": str(path), "size": st.st_size, "mtime": st.st_mtime,
                    "current": path.parent.parent.name == f"v{CACHE_FORMAT}"})
    return out


def _store_entries(store: object) -> list[dict]:
    found = store.entries()  # type: ignore[attr-defined]
    for e in found:
        e["current"] = f"/v{CACHE_FORMAT}/" in "/" + str(e["path"]).replace(os.sep, "/")
    return found


def _level(name: str, where: str, entries: list[dict]) -> Level:
    current = [e for e in entries if e["current"]]
    times = [e["mtime"] for e in current if e["mtime"]]
    bundles = sum(1 for e in current if str(e["path"]).endswith(".bundle"))
    return Level(name, where, len(current) - bundles, sum(e["size"] for e in current), min(times) if times else None,
                 max(times) if times else None, len(entries) - len(current), bundles=bundles)


def _chosen(entries: list[dict], older_than_days: float | None, max_size: int | None) -> list[dict]:
    """Entries to remove: older formats; those older than the age; then the oldest until the
    rest fits `max_size`."""
    now = time.time()
    doomed = [e for e in entries if not e["current"]]
    kept = sorted((e for e in entries if e["current"]), key=lambda e: e["mtime"])
    if older_than_days is not None:
        limit = now - older_than_days * 86400
        doomed += [e for e in kept if e["mtime"] < limit]
        kept = [e for e in kept if e["mtime"] >= limit]
    if max_size is not None:
        total = sum(e["size"] for e in kept)
        while kept and total > max_size:
            e = kept.pop(0)
            total -= e["size"]
            doomed.append(e)
    return doomed


def _open_store(url: str | None, readonly: bool = False) -> object | None:
    if not url:
        return None
    from ..shared_cache import SharedStore, redact

    store = SharedStore(url, readonly=readonly)
    store.where = redact(url)  # type: ignore[attr-defined]
    return store


def stats(cache_url: str | None) -> CacheReport:
    root = build_cache_dir()
    local = _level("local", str(root), _local_entries(root))
    local.bound = bound()
    report = CacheReport([local])
    store = _open_store(cache_url)
    if store is not None:
        report.levels.append(_level("shared", store.where, _store_entries(store)))  # type: ignore[attr-defined]
    return report


def prune(cache_url: str | None, *, older_than_days: float | None, max_size: str | None,
          readonly: bool = False) -> CacheReport:
    if older_than_days is None and max_size is None:
        raise UsageError("prune needs --older-than DAYS or --max-size SIZE")
    size = parse_size(max_size) if max_size is not None else None
    root = build_cache_dir()
    entries = _local_entries(root)
    level = _level("local", str(root), entries)
    for e in _chosen(entries, older_than_days, size):
        try:
            os.unlink(e["path"])
        except OSError:
            continue
        level.removed += 1
        level.removed_bytes += e["size"]
    report = CacheReport([level])
    store = _open_store(cache_url, readonly)
    if store is not None and not readonly:
        entries = _store_entries(store)
        shared = _level("shared", store.where, entries)  # type: ignore[attr-defined]
        doomed = _chosen(entries, older_than_days, size)
        store.remove([e["path"] for e in doomed])  # type: ignore[attr-defined]
        shared.removed, shared.removed_bytes = len(doomed), sum(e["size"] for e in doomed)
        report.levels.append(shared)
    return report


# -- the bound: the cache stays its size, as ccache's max_size keeps its own -------------------

ARTIFACTS = ("triton-artifacts",)
"""Folders of the build cache that hold files a command writes beside its entries (each Triton
build's TTGIR and SPIR-V): counted in the bound and trimmed like entries."""


def bound() -> int | None:
    """The build cache's bound in bytes ($ZEINSPECT_CACHE_MAX_SIZE), None for none."""
    from .. import envvars

    size = parse_size(envvars.value("ZEINSPECT_CACHE_MAX_SIZE"))
    return size or None


SIZES = "sizes.json"
"""Beside the cache's folders: the bytes each folder (`v*/xx`, and the artifacts folder) held when
it was last counted, and when.  A command's end counts again only the folders changed since (a
folder's own modification time moves when an entry is written into it or removed): on a warm run
of a 6 GB cache of 100,000 entries, some hundred folder stats instead of 100,000 file stats
(0.7 s at every command's end).  The full list is read only when the cache is over its bound."""


def _folders(root: Path) -> list[os.DirEntry]:
    """The folders whose files the bound counts: each `v*/xx` of entries, and the artifacts'."""
    out: list[os.DirEntry] = []
    with os.scandir(root) as top:
        for v in top:
            if v.name in ARTIFACTS and v.is_dir():
                out.append(v)
            elif v.name.startswith("v") and v.is_dir():
                with os.scandir(v.path) as buckets:
                    out += [b for b in buckets if b.is_dir()]
    return out


def _counted(folder: os.DirEntry) -> int:
    """The bytes of the files the bound counts in one folder (entries, or artifacts)."""
    artifacts = Path(folder.path).name in ARTIFACTS
    total = 0
    with os.scandir(folder.path) as files:
        for f in files:
            if artifacts or f.name.endswith(".entry"):
                try:
                    total += f.stat().st_size
                except OSError:
                    continue
    return total


def cache_size(root: Path) -> int:
    """The bytes the bound counts, recounting only the folders changed since the last count
    (SIZES); the counts are kept for the next command.  Never raises on a folder that changes
    while it is counted: it is counted again next time."""
    import json

    from ..fileio import atomic_write

    stamp = root / SIZES
    try:
        known = json.loads(stamp.read_text())
        counted, then = dict(known["folders"]), int(known["at"])
    except (OSError, ValueError, KeyError, TypeError):
        counted, then = {}, -1
    started = time.time_ns()
    now: dict[str, int] = {}
    for folder in _folders(root):
        name = os.path.relpath(folder.path, root)
        try:
            changed = folder.stat().st_mtime_ns >= then
        except OSError:
            continue
        now[name] = _counted(folder) if changed or name not in counted else int(counted[name])
    kept = json.dumps({"at": started, "folders": now}).encode()
    try:
        atomic_write(stamp, kept, durable=False)
    except OSError:
        pass  # a read-only cache counts in full each time
    return sum(now.values()) + len(kept)


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _bounded_files(root: Path) -> list[dict]:
    out = _local_entries(root)
    for folder in ARTIFACTS:
        for path in (root / folder).glob("*"):
            try:
                st = path.stat()
            except OSError:
                continue
            out.append({"path": str(path), "size": st.st_size, "mtime": st.st_mtime, "current": True})
    return out


def keep_bound(root: Path, since: float, used: set[str], limit: int | None = None) -> Level:
    """Remove entries of older cache formats first, then the entries and artifacts written longest
    ago, until the cache fits its bound: never one written since `since` (this command's) or read
    by it (`used`, keys), so nothing the command's reports rely on goes.  A command running at the
    same time is not seen: what it reads may go, and is compiled again if it is wanted."""
    limit = bound() if limit is None else limit
    files = _bounded_files(root)
    level = _level("local", str(root), files)
    if limit is None:
        return level
    total = sum(f["size"] for f in files) + _size_of(root / SIZES)  # the counts themselves take room too
    protected = {str(root / BuildCache.relative(k)) for k in used}
    candidates = sorted((f for f in files if f["mtime"] < since and f["path"] not in protected),
                        key=lambda f: (f["current"], f["mtime"]))  # older formats first, then the oldest
    for f in candidates:
        if total <= limit:
            break
        try:
            os.unlink(f["path"])
        except OSError:
            continue
        total -= f["size"]
        level.removed += 1
        level.removed_bytes += f["size"]
    return level


_RUN: dict = {}


def bounded_at_exit(cache: BuildCache) -> None:
    """Keep the cache in its bound when this process ends (once, whichever sessions it opened):
    what each of its caches used is kept."""
    # A child that multiprocessing started has it imported (it is how it started); a command's
    # own process that never imported it is no such child (and need not load it to say so).
    multiprocessing = sys.modules.get("multiprocessing")
    if cache.directory is None or (multiprocessing is not None and multiprocessing.parent_process() is not None):
        return  # a worker's end is not the command's: the process that started the command keeps the bound
    if not _RUN:
        import atexit

        _RUN.update(since=time.time(), caches=[], root=cache.directory)

        def at_exit() -> None:
            used = {k for c in _RUN["caches"] for k in c.used}
            try:
                limit = bound()
                if limit is None or cache_size(_RUN["root"]) <= limit:
                    return  # within its bound: no file listed, none removed
                keep_bound(_RUN["root"], _RUN["since"], used, limit)
            except (OSError, UsageError):
                pass  # a bound that cannot be read or kept never fails the command

        atexit.register(at_exit)
    _RUN["caches"].append(cache)
