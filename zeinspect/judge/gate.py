"""The gate configuration file (YAML): what the pre-merge audit covers.

    targets: default                 # or a list: [default, pvc]
    ratchet: ../scratch_ratchet.txt  # paths are relative to this file
    inputs: [../kernels]             # sources, SPIR-V, zebins, fat binaries, directories
    logs: []                         # build logs to judge without compiling
    options: ""                      # ocloc -options for every module
    modules:                         # per-module settings
      ../kernels/foo.cl: {options: "-DTILE=8"}
    shapes: shapes.yaml              # recorded shape decisions (zeinspect fix)
    compiler: null                   # a --compiler selector
    strict: false                    # IMPROVED and STALE fail too
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..inputs.zeinfo import load_yaml_strictly
from ..errors import FormatError

KEYS = {"targets", "ratchet", "inputs", "logs", "options", "modules", "shapes", "compiler", "strict", "triton"}
MODULE_KEYS = {"options"}


@dataclass(frozen=True)
class GateConfig:
    path: str
    targets: tuple[str, ...] = ("default",)
    ratchet: str | None = None
    inputs: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    options: str = ""
    modules: dict = field(default_factory=dict)
    shapes: str | None = None
    compiler: str | None = None
    strict: bool = False
    triton: tuple = ()


def _rel(base: Path, value: str) -> str:
    """A path from the config, relative to the config file, spelled relative to the cwd."""
    joined = Path(value) if os.path.isabs(value) else base / value
    return os.path.normpath(os.path.relpath(joined))


def _strings(value, key: str, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"'{key}' must be a string or a list of strings", path=path)


def load(path: str) -> GateConfig:
    p = Path(path)
    try:
        text = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such gate configuration", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or exc}", path=path) from None
    try:
        doc = load_yaml_strictly(text, "gate configuration")
    except FormatError as exc:
        raise InputError(str(exc), path=path) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise InputError("must be a YAML mapping of settings", path=path)
    unknown = sorted(set(map(str, doc)) - KEYS)
    if unknown:
        raise InputError(f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(KEYS))})", path=path)
    base = p.parent
    modules = {}
    raw_modules = doc.get("modules") or {}
    if not isinstance(raw_modules, dict):
        raise InputError("'modules' must map module paths to settings", path=path)
    for name, settings in raw_modules.items():
        if not isinstance(settings, dict) or set(settings) - MODULE_KEYS:
            raise InputError(f"module {name!r}: settings must be a mapping with 'options'"[:200], path=path)
        options = settings.get("options", "")
        if not isinstance(options, str):
            raise InputError(f"module {name!r}: 'options' must be a string"[:200], path=path)
        modules[_rel(base, str(name))] = options
    for key in ("options", "compiler", "ratchet", "shapes"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise InputError(f"'{key}' must be a string", path=path)
    if not isinstance(doc.get("strict", False), bool):
        raise InputError("'strict' must be true or false", path=path)
    return GateConfig(
        path=path,
        targets=_strings(doc.get("targets"), "targets", path) or ("default",),
        ratchet=_rel(base, doc["ratchet"]) if doc.get("ratchet") else None,
        inputs=tuple(_rel(base, v) for v in _strings(doc.get("inputs"), "inputs", path)),
        logs=tuple(_rel(base, v) for v in _strings(doc.get("logs"), "logs", path)),
        options=doc.get("options") or "",
        modules=modules,
        shapes=_rel(base, doc["shapes"]) if doc.get("shapes") else None,
        compiler=doc.get("compiler"),
        strict=bool(doc.get("strict", False)),
        triton=tuple(doc.get("triton") or ()),
    )
