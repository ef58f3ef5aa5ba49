"""The AOT probe on a fake executor: reports follow the figures, overflow follows model.py."""

from __future__ import annotations

import pytest

from zeinspect.app.session import open_session
from zeinspect.inputs import Input
from zeinspect.model import SCRATCH_LIMIT_XE_HP, Status
from zeinspect.probes import aot
from zeinspect.settings import Settings

from ..fakes import FAKE_COMPILER, FakeBackend, figures

STATE: dict = {}


@pytest.fixture
def fake():
    """probe() in a session whose executor answers with the figures the test sets (injected,
    as a command's session is given its executor)."""
    STATE["answer"] = lambda job: [figures()]
    return STATE


def run(targets=("dg2-g10", "bmg-g21")):
    inp = Input(path="k.cl", kind="opencl", data=b"__kernel void k(__global float* x) {}")
    config = Settings(targets=targets, use_cache=False)
    session = open_session(config, compilers=[FAKE_COMPILER],
                           backend=lambda: FakeBackend(lambda job: STATE["answer"](job)))
    return aot.probe([inp], config, session)


def test_reports_carry_the_compiled_figures_per_target(fake):
    fake["answer"] = lambda job: [figures(spill=1024 if job.ip == "12.55.8" else 0)]
    got = run()
    by_target = {r.target: r for r in got.reports}
    assert by_target["dg2-g10"].spill_bytes == 1024 and by_target["dg2-g10"].uses_scratch
    assert by_target["bmg-g21"].spill_bytes == 0 and not by_target["bmg-g21"].uses_scratch
    assert got.stats.compiles == 2 and got.compilers == [FAKE_COMPILER]


def test_a_slot_over_the_cap_is_an_overflow_whatever_the_log_says(fake):
    fake["answer"] = lambda job: [figures(spill=64, slot=SCRATCH_LIMIT_XE_HP + 64)]
    (dg2, bmg) = run().reports
    assert dg2.status is bmg.status is Status.SCRATCH_OVERFLOW
    assert dg2.needed_scratch_bytes == SCRATCH_LIMIT_XE_HP + 64 and "zeKernelCreate" in dg2.reason


def test_a_failed_compile_is_a_build_failure_for_each_target(fake):
    fake["answer"] = lambda job: None
    reports = run().reports
    assert [r.status for r in reports] == [Status.BUILD_FAILED, Status.BUILD_FAILED]
    assert all(r.command and "-device" in r.command for r in reports)
