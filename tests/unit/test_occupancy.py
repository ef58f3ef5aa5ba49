"""The occupancy model, rule by rule per IP family, each with the source line it encodes
(compute-runtime at e37c60bf2a as docs/how-it-works.md#occupancy reads it)."""

from __future__ import annotations

import pytest

from zeinspect import occupancy
from zeinspect.occupancy import limits, max_work_group_size, threads_per_eu

XE_LP, XE_HPG, XE_LPG, XE_HPC, XE2, XE3 = "12.0.0", "12.55.8", "12.70.4", "12.60.7", "20.1.0", "30.0.4"


@pytest.mark.parametrize("ip, grf, threads", [
    # Xe-LP has one register file and 7 threads per EU (IGC's eu_thread_count on tgllp).
    (XE_LP, 128, 7), (XE_LP, 256, 7),
    # gfx_core_helper_base.inl calculateAvailableThreadCount: (grfCount == 256 ? 4 : 8) * EUCount
    (XE_HPG, 128, 8), (XE_HPG, 256, 4), (XE_LPG, 128, 8), (XE_LPG, 256, 4), (XE_HPC, 128, 8), (XE_HPC, 256, 4),
    (XE2, 96, 8), (XE2, 128, 8), (XE2, 256, 4),
    # gfx_core_helper_xe3_and_later.inl: <=96 -> 10, <=128 -> 8, <=160 -> 6, <=192 -> 5, <=256 -> 4, <=512 -> 2
    (XE3, 64, 10), (XE3, 96, 10), (XE3, 128, 8), (XE3, 160, 6), (XE3, 192, 5), (XE3, 256, 4), (XE3, 512, 2),
])
def test_threads_per_eu_follow_the_register_count(ip, grf, threads):
    assert threads_per_eu(ip, grf) == threads


@pytest.mark.parametrize("ip, grf, simd, most", [
    (XE_LP, 128, 8, 512), (XE_LP, 128, 32, 512),  # Xe-LP's device maximum
    # gfx_core_helper_xehp_and_later.inl calculateMaxWorkGroupSize: halved when simd != 32 and 256 GRF
    (XE_HPG, 128, 8, 1024), (XE_HPG, 256, 8, 512), (XE_HPG, 256, 16, 512), (XE_HPG, 256, 32, 1024),
    (XE_LPG, 256, 16, 512), (XE_HPC, 256, 16, 512), (XE_HPC, 128, 16, 1024),
    # xe2_hpg_core calculateNumThreadsPerThreadGroup: 32 threads, 64 when grf != 256 && simd == 16
    (XE2, 128, 16, 1024), (XE2, 256, 16, 512), (XE2, 128, 32, 1024), (XE2, 256, 32, 1024),
    # xe3_core: 64 threads (<= 128 GRF), 48 (160), 40 (192), 32 (256 or SIMD32), 16 (512)
    (XE3, 128, 16, 1024), (XE3, 160, 16, 768), (XE3, 192, 16, 640), (XE3, 256, 16, 512), (XE3, 512, 16, 256),
    (XE3, 128, 32, 1024),
])
def test_the_largest_work_group_a_kernel_can_launch(ip, grf, simd, most):
    assert max_work_group_size(ip, grf, simd) == most


def test_the_example_of_the_issue_cannot_launch():
    # SIMD16, 256 registers, a required work-group of 1024 on bmg-g21: at most 32 threads of 16.
    o = limits(XE2, grf_count=256, simd=16, wg_size=1024)
    assert not o.launchable and o.max_work_group_size == 512 and o.limited_by == "work_group_size"
    assert "128 registers" in o.next_step and o.work_groups_per_core == 0
    assert limits(XE2, grf_count=128, simd=16, wg_size=1024).launchable


def test_an_xe_core_fills_with_work_groups_until_threads_or_slm_run_out():
    # Xe-HPG: 16 EUs x 8 threads = 128 threads per Xe-core; a SIMD16 work-group of 256 is 16 threads.
    o = limits(XE_HPG, grf_count=128, simd=16, wg_size=256)
    assert (o.work_groups_per_core, o.xe_core_occupancy, o.limited_by) == (8, 1.0, "threads")
    # 40 KiB of SLM each: one work-group per 64 KiB Xe-core, and 24 KiB less would fit two.
    o = limits(XE_HPG, grf_count=128, simd=16, wg_size=256, slm_bytes=40 * 1024)
    assert (o.work_groups_per_core, o.limited_by) == (1, "slm") and o.xe_core_occupancy == 16 / 128
    assert o.next_step.startswith(f"{40 * 1024 - 32 * 1024} fewer bytes")
    # 256 registers halve the threads: the register file is the limit, and 128 fewer gain 8.
    o = limits(XE_HPG, grf_count=256, simd=16, wg_size=256)
    assert (o.threads_per_eu, o.work_groups_per_core, o.limited_by) == (4, 4, "grf") and o.xe_core_occupancy == 0.5
    assert o.next_step == "128 fewer registers (128) would run 8 threads per EU"


def test_the_compilers_own_thread_count_is_used_where_it_wrote_one():
    assert limits(XE3, grf_count=160, simd=16, eu_thread_count=6).threads_per_eu == 6
    assert limits(XE3, grf_count=160, simd=16).threads_per_eu == 6


def test_of_a_report_uses_its_figures():
    from .fakes import report

    r = report(grf=256, ip=XE_HPG).replace(work_group_size=1024, simd=16)
    o = occupancy.of(r)
    assert o is not None and not o.launchable and o.max_work_group_size == 512
    assert occupancy.of(r.replace(grf=None)) is None
