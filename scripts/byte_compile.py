#!/usr/bin/env python3
"""Byte-compile what every zeinspect command imports: the package itself and the
distributions it needs at run time (its dependencies without extras, and theirs).

Why: set-up installs with pip's --no-compile (byte-compiling Triton, Dask and MkDocs costs 40 s
of a fresh clone's set-up, for modules nothing here imports), and some environments set
PYTHONDONTWRITEBYTECODE, so Python never writes what it compiles: every command then compiled
click, pyelftools, PyYAML and msgspec from source again, about 0.1 s of each start (measured on
a cold audit of oneMKL DFT, 2.8 s).  This takes under a second.

Usage (scripts/setup.sh runs it): .venv/bin/python scripts/byte_compile.py
"""

from __future__ import annotations

import compileall
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALSO = ("typing-extensions",)
"""Imported when installed though no dependency requires it (msgspec's optional use)."""


def runtime_closure(name: str = "zeinspect") -> list[metadata.Distribution]:
    found: dict[str, metadata.Distribution] = {}
    todo = [name, *ALSO]
    while todo:
        key = todo.pop().lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(key)
        except metadata.PackageNotFoundError:  # one for other Pythons (an environment marker), or absent
            continue
        found[key] = dist
        for req in dist.requires or []:
            if "extra ==" not in req and (m := re.match(r"[A-Za-z0-9_.\-]+", req)):
                todo.append(m.group(0))
    return [d for k, d in found.items() if k != name]


def main() -> int:
    ok = bool(compileall.compile_dir(str(ROOT / "zeinspect"), quiet=2))
    for dist in runtime_closure():
        for f in dist.files or []:
            if f.suffix == ".py":
                ok &= bool(compileall.compile_file(str(f.locate()), quiet=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
