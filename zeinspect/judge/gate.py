"""The gate configuration file (YAML): what the pre-merge audit covers, and its settings.

    targets: default                 # or a list: [default, pvc]
    ratchet: ../scratch_ratchet.txt  # paths are relative to this file
    inputs: [../kernels]             # sources, SPIR-V, zebins, fat binaries, host objects, folders
    logs: []                         # build logs to judge without compiling
    options: ""                      # ocloc -options for every module
    modules:                         # per-module settings
      ../kernels/foo.cl: {options: "-DTILE=8"}
    shapes: shapes.yaml              # recorded shape decisions (zeinspect fix)
    compiler: null                   # a --compiler selector
    environment:                     # the compiler's environment, as CI builds with it
      IGC_ExtraOCLOptions: -ze-opt-large-register-file
    scheduler: null                  # a Dask scheduler (tcp://HOST:PORT): compile on its cluster
    cache_url: null                  # a build cache many machines share (a folder, s3://bucket/prefix)
    strict: false                    # IMPROVED and STALE fail too
    triton: [...]                    # a registered source's entries (zeinspect.triton's kernels)

Every key but `inputs`, `logs` and the sources' is a run setting (zeinspect.settings): the
command line's value wins over this file's, and this file's over the environment's.  A
source's entries (`triton:`) are kept as written and parsed by the package that registered
the source (app.plugins), so nothing here knows their fields.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError
from ..inputs.strict_yaml import load_yaml_strictly
from ..settings import SETTINGS

_PATHS = {"type": ["string", "array"], "items": {"type": "string"}}
STRUCTURE = {"inputs": {**_PATHS, "description": "What to audit: sources, SPIR-V, zebins, fat binaries, host files, "
                                                 "packages and folders (paths relative to this file)."},
             "logs": {**_PATHS, "description": "Build logs to judge without compiling (paths relative to this file)."}}
"""The configuration's keys that are not run settings (what it audits), with their JSON Schemas."""
MODULE_KEYS = {"options"}
PATH_SETTINGS = {"ratchet", "shapes_file", "profile"}
MAX_CONFIG_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class GateConfig:
    path: str
    inputs: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The run settings this file gives, by setting name (paths spelled relative to the cwd)."""
    sources: Mapping[str, Any] = field(default_factory=dict)
    """A registered source's entries as written, by key (app.plugins parses them)."""

    @property
    def folder(self) -> Path:
        """What the file's relative paths are relative to."""
        return Path(self.path).parent


def rel(base: Path, value: str) -> str:
    """A path from the config, relative to the config file, spelled relative to the cwd."""
    joined = Path(value) if os.path.isabs(value) else base / value
    return os.path.normpath(os.path.relpath(joined))


def strings(value: Any, key: str, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"'{key}' must be a string or a list of strings", path=path)


def load(path: str, sources: Collection[str] = ()) -> GateConfig:
    from ..inputs.files import read_file

    return parse(read_file(path, "gate configuration", MAX_CONFIG_BYTES), path, sources)


def parse(text: bytes, path: str, sources: Collection[str] = ()) -> GateConfig:
    """A gate configuration from its bytes; paths in it are relative to `path`'s folder.
    `sources` are the keys registered sources read (their entries are kept as written)."""
    doc = _document(text, path)
    by_key = SETTINGS.gate_keys()
    known = set(STRUCTURE) | set(by_key) | set(sources)
    unknown = sorted(set(map(str, doc)) - known)
    if unknown:
        raise InputError(f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})", path=path)
    base = Path(path).parent
    settings: dict[str, Any] = {}
    for key, setting in by_key.items():
        if doc.get(key) is None:
            continue
        value = _modules(doc[key], base, path) if key == "modules" else doc[key]
        try:
            settings[setting.name] = setting.parse(value)
        except (ValueError, TypeError) as exc:
            raise InputError(f"'{key}' {exc}"[:300], path=path) from None
        if setting.name in PATH_SETTINGS and settings[setting.name]:
            settings[setting.name] = rel(base, settings[setting.name])
    return GateConfig(path=path, settings=settings,
                      inputs=tuple(rel(base, v) for v in strings(doc.get("inputs"), "inputs", path)),
                      logs=tuple(rel(base, v) for v in strings(doc.get("logs"), "logs", path)),
                      sources={k: doc[k] for k in sources if doc.get(k) is not None})


def _document(text: bytes, path: str) -> dict:
    try:
        doc = load_yaml_strictly(text, "gate configuration")
    except FormatError as exc:
        raise InputError(str(exc), path=path) from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise InputError("must be a YAML mapping of settings", path=path)
    return doc


def _modules(raw: Any, base: Path, path: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise InputError("'modules' must map module paths to settings", path=path)
    modules = {}
    for name, settings in raw.items():
        if not isinstance(settings, dict) or set(settings) - MODULE_KEYS:
            raise InputError(f"module {name!r}: settings must be a mapping with 'options'"[:200], path=path)
        options = settings.get("options", "")
        if not isinstance(options, str):
            raise InputError(f"module {name!r}: 'options' must be a string"[:200], path=path)
        modules[rel(base, str(name))] = options
    return modules
