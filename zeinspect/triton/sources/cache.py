"""`zeinspect triton --from-cache DIR`: every kernel in a Triton cache folder, re-screened for
every target.

A Triton cache (`$TRITON_CACHE_DIR`, by default ~/.triton/cache; Inductor's under its own
folder, `triton/`) holds one folder per compile.  Triton writes in it, per kernel NAME,
`NAME.json` (the metadata: the options it compiled with, its target, its version), the IR of
each stage (`NAME.ttir`, `NAME.ttgir`, ...), the binary, and `__grp__NAME.json` listing them
(triton/compiler/compiler.py, `compile`).  It is written wherever Triton ran: an Intel laptop,
a CUDA machine, a test run.

What a specialization needs, and where it comes from:

- the kernel itself, its signature, its constexprs' values and its specialization attributes
  (divisibility): all in `NAME.ttir`, Triton's IR before any target's lowering (the argument
  types and `tt.divisibility` are attributes of the function, the constexprs are folded);
  built from it by Triton's own pipeline, from its first stage (triton.build.backend, IR_SUFFIX);
- the launch options: `NAME.json`'s `num_warps`, `num_stages`, `threads_per_warp` (a CUDA
  entry has none: its warps are 32 lanes, `target.warp_size`) and Triton-XPU's `grf_mode`;
  and the options that change the lowering and mean the same on every backend,
  `enable_fp_fusion` and `default_dot_input_precision` (as `TritonKernel.options`);
- where it came from: `NAME.ttir`'s first location (`#loc = loc("FILE":LINE:0)`, the
  `@triton.jit` function's line) names the Python file; the folder names the entry.

Options of the other target (CUDA's `maxnreg`, `num_ctas`, `ptx_version`) do not carry over.
The same TTIR with the same options in several entries (one compile per GPU, or per Triton
run) is one specialization, counted.  The cache is only read: Triton's compiles here write
to zeinspect's own cache folder (triton.build.context.offline).

Every folder is read on its own: a metadata file that does not read, or with no TTIR beside
it, is named in a note and skipped; a TTIR this Triton cannot build is a note of the screen.
An entry Triton compiled from an IR file rather than a Python kernel (its files are named
`@NAME`, compiler.py's IRSource; zeinspect's own TTGIR compiles are such) keeps only the
stages after that IR: nothing to re-target, so it is counted in the summary and skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ...errors import InputError, debugging, internal_incident
from ...ledger import Exclusion, Part
from ...model import Remarks
from ..model.kernel import IR_SUFFIX, TritonKernel, entry_kernel
from ..model.specialization import Specialization

GROUP_PREFIX = "__grp__"
_FIRST_LOC = re.compile(r'^#loc\d* = loc\("(?P<file>[^"]+)":(?P<line>\d+):\d+\)', re.MULTILINE)


@dataclass
class CacheRead(Remarks):
    """What a Triton cache folder holds: the source of a library screen (triton.app.library).  Its
    notes: the entries that did not read; its incidents: internal errors, each kept to its entry."""

    KIND: ClassVar[str] = "cache"
    root: str
    specializations: list[Specialization] = field(default_factory=list)
    written_for: set[str] = field(default_factory=set)
    """The targets the entries were compiled for (`dg2-g10`, `cuda 80`)."""
    versions: set[str] = field(default_factory=set)
    """The Triton versions that wrote them."""
    from_ir: int = 0
    """Entries Triton compiled from an IR file (`@NAME.json`): no TTIR kept, not screened."""
    parts: list[Part] = field(default_factory=list)
    """The entries that are no specialization: unread (cut short, no TTIR) or compiled from IR."""
    DECLARED_BY: ClassVar[str] = "Triton cache entries"

    @property
    def label(self) -> str:
        """The ledger's input: the cache folder."""
        return self.root

    @property
    def entries(self) -> int:
        return sum(s.launches for s in self.specializations)

    def where(self, spec: Specialization) -> str:
        n = spec.launches
        more = f" and {n - 3} more" if n > 3 else ""
        return f"{n} cache {'entry' if n == 1 else 'entries'}: {', '.join(spec.sites[:3])}{more}"

    def to_json(self) -> dict:
        return {"root": self.root, "entries": self.entries,
                "written_for": sorted(self.written_for), "triton_versions": sorted(self.versions),
                "problems": self.notes, "from_ir": self.from_ir,
                "specializations": [{"kernel": s.kernel.kernel, "file": s.origin, "values": s.describe,
                                     "entries": s.sites, "num_warps": s.kernel.num_warps,
                                     "threads_per_warp": s.kernel.threads_per_warp, "grf_mode": s.kernel.grf_mode,
                                     "num_stages": s.kernel.num_stages, "options": dict(s.kernel.options)}
                                    for s in self.specializations]}


def read_cache(root: str) -> CacheRead:
    """Every kernel of a Triton cache folder (each `NAME.json` with its `NAME.ttir`), read
    entry by entry; identical ones (same TTIR, same options) once, counted."""
    top = Path(root)
    if not top.is_dir():
        raise InputError("not a folder (a Triton cache is one: $TRITON_CACHE_DIR, ~/.triton/cache)", path=root)
    out = CacheRead(root=root)
    found: dict[str, Specialization] = {}
    for folder, dirs, files in os.walk(top, onerror=lambda exc: out.notes.append(f"{exc.filename}: unreadable")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".json") and not name.startswith(GROUP_PREFIX):
                try:
                    _read_entry(Path(folder) / name, top, out, found)
                except Exception as exc:  # noqa: BLE001 - one entry's internal error: named, the rest read
                    if debugging():
                        raise
                    out.incidents.append(internal_incident(str((Path(folder) / name).relative_to(top)), exc))
    out.specializations = list(found.values())
    if not out.specializations and not out.notes and not out.incidents:
        only_ir = f" (only {out.from_ir} compiled from IR files, which keep no TTIR)" if out.from_ir else ""
        raise InputError(f"holds no Triton kernels (a NAME.json beside its NAME.ttir){only_ir}", path=root)
    return out


def _read_entry(meta_path: Path, top: Path, out: CacheRead, found: dict[str, Specialization]) -> None:
    where = str(meta_path.relative_to(top))
    try:
        meta = json.loads(meta_path.read_bytes())
    except (OSError, ValueError):
        # A kernel's metadata that does not read is an entry lost: unread, its kernel unknown.
        out.notes.append(f"{where}: not JSON (cut short?): skipped")
        out.parts.append(Part(out.root, str(meta_path), None, "a cache entry's metadata", unread="not JSON (cut short?)"))
        return
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or "num_warps" not in meta:
        # Triton keeps other JSON beside its kernels (the autotuner's results): not a kernel.
        return
    ttir = meta_path.with_suffix(IR_SUFFIX)
    try:
        text = ttir.read_bytes()
    except OSError:
        if meta_path.name.startswith("@"):
            out.from_ir += 1
            out.parts.append(Part(out.root, str(meta_path), (meta["name"],), out.DECLARED_BY,
                                  excluded=Exclusion.FROM_IR))
            return
        out.notes.append(f"{where}: no {ttir.name} beside it (the entry was cut, or written by a Triton "
                            "that does not keep its TTIR): skipped")
        out.parts.append(Part(out.root, str(meta_path), (meta["name"],), out.DECLARED_BY,
                              unread=f"no {ttir.name} beside it (the entry was cut, or written by a Triton that does "
                                     "not keep its TTIR)"))
        return
    kernel = entry_kernel(ttir, meta)
    out.written_for.add(_target(meta.get("target")))
    if meta.get("triton_version"):
        out.versions.add(str(meta["triton_version"]))
    key = hashlib.sha256(text + json.dumps(_key(kernel), sort_keys=True, default=str).encode()).hexdigest()
    spec = found.get(key)
    if spec is None:
        loc = _FIRST_LOC.search(text[:4096].decode(errors="replace"))
        spec = found[key] = Specialization(kernel, origin=loc["file"] if loc else None,
                                           tag=f"entry {meta_path.parent.name[:8]}")
    spec.launches += 1
    spec.sites.append(str(meta_path.parent))


def _key(kernel: TritonKernel) -> list[Any]:
    return [kernel.kernel, kernel.num_warps, kernel.threads_per_warp, kernel.grf_mode, kernel.num_stages,
            list(kernel.options)]


def _target(target: Any) -> str:
    """What an entry was compiled for: Triton-XPU's device name, or the backend and its arch."""
    if not isinstance(target, dict):
        return "?"
    arch = target.get("arch")
    if isinstance(arch, dict) and arch.get("name"):
        return str(arch["name"])
    return f"{target.get('backend', '?')} {arch}"
