"""The join of a profile with reports (judge.profile): kernels matched by every name people
give them, every trace kernel and every report accounted for, and the gate's time rule."""

from __future__ import annotations

import pytest

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
    assert "80.0 % of profiled GPU time is in kernels that use scratch on dg2-g10" in joined.headline("dg2-g10")


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
