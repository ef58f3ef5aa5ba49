"""A Triton module loaded once per target and version of its file, and how its own host code
launches its kernels there (found in a child, kept in the build cache with the module's bytes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from ...errors import InputError
from ...fileio import atomic_write
from ...paths import build_cache_dir
from ..load import loader
from ..load.memo import Memo, file_key
from ..model.launch import Launch
from ..offline.compiler import gpu_target
from ..offline.device import device_properties
from .context import offline

MEMO_SIZE = 64
"""Modules (per file and target) kept loaded at once; a library's screen loads each once per target."""


_MODULES = Memo(MEMO_SIZE, on_drop=lambda m: loader.forget(m.namespace.get("__name__")))


_OWN = Memo(MEMO_SIZE, on_drop=lambda own: loader.forget(*(m.__name__ for m in own.values())))
"""(package root, target) -> the package's modules loaded so far: shared by the modules of a package."""


def loaded_module(path: str, caps: dict, target_name: str, threads_per_warp: int) -> loader.LoadedModule:
    """The module at `path` as loaded for this target (triton.load.loader), once per target and
    version of the file."""
    key = (*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)
    if key not in _MODULES:
        if not Path(path).is_file():
            raise InputError("no such Triton source file", path=path)
        root = str(loader.package_root(Path(path).resolve())[0])
        own = _OWN.setdefault((root, *key[3:]), {})
        with offline():
            _MODULES[key] = loader.load(path, gpu_target(caps, target_name, threads_per_warp),
                                        device_properties(caps, target_name), own)
    return _MODULES[key]


_LAUNCHES = Memo(1024)


def _launch_spec(caps: dict, target_name: str, threads_per_warp: int) -> dict:
    target = gpu_target(caps, target_name, threads_per_warp)
    return {"name": target_name, "target": dict(target.arch), "threads_per_warp": threads_per_warp,
            "properties": device_properties(caps, target_name)}


def _kept(path: str, spec: dict) -> Path:
    digest = hashlib.sha256(Path(path).read_bytes() + json.dumps([DISCOVER_VERSION, spec],
                                                                 sort_keys=True).encode()).hexdigest()
    return build_cache_dir() / "triton-launches" / f"{digest}.json"


def prime_launches(paths: list[str], caps: dict, target_name: str, threads_per_warp: int) -> None:
    """Find how each module's own host code launches its kernels on this target (triton.load.discover),
    all the modules not yet known in one child, and keep the answers in the build cache with
    the module's bytes."""
    spec = _launch_spec(caps, target_name, threads_per_warp)
    todo = []
    for path in paths:
        key = (*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)
        if key in _LAUNCHES:
            continue
        try:
            _LAUNCHES[key] = {k: Launch(**v) for k, v in json.loads(_kept(path, spec).read_text()).items()}
        except (OSError, ValueError, TypeError):
            todo.append((path, key))
    if not todo:
        return
    from ..load.discover import discover

    found = discover([p for p, _ in todo], [spec], loader.load_timeout())
    for path, key in todo:
        launches = found.get(key[0], {}).get(target_name, {})
        _LAUNCHES[key] = launches
        try:
            atomic_write(_kept(path, spec), json.dumps({k: dataclasses.asdict(v) for k, v in launches.items()}).encode())
        except OSError:
            pass  # a read-only cache only costs the next run a discovery


def launches(path: str, caps: dict, target_name: str, threads_per_warp: int) -> dict[str, Launch]:
    """kernel name -> how the module's own host code launches it on this target."""
    prime_launches([path], caps, target_name, threads_per_warp)
    return _LAUNCHES[(*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)]


DISCOVER_VERSION = 1
