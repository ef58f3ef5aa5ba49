"""Occupancy and launchability: what a kernel's register file, SIMD width and shared local memory
cost on an Xe-core, by the driver's and the compiler's own rules.  Pure functions: importable
without click or a compiler (what an Inductor-style fusion gate needs: registers per thread,
threads per EU, the largest work-group a kernel can launch with).

    from zeinspect import occupancy
    occupancy.limits("12.55.8", grf_count=256, simd=16, slm_bytes=32768, wg_size=512)
    occupancy.of(report)            # a zeinspect KernelReport

The rules, and where each comes from:
  - hardware threads per EU for a GRF count: IGC writes it for every kernel it builds
    (`.ze_info` execution_env `eu_thread_count`), and that figure is used where present.  The
    rule it follows (checked against IGC 2.40's figures on every family, tests/integration):
    Xe-LP 7 whatever the registers (it has one register file); Xe-HPG, Xe-LPG, Xe-HPC and Xe2
    8, or 4 at 256 registers (compute-runtime gfx_core_helper_base.inl,
    calculateAvailableThreadCount: `(grfCount == 256 ? 4 : 8) * EUCount`); Xe3's variable
    register count: <= 96 -> 10, <= 128 -> 8, <= 160 -> 6, <= 192 -> 5, <= 256 -> 4, <= 512 -> 2
    (gfx_core_helper_xe3_and_later.inl);
  - the largest work-group a kernel can launch with: Xe-HPG, Xe-LPG and Xe-HPC halve the
    device maximum when a non-SIMD32 kernel has 256 registers
    (gfx_core_helper_xehp_and_later.inl, calculateMaxWorkGroupSize); Xe2 allows 32 hardware
    threads per work-group, 64 for a SIMD16 kernel without 256 registers
    (xe2_hpg_core/gfx_core_helper_xe2_hpg_core.cpp, calculateNumThreadsPerThreadGroup); Xe3
    64 threads up to 128 registers, 48 at 160, 40 at 192, 32 at 256 or SIMD32, 16 at 512
    (xe3_core); everything at most the device's 1024 work-items (Xe-LP's 512).  The file and
    function names are compute-runtime's at e37c60bf2a (2026-08-22), as docs/how-it-works.md#occupancy
    names them;
  - an Xe-core (a sub-slice before Xe-HPG) has 16 EUs up to Xe-LPG, 8 from Xe-HPC (NEO's
    numEUsPerSubslice on its hardware-free tgllp, dg2, mtl and pvc devices), and 64 KiB of
    shared local memory up to Xe-LPG, 128 KiB from Xe-HPC (hardware.slm_per_work_group);
  - barriers are not a limit here: the per-core barrier count is not in the sources read.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from .hardware import ip_in_family_range, is_ip, parse_ip, slm_per_work_group, wide_core

WORK_ITEMS_MAX = 1024
"""The device's most work-items per work-group from Xe-HPG on (NEO's maxWorkgroupSize)."""
WORK_ITEMS_MAX_XE_LP = 512
"""Xe-LP's (NEO's maxTotalGroupSize on its tgllp device)."""


@functools.lru_cache(maxsize=256)
def family(ip: str) -> str:
    """xe-lp | xe-hpg | xe-lpg | xe-hpc | xe2 | xe3 (the rules differ by these)."""
    if not is_ip(ip):
        raise ValueError(f"not an IP version: {ip!r}")
    major, _, _ = parse_ip(ip)
    if major >= 30:
        return "xe3"
    if major >= 20:
        return "xe2"
    for name in ("xe-lp", "xe-hpg", "xe-hpc"):
        if ip_in_family_range(ip, name):
            return name
    return "xe-lpg"  # 12.70 to 12.74: Xe-LPG and Xe-LPG+


def eus_per_core(ip: str) -> int:
    return 8 if wide_core(ip) else 16


_XE3_THREADS = ((96, 10), (128, 8), (160, 6), (192, 5), (256, 4), (512, 2))


def threads_per_eu(ip: str, grf_count: int) -> int:
    """Hardware threads an EU runs at once for kernels with `grf_count` registers."""
    fam = family(ip)
    if fam == "xe-lp":
        return 7
    if fam == "xe3":
        return next((threads for most, threads in _XE3_THREADS if grf_count <= most), 2)
    return 4 if grf_count >= 256 else 8


def max_threads_per_eu(ip: str) -> int:
    return {"xe-lp": 7, "xe3": 10}.get(family(ip), 8)


def _threads_per_work_group(fam: str, grf_count: int, simd: int) -> int | None:
    if fam == "xe2":
        return 64 if grf_count != 256 and simd == 16 else 32
    if fam == "xe3":
        if simd == 32 or grf_count > 192:
            return 32 if grf_count <= 256 else 16
        return 64 if grf_count <= 128 else 48 if grf_count <= 160 else 40
    return None


def device_max_work_group_size(ip: str) -> int:
    """The device's most work-items per work-group (what SYCL checks reqd_work_group_size against)."""
    return WORK_ITEMS_MAX_XE_LP if family(ip) == "xe-lp" else WORK_ITEMS_MAX


def max_work_group_size(ip: str, grf_count: int, simd: int) -> int:
    """The most work-items a work-group of this kernel can have (see the module docstring)."""
    fam = family(ip)
    if fam == "xe-lp":
        return device_max_work_group_size(ip)
    threads = _threads_per_work_group(fam, grf_count, simd)
    if threads is not None:
        return min(WORK_ITEMS_MAX, threads * simd)
    most = WORK_ITEMS_MAX // 2 if simd != 32 and grf_count == 256 else WORK_ITEMS_MAX
    return min(most, WORK_ITEMS_MAX)


@dataclass(frozen=True)
class Occupancy:
    threads_per_eu: int
    max_threads_per_eu: int
    max_work_group_size: int
    work_group_size: int | None
    """The work-group the figures are for (required, launched, asked); None: the largest."""
    work_groups_per_core: int
    xe_core_occupancy: float
    """The share of an Xe-core's hardware threads busy with such work-groups."""
    limited_by: str
    """grf | slm | work_group_size | threads: what stops one more work-group fitting."""
    next_step: str | None
    """What would gain the next level, as llvm-calc-occupancy says it."""

    @property
    def launchable(self) -> bool:
        return self.work_group_size is None or self.work_group_size <= self.max_work_group_size

    def to_json(self) -> dict:
        return {"threads_per_eu": self.threads_per_eu, "max_threads_per_eu": self.max_threads_per_eu,
                "max_work_group_size": self.max_work_group_size, "work_group_size": self.work_group_size,
                "work_groups_per_core": self.work_groups_per_core,
                "xe_core_occupancy": round(self.xe_core_occupancy, 4), "limited_by": self.limited_by,
                "next_step": self.next_step}


@functools.lru_cache(maxsize=4096)  # pure, and a library's kernels share a few figures
def limits(ip: str, *, grf_count: int, simd: int, slm_bytes: int = 0, wg_size: int | None = None,
           eu_thread_count: int | None = None) -> Occupancy:
    """Occupancy of one Xe-core by work-groups of `wg_size` work-items (None: the largest the
    kernel can launch) of a kernel with these figures; `eu_thread_count` is the compiler's own
    threads-per-EU figure where it wrote one."""
    threads = eu_thread_count or threads_per_eu(ip, grf_count)
    most_threads = max_threads_per_eu(ip)
    max_wg = max_work_group_size(ip, grf_count, simd)
    size = wg_size if wg_size is not None else max_wg
    core_threads = eus_per_core(ip) * threads
    per_wg = max(1, math.ceil(min(size, max_wg) / simd))
    by_threads = core_threads // per_wg
    slm_core = slm_per_work_group(ip)
    by_slm = slm_core // slm_bytes if slm_bytes else by_threads
    groups = min(by_threads, by_slm) if wg_size is None or wg_size <= max_wg else 0
    busy = min(1.0, groups * per_wg / (eus_per_core(ip) * most_threads))
    step: str | None
    if wg_size is not None and wg_size > max_wg:
        limited, step = "work_group_size", _wg_step(ip, grf_count, simd, wg_size)
    elif by_slm < by_threads:
        limited = "slm"
        step = (f"{slm_bytes - slm_core // (groups + 1)} fewer bytes of shared local memory per work-group "
                f"would fit {groups + 1} work-groups per Xe-core")
    elif threads < most_threads:
        limited, step = "grf", _grf_step(ip, grf_count, threads)
    else:
        limited, step = "threads", None
    return Occupancy(threads, most_threads, max_wg, wg_size, groups, busy, limited, step)


def _grf_step(ip: str, grf_count: int, threads: int) -> str | None:
    fam = family(ip)
    if fam == "xe3":
        below = [(most, t) for most, t in _XE3_THREADS if t > threads and most < grf_count]
        if not below:
            return None
        most, t = below[-1]
        return f"{grf_count - most} fewer registers ({most}) would run {t} threads per EU"
    if grf_count >= 256:
        return f"{grf_count - 128} fewer registers (128) would run 8 threads per EU"
    return None


def _wg_step(ip: str, grf_count: int, simd: int, wg_size: int) -> str:
    if max_work_group_size(ip, 128, simd) >= wg_size and grf_count > 128:
        return f"at 128 registers the kernel can launch {max_work_group_size(ip, 128, simd)} work-items"
    if simd != 32 and max_work_group_size(ip, grf_count, 32) >= wg_size:
        return "as SIMD32 the kernel can launch the work-group"
    return f"a work-group of at most {max_work_group_size(ip, grf_count, simd)} work-items launches"


def cannot_launch(ip: str, grf: int, simd: int, work_group: int, how: str) -> str | None:
    """Why a kernel's work-group of `work_group` work-items cannot launch, or None."""
    most = max_work_group_size(ip, grf, simd)
    if work_group <= most:
        return None
    return (f"{how} {work_group} work-items per work-group, and at {grf} registers and SIMD{simd} a work-group "
            f"can have at most {most}: it cannot launch (ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)")


def of(report: Any, wg_size: int | None = None) -> Occupancy | None:
    """The occupancy of a zeinspect KernelReport (None where it has no GRF count or SIMD width),
    for `wg_size`, else the work-group it requires or is launched with."""
    if report.ip is None or not is_ip(report.ip) or not report.grf or not report.simd:
        return None
    size = wg_size if wg_size is not None else report.work_group_size
    return limits(report.ip, grf_count=report.grf, simd=report.simd, slm_bytes=report.slm_bytes or 0,
                  wg_size=size, eu_thread_count=report.eu_thread_count)
