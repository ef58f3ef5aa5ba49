"""The join of a profile with reports (judge.profile): kernels matched by every name people
give them, every trace kernel and every report accounted for, and the gate's time rule."""

from __future__ import annotations

import pytest
from conftest import realworld

from zeinspect import names
from zeinspect.inputs.profile import Profile
from zeinspect.judge import ratchet
from zeinspect.judge.audit import audit
from zeinspect.judge.profile import join, time_share_rule
from zeinspect.model import Verdict

from ..fakes import report

SYCL = "_ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_2idILi1EEEE_"
FUNCTOR = "_ZTS9VectorAddIfE"


def _profile(**seconds):
    p = Profile("p.csv", "csv")
    for name, s in seconds.items():
        p.add(name, s)
    return p


@pytest.mark.parametrize("spelled", [SYCL, names.demangled(SYCL), names.readable(SYCL), names.short(SYCL)])
def test_a_sycl_kernel_is_found_by_any_of_its_names(spelled):
    joined = join(_profile(**{spelled: 1.0}), [report(SYCL, spill=64)])
    [k] = joined.kernels
    assert k.reports and k.scratch("dg2-g10") == 64 and not joined.unprofiled


def test_a_triton_specialization_is_its_kernel_as_launched_and_launches_add_up():
    p = _profile(triton_poi_fused_add_0=3.0, gemm=1.0)
    p.add("triton_poi_fused_add_0", 1.0)
    reports = [report("triton_poi_fused_add_0[1024, 16]", spill=32), report("triton_poi_fused_add_0[64, 16]"),
               report(FUNCTOR, private=128)]
    joined = join(p, reports)
    assert [k.name for k in joined.kernels] == ["triton_poi_fused_add_0", "gemm"]  # the most time first
    hot, gemm = joined.kernels
    assert hot.launches == 2 and hot.share == pytest.approx(0.8) and len(hot.reports) == 2
    assert hot.scratch("dg2-g10") == 32  # the larger of its specializations
    assert not gemm.reports and joined.unmatched == [gemm]  # no report: a row, with its share
    assert joined.unprofiled == [FUNCTOR]  # a report with no time: listed
    assert sum(k.share for k in joined.kernels) == pytest.approx(1.0)
    assert joined.share_with_scratch("dg2-g10") == pytest.approx(0.8)
    assert "80.0 % of profiled kernel time is in kernels that use scratch on dg2-g10" in joined.headline("dg2-g10")


def test_saved_documents_join_like_reports():
    reports = [report("k", spill=64), report("j")]
    assert ([(k.name, k.scratch("dg2-g10")) for k in join(_profile(k=1.0, j=1.0), [r.to_json() for r in reports])
             .kernels] == [(k.name, k.scratch("dg2-g10")) for k in join(_profile(k=1.0, j=1.0), reports).kernels])


@pytest.mark.parametrize("hot_spills, passes", [(False, True), (True, False)])
def test_the_time_rule_passes_new_users_only_under_the_bound(hot_spills, passes):
    reports = [report("cold", spill=64), report("hot", spill=64 if hot_spills else 0)]
    result = audit(reports, ratchet.parse("", "r.txt"), [])
    assert {j.verdict for j in result.judgements if j.report.kernel == "cold"} == {Verdict.NEW}
    joined = join(_profile(hot=9.0, cold=1.0), reports)
    judged, share = time_share_rule(result.judgements, joined, 15.0)
    assert share == pytest.approx(1.0 if hot_spills else 0.1)
    verdicts = {j.report.kernel: j.verdict for j in judged}
    assert verdicts["cold"] is (Verdict.LISTED if passes else Verdict.NEW)
    assert {j.verdict for j in result.judgements if j.report.kernel == "cold"} == {Verdict.NEW}


# -- the device time split, and the user's driver as a check --------------------------------

GOLD = realworld() / "unitrace-gold"  # unitrace's own recorded outputs (tests/conftest.py finds them)
PROFILES = sorted(p for p in GOLD.glob("*.txt") if p.name != "ze_graph_api-d.txt") if GOLD.is_dir() else []


def _parts_add_up(joined) -> None:
    d = joined.device_split()
    parts = d["kernels_with_report"] + d["kernels_without_report"] + sum(d["not_kernels"].values()) + d["unattributed"]
    assert parts == pytest.approx(d["total"]) and d["unattributed"] >= 0


@pytest.mark.skipif(not PROFILES, reason="no ../shared/realworld/unitrace-gold")
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_the_four_parts_of_device_time_add_up_on_unitraces_own_outputs(path):
    from zeinspect.inputs.profile import read_profile

    profile = read_profile(str(path))
    some = next(iter(profile.kernels))
    joined = join(profile, [report(some, "bmg-g21", ip="20.1.0")])
    _parts_add_up(joined)
    d = joined.device_split()
    assert d["kernels_with_report"] == pytest.approx(profile.kernels[some].seconds)
    if path.name == "ze_gemm-d.txt":  # unitrace's GEMM example: its barrier is 48.8 % of the device time
        assert d["not_kernels"]["barrier"] / d["total"] == pytest.approx(0.48777458, abs=1e-6)
        assert joined.kernels[0].share == pytest.approx(1.0)  # shares are of kernel time only


def test_the_four_parts_add_up_on_a_pytorch_trace_with_copies(tmp_path):
    import json

    from zeinspect.inputs.profile import read_profile

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"deviceProperties": [{"name": "Intel(R) Arc(TM) B580 Graphics"}], "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "dur": 30}, {"ph": "X", "cat": "kernel", "name": "j", "dur": 10},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "dur": 50},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset", "dur": 10}]}))
    joined = join(read_profile(str(path)), [report("k")])
    _parts_add_up(joined)
    assert joined.device_split()["not_kernels"] == pytest.approx({"copy": 50e-6, "fill": 10e-6})
    assert joined.kernels[0].share == pytest.approx(0.75)


KERNEL_PROPERTIES = (
    "\n=== Device Timing Summary ===\n\n"
    "                Total Execution Time (ns):                 2000\n"
    "    Total Device Time for L0 backend (ns):                 1000\n\n== L0 Backend ==\n\n"
    "  Kernel,        Calls,            Time (ns),     Time (%),         Average (ns),             Min (ns),"
    "             Max (ns)\n"
    '  "GEMM",            4,                 1000,   100.000000,                  250,                  200,'
    "                  300\n\n\n=== Kernel Properties ===\n\n"
    "  Kernel, Compiled, SIMD, Number of Arguments, SLM Per Work Group, Private Memory Per Thread, "
    "Spill Memory Per Thread, Register File Size Per Thread\n"
    '  "GEMM",      JIT,   32,                   4,                  0,                         0,'
    "                    SPILL,                           128\n\n")
"""unitrace's Kernel Properties table (ze_collector.h:1537-1580), its spill cell set per test."""


@pytest.mark.parametrize("driver_spill, ours, differs", [(0, 0, False), (0, 4096, True), (2048, 0, True),
                                                         (2048, 2048, False)])
def test_a_spill_the_driver_reported_otherwise_is_a_mismatch_both_ways(tmp_path, driver_spill, ours, differs):
    from zeinspect.formats.profile import mismatch_lines
    from zeinspect.inputs.profile import read_profile

    path = tmp_path / "d.txt"
    path.write_text(KERNEL_PROPERTIES.replace("SPILL", str(driver_spill).rjust(5)))
    r = report("GEMM", "bmg-g21", ip="20.1.0", spill=ours).replace(simd=32, grf=128)
    found, how = join(read_profile(str(path)), [r]).driver_check()
    assert "only target" in how
    assert [(m.figure, m.driver, m.zeinspect) for m in found] == ([("spill bytes", driver_spill, (ours,))] if differs
                                                                  else [])
    shown = "\n".join(mismatch_lines(join(read_profile(str(path)), [r])))
    assert shown.startswith("the driver's own figures") == differs
    assert (f"MISMATCH: GEMM on bmg-g21: the driver reported spill bytes {driver_spill}, zeinspect {ours}" in shown) \
        == differs


def test_the_device_the_trace_names_picks_the_target_compared(tmp_path):
    from zeinspect.inputs.profile import read_profile

    path = tmp_path / "d.txt"
    path.write_text(KERNEL_PROPERTIES.replace("SPILL", " 2048"))
    reports = [report("GEMM", "bmg-g21", ip="20.1.0", spill=2048).replace(simd=32, grf=128),
               report("GEMM", "dg2-g10", spill=0).replace(simd=32, grf=128)]
    profile = read_profile(str(path))
    _, how = join(profile, reports).driver_check()
    assert "does not name its device" in how  # two targets, no device: nothing compared
    profile.device = "Intel(R) Arc(TM) B580 Graphics"
    found, how = join(profile, reports).driver_check()
    assert found == [] and "B580" in how
