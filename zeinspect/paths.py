"""Where zeinspect keeps things: the build cache and fetched toolchains.

Both live under the user cache directory ($XDG_CACHE_HOME or ~/.cache) unless
ZEINSPECT_CACHE_DIR / ZEINSPECT_TOOLCHAIN_DIR say otherwise.  They are separate so that
a test (or a user) can start from an empty build cache without losing the toolchains.
What zeinspect learns about each installed compiler (its identity, targets, option
spellings) is kept with the toolchains, keyed by the binary's path, size and mtime.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import envvars


def user_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zeinspect"


def build_cache_dir() -> Path:
    env = envvars.value("ZEINSPECT_CACHE_DIR")
    return Path(env) if env else user_cache_root() / "builds"


def toolchain_dir() -> Path:
    env = envvars.value("ZEINSPECT_TOOLCHAIN_DIR")
    return Path(env) if env else user_cache_root() / "toolchains"
