"""Applying the SPIR-V rewrite levers to a module, checked.

A rewrite lever (`How.SPIRV_REWRITE`) changes one entry point of a SPIR-V module; this
applies a list of (kernel, lever, value) rewrites in order to a module's SPIR-V (OpenCL C is
first turned into SPIR-V by the build's own front end: probes.modules), and where `spirv-val`
accepts the original module it must accept the rewritten one too.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import lru_cache
from typing import Any

from ..errors import FormatError, InputError
from ..fileio import sha256
from .base import LeverRegistry

Rewrite = tuple[str, str, Any]
"""(kernel, lever name, value)."""


def spirv_val(data: bytes) -> str | None:
    """None if spirv-val accepts the module (or is not installed); its complaint otherwise."""
    return _spirv_val_cached(sha256(data), data)


@lru_cache(maxsize=256)
def _spirv_val_cached(digest: str, data: bytes) -> str | None:  # noqa: ARG001 - the digest is the cache key
    tool = shutil.which("spirv-val")
    if tool is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".spv") as fh:
        fh.write(data)
        fh.flush()
        proc = subprocess.run([tool, fh.name], capture_output=True, text=True, timeout=120)
    return None if proc.returncode == 0 else (proc.stdout + proc.stderr).strip()


def apply_rewrites(original: bytes, rewrites: tuple[Rewrite, ...], levers: LeverRegistry, path: str
                   ) -> tuple[bytes, tuple[str, ...]]:
    """The SPIR-V module `original` (of the input at `path`) with each rewrite applied, and notes
    saying what changed."""
    data = original
    notes: list[str] = []
    by_lever: dict[str, dict[str, Any]] = {}
    for kernel, name, value in rewrites:
        lever = levers.get(name)
        if lever is None or lever.rewrite is None:
            raise ValueError(f"{name!r} is not a SPIR-V rewrite lever")
        by_lever.setdefault(name, {})[kernel] = value
    for name, values in by_lever.items():
        lever = levers.get(name)
        assert lever is not None and lever.rewrite is not None
        try:
            if lever.rewrite_all is not None and len(values) > 1:  # one pass over the module for them all
                data, said = lever.rewrite_all(data, values)
                notes += said
                continue
            for kernel, value in values.items():
                data, note = lever.rewrite(data, kernel, value)
                notes.append(note)
        except FormatError as exc:
            kernel = next(iter(values))
            raise InputError(f"cannot set the {name.replace('_', '-')} of {kernel}: {exc}", path=path) from None
    if data != original and spirv_val(original) is None:
        complaint = spirv_val(data)
        if complaint is not None:
            raise InputError(f"the rewritten SPIR-V does not validate: {complaint[:300]}", path=path)
    return data, tuple(notes)
