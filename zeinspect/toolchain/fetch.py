"""`zeinspect toolchain fetch`: provision the current Intel compiler stack from Debian unstable.

Debian 12 ships ocloc 22.43 / IGC 1.0, which knows no Meteor Lake, Arrow Lake, Lunar Lake
or Battlemage.  Debian unstable carries the current stack; its binaries need a newer C
library than Debian 12 has, but run unchanged through unstable's own dynamic loader.  So:

1. a private apt configuration (its own sources.list, lists, cache; no dpkg status), so the
   system's apt state is never touched;
2. `apt-get download` of ocloc, the Level Zero driver and loader, the IGC libraries that
   `intel-opencl-icd` pins, and their library closure (libc6 included);
3. `dpkg-deb -x` of each into one folder, and a launcher script `bin/ocloc` that runs
   `ld-linux-x86-64.so.2 --library-path <root>/usr/lib/x86_64-linux-gnu <root>/usr/bin/ocloc-*`.

No version is pinned: whatever unstable carries today is fetched, and its identity is
recorded in `manifest.json` next to it.  The stack lands atomically (staged, then renamed).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import envvars
from ..errors import ToolchainError
from ..paths import toolchain_dir


def suite() -> str:
    """The Debian suite the stack comes from ($ZEINSPECT_DEBIAN_SUITE, sid by default)."""
    return str(envvars.value("ZEINSPECT_DEBIAN_SUITE"))
ROOT_PACKAGES = ("intel-ocloc", "libze-intel-gpu1", "libze1")
ARCH_LIB = "usr/lib/x86_64-linux-gnu"


DEBIAN_SUITES = {"sid", "unstable", "testing", "stable", "oldstable", "forky", "trixie", "bookworm", "bullseye"}
def apt_etc() -> Path:
    """apt's configuration folder, whose sources name the mirror ($ZEINSPECT_APT_ETC)."""
    return Path(envvars.value("ZEINSPECT_APT_ETC"))


def _sources(etc: Path) -> list[tuple[list[str], list[str], list[str]]]:
    """(URIs, suites, components) of every enabled `deb` source, in both formats apt reads:
    one-line `sources.list` / `*.list` and deb822 `*.sources`."""
    out = []
    files = [etc / "sources.list"] + sorted((etc / "sources.list.d").glob("*.list"))
    for path in files:
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            words = re.sub(r"\[[^\]]*\]", " ", line.split("#", 1)[0]).split()
            if len(words) >= 3 and words[0] == "deb":
                out.append(([words[1]], [words[2]], words[3:]))
    for path in sorted((etc / "sources.list.d").glob("*.sources")):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for stanza in re.split(r"\n\s*\n", text):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
                out.append((fields.get("uris", "").split(), fields.get("suites", "").split(),
                            fields.get("components", "").split()))
    return out


def debian_mirror(etc: Path | None = None) -> str:
    """The Debian mirror this system's apt uses (`$ZEINSPECT_DEBIAN_MIRROR` overrides): the
    first `deb` source for a Debian suite with `main`.  No address is written in this code."""
    override = envvars.value("ZEINSPECT_DEBIAN_MIRROR")
    if override:
        return override
    for uris, suites, components in _sources(etc or apt_etc()):
        if "main" in components and any(s in DEBIAN_SUITES or s.split("-")[0] in DEBIAN_SUITES
                                        and not s.endswith("-security") for s in suites):
            for uri in uris:
                if not uri.rstrip("/").endswith("-security"):
                    return uri.rstrip("/")
    raise ToolchainError(f"no Debian mirror among apt's sources in {etc or apt_etc()}; set ZEINSPECT_DEBIAN_MIRROR "
                         "to the address of a Debian archive")


def _apt_options(staging: Path) -> list[str]:
    """A private source list, index and cache; the rest is the system's apt configuration:
    apt.conf and apt.conf.d (Dir::Etc::Parts) are read as for any apt run, so the proxy
    (Acquire::http::Proxy, Acquire::https::Proxy) and other Acquire settings apply."""
    return [
        "-o", f"Dir::Etc::SourceList={staging / 'sources.list'}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={staging / 'lists'}",
        "-o", f"Dir::Cache={staging / 'cache'}",
        "-o", "Dir::State::status=/dev/null",
        "-o", "Debug::NoLocking=1",
        "-o", "APT::Sandbox::User=root" if os.geteuid() == 0 else "APT::Sandbox::User=",
        "-o", "Acquire::Retries=3",
        "-q",
    ]


def _run(argv: list[str], cwd: Path | None = None, what: str = "") -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    except FileNotFoundError:
        raise ToolchainError(f"{argv[0]} is not installed (needed to fetch the toolchain)") from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{what or argv[0]} timed out") from None
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise ToolchainError(f"{what or ' '.join(argv[:2])} failed: {tail}"[:500])
    return proc.stdout


def _show(options: list[str], package: str) -> dict[str, str]:
    text = _run(["apt-cache", *options, "show", "--no-all-versions", package], what=f"apt-cache show {package}")
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith(" "):
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    return fields


def _closure(options: list[str], roots: list[str]) -> list[str]:
    text = _run(["apt-cache", *options, "depends", "--recurse", "--no-recommends", "--no-suggests",
                 "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *roots],
                what="apt-cache depends")
    names = []
    for line in text.splitlines():
        if line and not line.startswith(" ") and not line.startswith("<") and line not in names:
            names.append(line.strip())
    return names


def _prepare(staging: Path, mirror: str) -> list[str]:
    """A fresh private apt configuration in `staging`, its index read; returns apt's options."""
    shutil.rmtree(staging, ignore_errors=True)
    for sub in ("lists/partial", "cache/archives/partial", "debs", "root"):
        (staging / sub).mkdir(parents=True, exist_ok=True)
    (staging / "sources.list").write_text(f"deb {mirror} {suite()} main\n")
    options = _apt_options(staging)
    _run(["apt-get", *options, "update"], what=f"apt-get update ({suite()})")
    return options


def _download_unpack(staging: Path, options: list[str], packages: list[str]) -> dict[str, str]:
    """Download the packages and unpack each into staging/root; returns package -> version."""
    _run(["apt-get", *options, "download", *packages], cwd=staging / "debs", what="apt-get download")
    versions = {}
    for deb in sorted((staging / "debs").glob("*.deb")):
        pkg, ver = deb.name.split("_")[:2]
        versions[pkg] = ver.replace("%3a", ":")
        _run(["dpkg-deb", "-x", str(deb), str(staging / "root")], what=f"dpkg-deb -x {deb.name}")
    for sub in ("debs", "lists", "cache"):
        shutil.rmtree(staging / sub)
    return versions


def fetch(*, force: bool = False, progress: Callable[[str], Any] = print) -> Path:
    """Fetch the stack; returns its folder.  Re-fetching the same ocloc version is a no-op."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise ToolchainError("fetching the toolchain needs apt-get and dpkg-deb (Debian or Ubuntu)")
    root = toolchain_dir()
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".staging-{os.getpid()}"
    try:
        mirror = debian_mirror()
        progress(f"reading the package index of Debian {suite()} ({mirror})")
        options = _prepare(staging, mirror)

        ocloc_fields = _show(options, "intel-ocloc")
        version = ocloc_fields.get("Version", "")
        name = f"{suite()}-ocloc-{version}".replace(":", "_").replace("/", "_")
        final = root / name
        if final.joinpath("manifest.json").exists() and not force:
            progress(f"already present: {final}")
            return final

        icd = _show(options, "intel-opencl-icd")
        igc_packages = sorted(set(re.findall(r"\b(libig(?:c|dfcl)\d+)\b", icd.get("Depends", ""))))
        if not igc_packages:
            raise ToolchainError(f"Debian {suite()}'s intel-opencl-icd names no IGC packages; cannot fetch")
        packages = _closure(options, [*ROOT_PACKAGES, *igc_packages])
        progress(f"downloading {len(packages)} packages: {' '.join(packages)}")
        versions = _download_unpack(staging, options, packages)

        binaries = sorted((staging / "root" / "usr" / "bin").glob("ocloc*"))
        if not binaries:
            raise ToolchainError("the fetched intel-ocloc package holds no ocloc binary")
        igc_version = next((v.split("-")[0] for p, v in versions.items() if re.fullmatch(r"libigc\d+", p)), None)

        # The launcher must name the final location: write it for `final`, then move.
        ocloc_name = binaries[-1].name
        _write_launcher(staging / "bin" / "ocloc", final, ocloc_name)
        manifest = {
            "suite": suite(),
            "mirror": mirror,
            "root": str(final / "root"),
            "ocloc_binary": ocloc_name,
            "ocloc_package_version": version,
            "igc_version": igc_version,
            "packages": versions,
            "fetched": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        old = root / f".old-{os.getpid()}"
        if final.exists():
            final.rename(old)
        staging.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    # Smoke test through the launcher, as every later call will run it.
    from .compilers import identify

    compiler = identify(str(final / "bin" / "ocloc"), f"fetched ({suite()})", manifest=manifest)
    progress(f"installed {compiler.id} in {final}")
    return final


def _write_launcher(path: Path, final: Path, ocloc_name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    libdir = final / "root" / ARCH_LIB
    path.write_text(
        "#!/bin/sh\n"
        f"# zeinspect: Debian {suite()}'s ocloc, run through its own dynamic loader and libraries\n"
        f"exec '{libdir}/ld-linux-x86-64.so.2' --library-path '{libdir}' '{final}/root/usr/bin/{ocloc_name}' \"$@\"\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def main() -> None:  # pragma: no cover - convenience for `python -m zeinspect.toolchain.fetch`
    fetch(force="--force" in sys.argv)


def fetch_packages(name: str, roots: list[str], *, without_dependencies: tuple[str, ...] = (),
                   progress: Callable[[str], Any] = print) -> Path:
    """Any Debian unstable packages (and the library closure of `roots`) unpacked into
    <toolchain dir>/<name>/root, the same way as the compiler stack; re-used when present."""
    final = toolchain_dir() / name
    if (final / "root").is_dir():
        return final
    staging = toolchain_dir() / f".staging-{name}-{os.getpid()}"
    try:
        options = _prepare(staging, debian_mirror())
        packages = _closure(options, list(roots)) + list(without_dependencies)
        progress(f"downloading {len(packages)} packages for {name}")
        _download_unpack(staging, options, packages)
        staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
