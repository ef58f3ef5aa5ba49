"""Find ocloc installations, tell who they are, and what targets they know.

Discovery order: $ZEINSPECT_OCLOC, `ocloc` on PATH, Debian's /usr/bin/ocloc, then the
stacks `zeinspect toolchain fetch` put under the toolchain directory.  The same binary
found twice is listed once.  Identity (ocloc and IGC versions) and the target list are
cached per binary (path, size, mtime) because every command needs them.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import shutil
import tempfile
from pathlib import Path

from .. import envvars
from ..errors import ToolchainError
from ..model import Compiler, driver_build
from ..paths import toolchain_dir
from .run import query_timeout, run_tool

_IDENTITY_CACHE_VERSION = 3
_IGC_VERSION = re.compile(rb"intel-graphics-compiler2?-(\d+\.\d+\.\d+(?:\.\d+)?)")
_IGC_SONAME = re.compile(rb"libigc\.so\.\d+")
_DEVICE_LIST = re.compile(r"<device_type> can be:\s*(?P<list>.*?)(?:\s+or hexadecimal value|\s+- can be single)", re.S)


def _identity_cache_path() -> Path:
    return toolchain_dir() / "compilers.json"


def _load_identity_cache() -> dict:
    try:
        data = json.loads(_identity_cache_path().read_text())
        return data if data.get("version") == _IDENTITY_CACHE_VERSION else {"version": _IDENTITY_CACHE_VERSION}
    except (OSError, ValueError):
        return {"version": _IDENTITY_CACHE_VERSION}


def _store_identity_cache(data: dict) -> None:
    from ..fileio import atomic_write

    try:
        atomic_write(_identity_cache_path(), json.dumps(data, indent=1, sort_keys=True).encode())
    except OSError:
        pass  # a read-only cache only costs speed


def _fingerprint(path: str) -> str:
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}|{st.st_size}|{int(st.st_mtime)}"


def _query_version(path: str, timeout: float) -> str:
    with tempfile.TemporaryDirectory(prefix="zeinspect-q-") as tmp:
        run = run_tool([path, "query", "OCL_DRIVER_VERSION"], cwd=tmp, timeout=timeout)
        if run.timed_out:
            raise ToolchainError(f"{path} did not report its version within {timeout:g} s (--timeout)")
        written = Path(tmp) / "OCL_DRIVER_VERSION"
        text = written.read_text(errors="replace").strip(" \t\r\n\0") if written.exists() else ""
        if not text:
            text = run.output.strip().splitlines()[-1].strip() if run.output.strip() else ""
    if not re.fullmatch(r"\d+(\.\d+)+", text):
        raise ToolchainError(f"{path} did not report its version (is it ocloc?)")
    return text


def _known_targets(path: str, timeout: float) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory(prefix="zeinspect-h-") as tmp:
        run = run_tool([path, "compile", "--help"], cwd=tmp, timeout=timeout)
    m = _DEVICE_LIST.search(run.output)
    if not m:
        return ()
    names = []
    for item in m.group("list").replace("\n", " ").split(","):
        word = item.strip()
        if word and " " not in word and word not in ("version",):
            names.append(word)
    return tuple(names)


def _ids(path: str, names: tuple[str, ...], timeout: float) -> dict[str, list[str]]:
    """`ocloc ids NAME` for every name: the IP versions each acronym or family compiles to."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="zeinspect-i-") as tmp:
        for name in names:
            run = run_tool([path, "ids", name], cwd=tmp, timeout=timeout)
            if run.returncode == 0:
                out[name] = re.findall(r"^\s*(\d+\.\d+\.\d+)\s*$", run.output, re.M)
    return out


def _igc_version(lib_dirs: list[Path]) -> str | None:
    """IGC's version from the build path its Debian build embeds; the soname comes from libocloc."""
    soname = None
    for d in lib_dirs:
        libocloc = d / "libocloc.so"
        if libocloc.exists():
            with libocloc.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                m = _IGC_SONAME.search(mm)
                soname = m.group(0).decode() if m else None
            break
    candidates = []
    for d in lib_dirs:
        if soname and (d / soname).exists():
            candidates.append(d / soname)
        candidates.extend(sorted(d.glob("libigc.so.*"), reverse=True))
    for lib in candidates:
        try:
            with lib.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                m = _IGC_VERSION.search(mm)
                if m:
                    return m.group(1).decode()
        except (OSError, ValueError):
            continue
    return None


def lib_dirs_for(path: str) -> list[Path]:
    """The library folders beside a compiler's launcher (its IGC, its IGA)."""
    prefix = Path(os.path.realpath(path)).parent.parent
    return [d for d in (prefix / "lib" / "x86_64-linux-gnu", prefix / "lib64", prefix / "lib") if d.is_dir()]


def identify(path: str, origin: str, *, manifest: dict | None = None, cache: dict | None = None,
             timeout: float | None = None) -> Compiler:
    """Who this ocloc is.  Raises ToolchainError when it does not run or answer (within
    `query_timeout(timeout)` per question)."""
    timeout = query_timeout(timeout)
    if not os.path.exists(path):
        raise ToolchainError(f"{path} does not exist")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise ToolchainError(f"{path} is not an executable file")
    key = _fingerprint(path)
    own_cache = cache is None
    if cache is None:
        cache = _load_identity_cache()
    entry = cache.get(key)
    if entry is None:
        ocloc_version = _query_version(path, timeout)
        if manifest is not None:
            igc = manifest.get("igc_version")
            lib_dirs = [Path(manifest["root"]) / "usr" / "lib" / "x86_64-linux-gnu"]
        else:
            igc = None
            lib_dirs = lib_dirs_for(path)
        igc = igc or _igc_version(lib_dirs)
        targets = _known_targets(path, timeout)
        entry = {"ocloc_version": ocloc_version, "igc_version": igc, "targets": list(targets),
                 "ids": _ids(path, targets, timeout)}
        cache[key] = entry
        if own_cache:
            _store_identity_cache(cache)
    major = int(entry["ocloc_version"].split(".")[0])
    igc = entry["igc_version"]
    return Compiler(
        id=f"ocloc-{entry['ocloc_version']}/igc-{igc or 'unknown'}",
        path=path,
        ocloc_version=entry["ocloc_version"],
        igc_version=igc,
        targets=tuple(entry["targets"]),
        ip_map=tuple((name, tuple(ips)) for name, ips in sorted(entry["ids"].items())),
        # Zebin became ocloc's default on all platforms in 23.39 (docs/how-it-works.md#zebin).
        zebin_by_default=major >= 24,
        origin=origin,
    )


def fetched_stacks() -> list[tuple[str, dict]]:
    """(launcher path, manifest) for each stack under the toolchain directory."""
    out: list[tuple[str, dict]] = []
    root = toolchain_dir()
    if not root.is_dir():
        return out
    for manifest_path in sorted(root.glob("*/manifest.json")):
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError):
            continue
        launcher = manifest_path.parent / "bin" / "ocloc"
        if launcher.exists():
            out.append((str(launcher), manifest))
    return out


def discover(timeout: float | None = None) -> list[Compiler]:
    """Every usable ocloc, newest first.  Broken candidates are skipped (see `discover_report`)."""
    return [c for c, _ in discover_report(timeout) if c is not None]


def discover_report(timeout: float | None = None) -> list[tuple[Compiler | None, str]]:
    """Each candidate with either its identity or the reason it was skipped."""
    candidates: list[tuple[str, str, dict | None]] = []
    env = envvars.value("ZEINSPECT_OCLOC")
    if env:
        # An explicit choice, like $CC: this compiler and no other.
        manifest = next((m for launcher, m in fetched_stacks() if os.path.realpath(launcher) == os.path.realpath(env)), None)
        candidates.append((env, "ZEINSPECT_OCLOC", manifest))
        return _identified(candidates, timeout)
    on_path = shutil.which("ocloc")
    if on_path:
        candidates.append((on_path, "PATH", None))
    if os.path.exists("/usr/bin/ocloc"):
        candidates.append(("/usr/bin/ocloc", "Debian package", None))
    for launcher, manifest in fetched_stacks():
        candidates.append((launcher, f"fetched ({manifest.get('suite', '?')})", manifest))
    return _identified(candidates, timeout)


def _identified(candidates: list[tuple[str, str, dict | None]], timeout: float | None
                ) -> list[tuple[Compiler | None, str]]:
    cache = _load_identity_cache()
    known = set(cache)  # identify() only adds entries: a new key is a change to store
    seen: set[str] = set()
    out: list[tuple[Compiler | None, str]] = []
    for path, origin, manifest in candidates:
        real = os.path.realpath(path) if manifest is None else path
        if real in seen:
            continue
        seen.add(real)
        try:
            out.append((identify(path, origin, manifest=manifest, cache=cache, timeout=timeout), origin))
        except (ToolchainError, OSError) as exc:
            out.append((None, f"{path} ({origin}): {exc}"))
    if set(cache) != known:
        _store_identity_cache(cache)
    found = sorted((c for c, _ in out if c is not None), key=lambda c: c.version_key, reverse=True)
    ordered: list[tuple[Compiler | None, str]] = [(c, c.origin) for c in found]
    return ordered + [(None, reason) for c, reason in out if c is None]


def resolve(wanted: str | None, timeout: float | None = None) -> list[Compiler]:
    """The usable compilers, narrowed to `--compiler`; ToolchainError naming why when none is."""
    found = discover_report(timeout)
    usable = [c for c, _ in found if c is not None]
    if not usable:
        why = "; ".join(reason for c, reason in found if c is None)
        raise ToolchainError("no usable Intel GPU compiler (ocloc)" + (f" ({why})" if why else "")
                             + "; run `zeinspect toolchain fetch` or install Debian's intel-opencl-icd")
    return select(usable, wanted)


def select(compilers: list[Compiler], wanted: str | None) -> list[Compiler]:
    """Narrow the list to `--compiler` (an id, a path, or a version prefix such as `22.43`)."""
    if not wanted:
        return compilers
    picked = [
        c for c in compilers
        if wanted in (c.id, c.path, os.path.realpath(c.path)) or c.ocloc_version.startswith(wanted)
        or (c.igc_version or "").startswith(wanted) or c.id.startswith(wanted)
    ]
    if not picked:
        known = ", ".join(c.id for c in compilers) or "none"
        raise ToolchainError(f"no compiler matches --compiler {wanted!r} (found: {known})")
    return picked


def built_with_driver(compilers: list[Compiler], driver_version: int | None, ip: str) -> list[Compiler]:
    """The compilers of the same NEO build as a Level Zero driver (by its build number) that
    know `ip`; empty when none is installed."""
    if driver_version is None:
        return []
    build = str(driver_build(driver_version))
    return [c for c in compilers if c.ocloc_version.split(".")[-1].lstrip("0") == build and c.knows(ip)]
