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
    scheduler: null                  # a Dask scheduler (tcp://HOST:PORT): compile on its cluster;
                                     # --scheduler and $ZEINSPECT_SCHEDULER take precedence
    cache_url: null                  # a build cache many machines share (a folder, s3://bucket/prefix);
                                     # --cache-url and $ZEINSPECT_CACHE_URL take precedence
    strict: false                    # IMPROVED and STALE fail too
    triton:                          # Triton kernels and their launch parameters
      - kernel: ../kernels/triton_dot.py:dot_kernel
        signature: a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32
        constexprs: M=64,N=128,K=128
        num_warps: 4                 # also threads_per_warp, grf_mode
        stage: true                  # the SLM staging pass
        autotune: false              # true: every config of its @triton.autotune, each judged
        targets: [arl-s, mtl-u]      # optional: instead of the gate's
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError, UsageError
from ..inputs.zeinfo import load_yaml_strictly
from ..pairs import parse_pairs

KEYS = {"targets", "ratchet", "inputs", "logs", "options", "modules", "shapes", "compiler", "strict", "triton",
        "scheduler", "cache_url"}
MODULE_KEYS = {"options"}
MAX_CONFIG_BYTES = 16 * 1024 * 1024
TRITON_KEYS = {"kernel", "signature", "constexprs", "num_warps", "threads_per_warp", "grf_mode", "stage", "targets",
               "autotune"}


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
    scheduler: str | None = None
    """A Dask scheduler address: compile on its cluster (probes.dask_executor)."""
    cache_url: str | None = None
    """A build cache many machines share (zeinspect.shared_cache); the command line's wins."""
    strict: bool = False
    triton: tuple[TritonEntry, ...] = ()


def _rel(base: Path, value: str) -> str:
    """A path from the config, relative to the config file, spelled relative to the cwd."""
    joined = Path(value) if os.path.isabs(value) else base / value
    return os.path.normpath(os.path.relpath(joined))


def _strings(value: Any, key: str, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"'{key}' must be a string or a list of strings", path=path)


def load(path: str) -> GateConfig:
    from ..inputs.files import read_file

    return parse(read_file(path, "gate configuration", MAX_CONFIG_BYTES), path)


def parse(text: bytes, path: str) -> GateConfig:
    """A gate configuration from its bytes; paths in it are relative to `path`'s folder."""
    p = Path(path)
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
    for key in ("options", "compiler", "ratchet", "shapes", "scheduler", "cache_url"):
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
        scheduler=doc.get("scheduler"),
        cache_url=doc.get("cache_url"),
        strict=bool(doc.get("strict", False)),
        triton=tuple(_triton_entries(doc.get("triton"), base, path)),
    )


@dataclass(frozen=True)
class TritonKernelSpec:
    """A Triton kernel as the configuration names it (zeinspect.triton makes it a request)."""

    file: str
    kernel: str
    signature: dict
    constexprs: dict
    num_warps: int = 4
    threads_per_warp: int = 32
    grf_mode: str = "default"

    @property
    def label(self) -> str:
        return f"{self.file}:{self.kernel}"


@dataclass(frozen=True)
class TritonEntry:
    """One Triton kernel a gate configuration audits: what to compile, and how to judge it."""

    kernel: TritonKernelSpec
    stage: bool = False
    """Audit it after the SLM staging pass."""
    autotune: bool = False
    """Audit every config of its @triton.autotune (each config's reports are an input of their own)."""
    targets: tuple[str, ...] | None = None
    """Its own targets; None: the configuration's."""


def _pairs(text: str, what: str, where: str, path: str) -> dict:
    try:
        return parse_pairs(text, what)
    except UsageError as exc:
        raise InputError(f"{where}: {str(exc).removeprefix(f'--{what}: ')}", path=path) from None


def _triton_entries(raw: Any, base: Path, path: str) -> list[TritonEntry]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("'triton' must be a list of kernels", path=path)
    out = []
    for i, entry in enumerate(raw):
        where = f"triton entry {i + 1}"
        if not isinstance(entry, dict) or "kernel" not in entry:
            raise InputError(f"{where} needs at least 'kernel: FILE.py:KERNEL'", path=path)
        unknown = sorted(set(map(str, entry)) - TRITON_KEYS)
        if unknown:
            raise InputError(f"{where}: unknown setting {unknown[0]!r}", path=path)
        spec = str(entry["kernel"])
        file, sep, name = spec.rpartition(":")
        if not sep or not file or not name:
            raise InputError(f"{where}: kernel must be FILE.py:KERNEL, not {spec!r}"[:200], path=path)
        for key in ("num_warps", "threads_per_warp"):
            if key in entry and (isinstance(entry[key], bool) or not isinstance(entry[key], int)):
                raise InputError(f"{where}: '{key}' must be a whole number", path=path)
        for key in ("stage", "autotune"):
            if key in entry and not isinstance(entry[key], bool):
                raise InputError(f"{where}: '{key}' must be true or false", path=path)
        targets = entry.get("targets")
        kernel = TritonKernelSpec(file=_rel(base, file), kernel=name,
                              signature=_pairs(str(entry.get("signature", "")), "signature", where, path),
                              constexprs=_pairs(str(entry.get("constexprs", "")), "constexprs", where, path),
                              num_warps=entry.get("num_warps", 4), threads_per_warp=entry.get("threads_per_warp", 32),
                              grf_mode=str(entry.get("grf_mode", "default")))
        out.append(TritonEntry(kernel=kernel, stage=entry.get("stage", False), autotune=entry.get("autotune", False),
                               targets=tuple(_strings(targets, f"{where} targets", path)) if targets is not None
                               else None))
    return out
