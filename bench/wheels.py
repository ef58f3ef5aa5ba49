"""Real libraries from the package index, fetched with pip when needed (never vendored).

One helper for the benchmarks and the integration tests: `library(package, version, name)`
downloads the wheel with pip (the system's pip settings, mirrors included, apply) into
~/.cache/zeinspect/wheels (or $ZEINSPECT_WHEELS) and extracts the one member whose file
name starts with `name`.  A second call reads the kept copy and downloads nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def store() -> Path:
    where = os.environ.get("ZEINSPECT_WHEELS")
    path = Path(where) if where else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "zeinspect" / "wheels"
    path.mkdir(parents=True, exist_ok=True)
    return path


PLATFORMS = ("manylinux_2_35_x86_64", "manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux2014_x86_64",
             "linux_x86_64")
PYTHONS = ("3.11", "3.12", "3.10")
"""With `binary`, the wheel for Linux x86-64 and the first of these Pythons that has one: some
packages publish for one Python only (cp312-abi3, cp310), and their device code is the same."""


def wheel(package: str, version: str | None = None, *, binary: bool = False) -> Path:
    """The wheel of `package` (==version, or the newest), downloaded once; `binary`: a Linux
    x86-64 wheel for another Python where this one has none (PYTHONS)."""
    where = store()
    stem = package.replace("-", "_")
    found = sorted(where.glob(f"{stem}-{version}-*.whl" if version else f"{stem}-*.whl"))
    if not found:
        wanted = f"{package}=={version}" if version else package
        tries = [[]] if not binary else [["--only-binary=:all:", *(f"--platform={p}" for p in PLATFORMS),
                                          f"--python-version={v}"] for v in PYTHONS]
        for extra in tries:
            with tempfile.TemporaryDirectory(dir=where) as tmp:  # no half-downloaded wheel is ever kept
                got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *extra, "-d", tmp,
                                      wanted], check=not binary, capture_output=binary)
                for whl in Path(tmp).glob("*.whl"):
                    whl.replace(where / whl.name)
            if got.returncode == 0:
                break
        found = sorted(where.glob(f"{stem}-{version}-*.whl" if version else f"{stem}-*.whl"))
    if not found:
        raise SystemExit(f"pip brought no wheel for {package} {version or ''}")
    return found[-1]


def forget(whl: Path) -> None:
    """Remove a downloaded wheel (and what was extracted from it): a sweep of large packages
    must not fill the disk."""
    import shutil

    whl.unlink(missing_ok=True)
    shutil.rmtree(whl.parent / whl.stem, ignore_errors=True)


def library(package: str, version: str | None, name: str) -> Path:
    """The member of the wheel whose file name starts with `name` (a shared library), extracted once."""
    whl = wheel(package, version)
    out_dir = store() / whl.stem
    with zipfile.ZipFile(whl) as z:
        members = [n for n in z.namelist() if Path(n).name.startswith(name) and not n.endswith("/")]
        if not members:
            raise SystemExit(f"{whl.name} holds no {name}*")
        member = min(members, key=len)
        out = out_dir / Path(member).name
        if not out.exists():
            out_dir.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(out.suffix + ".part")
            tmp.write_bytes(z.read(member))
            tmp.replace(out)
    return out


def unpacked(package: str, version: str | None, folder: str) -> Path:
    """The wheel's top-level Python package that holds `folder`, extracted once (whole, as pip
    installs it: a module's own package imports resolve in it); the path of `folder`."""
    whl = wheel(package, version)
    out_dir = store() / f"{whl.stem}-pkg"
    target = out_dir / folder
    if not target.is_dir():
        top = folder.split("/")[0]
        with tempfile.TemporaryDirectory(dir=store()) as tmp, zipfile.ZipFile(whl) as z:
            members = [n for n in z.namelist() if n.startswith(top + "/")]
            if not members:
                raise SystemExit(f"{whl.name} holds no {folder}/")
            z.extractall(tmp, members)
            out_dir.mkdir(parents=True, exist_ok=True)
            try:
                Path(tmp, top).replace(out_dir / top)
            except OSError:  # another process (an xdist worker) put it there first: theirs is whole
                if not target.is_dir():
                    raise
    return target


def installed(package: str, version: str, *, only: tuple[str, ...] = ()) -> Path:
    """`package==version` and its dependencies installed by pip into a folder of their own, once
    (for PYTHONPATH: a library a script imports, beside the CPU torch); the folder.  `only`: not
    its declared dependencies but these requirements, each without its own (a library whose
    full set is a GPU serving stack, of which a script of its kernels imports a few modules)."""
    import hashlib

    tail = f"-{hashlib.sha256(repr(only).encode()).hexdigest()[:8]}" if only else ""
    where = store() / f"{package.replace('-', '_')}-{version}-target{tail}"
    if not where.is_dir():
        with tempfile.TemporaryDirectory(dir=store()) as tmp:  # whole or not at all
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--target", tmp,
                            *(["--no-deps"] if only else []), f"{package}=={version}", *only], check=True)
            try:
                Path(tmp).replace(where)
            except OSError:  # another process (an xdist worker) put it there first: theirs is whole
                pass
    return where
