"""Read a `.ze_info` section and derive each kernel's figures the way NEO does.

NEO (compute-runtime) is the judge of what a kernel's scratch figures *are*: it is what
`zeKernelGetProperties` and OpenCL's CL_KERNEL_SPILL_MEM_SIZE_INTEL report.  Its rules
(shared/source/device_binary_format/zebin/zeinfo_decoder.cpp, gfx_core_helper_*.inl):

* zeinfo >= 1.39: spill = execution_env.spill_size, scratch private = execution_env.private_size.
  Older: scratch slot 0 is spill, scratch slot 1 is private.
* The VC back end (ESIMD, -vc-codegen) writes neither spill_size nor private_size: its
  scratch is one `{type: scratch, usage: single_space}` buffer holding its spills (checked
  against its build log's "Spill memory used = N bytes" on oneMKL's ESIMD kernels), counted
  as spill so that no kernel that uses scratch reads 0.
* A `global` `private_space` buffer is per work-item when `is_simt_thread`: times the SIMD size.
* privateMemSize on Xe-HP and later: scratch private if non-zero, else the global private;
  on Xe-LP and earlier: the global private only (scratch private is not reported at all).

We also keep what the compiler reserved in scratch (`scratch_space_bytes`) so that a kernel
whose private memory lives in scratch on Xe-LP, where the driver reports 0, is still seen.
"""

from __future__ import annotations

import sys
from typing import Any

from ..errors import FormatError
from ..model import KernelFigures


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f".ze_info {what} is not an integer: {value!r}"[:200])
    return value


def parse_version(zeinfo: dict) -> tuple[int, int]:
    raw = zeinfo.get("version")
    if raw is None:
        return (1, 0)
    text = str(raw)
    parts = text.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise FormatError(f".ze_info version is not MAJOR.MINOR: {text!r}"[:200])
    return int(parts[0]), int(parts[1])


def derive_kernels(zeinfo: Any, *, xe_hp_or_later: bool | None) -> tuple[tuple[int, int], list[KernelFigures]]:
    """Kernel figures from a parsed .ze_info document.

    `xe_hp_or_later` selects NEO's privateMemSize rule; None (target unknown) uses the
    Xe-HP rule and says so in the kernel's notes.
    """
    if not isinstance(zeinfo, dict):
        raise FormatError(".ze_info is not a YAML mapping")
    version = parse_version(zeinfo)
    kernels = zeinfo.get("kernels")
    if not isinstance(kernels, list):
        raise FormatError(".ze_info has no 'kernels' list")
    return version, [_kernel_figures(kernel, version, xe_hp_or_later) for kernel in kernels]


def _kernel_figures(kernel: Any, version: tuple[int, int], xe_hp_or_later: bool | None) -> KernelFigures:
    if not isinstance(kernel, dict):
        raise FormatError(".ze_info kernel entry is not a mapping")
    name = kernel.get("name")
    if not isinstance(name, str) or not name:
        raise FormatError(".ze_info kernel entry has no name")
    # One string per kernel, however many targets report it (a library has thousands).
    name = sys.intern(name)
    env = kernel.get("execution_env")
    if not isinstance(env, dict):
        raise FormatError(f".ze_info kernel {name!r} has no execution_env"[:200])
    simd = _int(env.get("simd_size", 0), "simd_size")
    if simd not in (1, 8, 16, 32):
        raise FormatError(f".ze_info kernel {name!r} has simd_size {simd}, expected 1, 8, 16 or 32"[:200])
    memory = _per_thread_memory(kernel, env, name, simd, scratch_in_env=version >= (1, 39))
    private, driver_private, notes = _private_bytes(memory, xe_hp_or_later)
    if memory["single_space"] and memory["spill"] == memory["single_space"]:
        notes.append("VC back end: its single_space scratch is counted as spill (.ze_info has no spill_size)")
    attrs = kernel.get("user_attributes") or {}
    required = env.get("required_sub_group_size") or (
        attrs.get("intel_reqd_sub_group_size") if isinstance(attrs, dict) else None
    )
    work_group = env.get("required_work_group_size")
    if not (isinstance(work_group, list) and len(work_group) == 3 and all(isinstance(d, int) for d in work_group)):
        work_group = None
    threads = env.get("eu_thread_count")
    return KernelFigures(
        name=name,
        simd=simd,
        grf=_int(env.get("grf_count", 0), "grf_count") or None,
        spill_bytes=memory["spill"],
        private_bytes=private,
        slm_bytes=_int(env.get("slm_size", 0), "slm_size"),
        scratch_space_bytes=memory["scratch_space"],
        largest_scratch_slot=memory["largest_slot"],
        required_sub_group_size=_int(required, "required sub-group size") if required else None,
        has_stack_calls=bool(env.get("has_stack_calls")),
        driver_private_bytes=driver_private,
        notes=tuple(notes),
        required_work_group_size=tuple(work_group) if work_group else None,
        eu_thread_count=threads if isinstance(threads, int) and threads > 0 else None,
    )


def _per_thread_memory(kernel: dict, env: dict, name: str, simd: int, *, scratch_in_env: bool) -> dict[str, int]:
    """Spill, private-in-scratch and global private bytes, and the scratch slots, as written:
    from execution_env (ze_info 1.39 and later) or from the scratch buffers' slots (before)."""
    memory = dict(spill=0, private_scratch=0, global_private=0, scratch_space=0, largest_slot=0, single_space=0)
    if scratch_in_env:
        memory["spill"] = _int(env.get("spill_size", 0), "spill_size")
        memory["private_scratch"] = _int(env.get("private_size", 0), "private_size")
    buffers = kernel.get("per_thread_memory_buffers") or []
    if not isinstance(buffers, list):
        raise FormatError(f".ze_info kernel {name!r}: per_thread_memory_buffers is not a list"[:200])
    for buf in buffers:
        if not isinstance(buf, dict):
            raise FormatError(f".ze_info kernel {name!r}: a per-thread memory buffer is not a mapping"[:200])
        size = _int(buf.get("size", 0), "buffer size")
        if size < 0:
            raise FormatError(f".ze_info kernel {name!r}: negative buffer size"[:200])
        kind = buf.get("type")
        if kind == "global":
            memory["global_private"] = size * (simd if buf.get("is_simt_thread") else 1)
        elif kind == "scratch":
            slot = _int(buf.get("slot", 0), "slot")
            memory["scratch_space"] += size
            memory["largest_slot"] = max(memory["largest_slot"], size)
            if not scratch_in_env:
                memory["spill" if slot == 0 else "private_scratch"] = size
            elif buf.get("usage") == "single_space":
                memory["single_space"] += size
    if memory["single_space"] and "spill_size" not in env and "private_size" not in env:
        memory["spill"] = memory["single_space"]
    return memory


def _private_bytes(memory: dict[str, int], xe_hp_or_later: bool | None) -> tuple[int, int | None, list[str]]:
    """(private bytes the kernel uses, what the driver reports where that differs, notes), by
    NEO's privateMemSize rule for the target's generation."""
    private_scratch, global_private = memory["private_scratch"], memory["global_private"]
    notes = []
    if xe_hp_or_later is None:
        notes.append("target unknown: private memory derived with the Xe-HP and later rule")
    if xe_hp_or_later is not False:
        return (private_scratch if private_scratch > 0 else global_private), None, notes
    if private_scratch and not global_private:
        notes.append(f"{private_scratch} bytes of private memory live in scratch; the driver reports "
                     "privateMemSize 0 on Xe-LP")
        return global_private + private_scratch, global_private, notes
    return global_private, None, notes
