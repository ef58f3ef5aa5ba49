"""A gate configuration's `triton:` entries: Triton kernels and the values they are built with.

    triton:
      - kernel: ../kernels/triton_dot.py:dot_kernel
        signature: a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32
        constexprs: M=64,N=128,K=128
        num_warps: 4                 # also threads_per_warp, grf_mode, any registered Triton lever
        stage: true                  # the SLM staging pass
        autotune: false              # true: every config of its @triton.autotune, each judged
        targets: [arl-s, mtl-u]      # optional: instead of the gate's

The core keeps these entries as written (judge.gate); this module, registered as the gate's
`triton` source (app.plugins), reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError, UsageError
from ...judge.gate import rel, strings
from ...pairs import parse_pairs
from .kernel import TritonKernel
from .levers import added_levers

KEYS = {"kernel", "signature", "constexprs", "num_warps", "threads_per_warp", "grf_mode", "stage", "targets",
        "autotune"}


@dataclass(frozen=True)
class TritonEntry:
    """One Triton kernel a gate configuration audits: what to compile, and how to judge it."""

    kernel: TritonKernel
    """The request, as a command line gives one (its launch options all given: the entry's or Triton's
    defaults)."""
    stage: bool = False
    """Audit it after the SLM staging pass."""
    autotune: bool = False
    """Audit every config of its @triton.autotune (each config's reports are an input of their own)."""
    targets: tuple[str, ...] | None = None
    """Its own targets; None: the configuration's."""

    @property
    def file(self) -> str:
        return self.kernel.file

    @property
    def label(self) -> str:
        return self.kernel.label


def _pairs(text: str, what: str, where: str, path: str) -> dict:
    try:
        return parse_pairs(text, what)
    except UsageError as exc:
        raise InputError(f"{where}: {str(exc).removeprefix(f'--{what}: ')}", path=path) from None


def parse_entries(raw: Any, base: Path, path: str) -> tuple[TritonEntry, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("'triton' must be a list of kernels", path=path)
    return tuple(_entry(entry, f"triton entry {i + 1}", base, path) for i, entry in enumerate(raw))


def _entry(entry: Any, where: str, base: Path, path: str) -> TritonEntry:
    if not isinstance(entry, dict) or "kernel" not in entry:
        raise InputError(f"{where} needs at least 'kernel: FILE.py:KERNEL'", path=path)
    added = {lv.name: lv for lv in added_levers()}
    unknown = sorted(set(map(str, entry)) - KEYS - set(added))
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
    try:
        options = tuple(sorted((name, lever.parse(entry[name])) for name, lever in added.items() if name in entry))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {exc}", path=path) from None
    kernel = TritonKernel(file=rel(base, file), kernel=name,
                              signature=_pairs(str(entry.get("signature", "")), "signature", where, path),
                              constexprs=_pairs(str(entry.get("constexprs", "")), "constexprs", where, path),
                              num_warps=entry.get("num_warps", 4), threads_per_warp=entry.get("threads_per_warp", 32),
                              grf_mode=str(entry.get("grf_mode", "default")), options=options)
    return TritonEntry(kernel=kernel, stage=entry.get("stage", False), autotune=entry.get("autotune", False),
                       targets=strings(targets, f"{where} targets", path) if targets is not None else None)
