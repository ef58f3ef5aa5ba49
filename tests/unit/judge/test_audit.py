"""Verdicts, from reports the test writes: each rule of judge.audit, and which fail the gate."""

from __future__ import annotations

import pytest

from zeinspect.judge import ratchet
from zeinspect.judge.audit import audit
from zeinspect.model import Status, Verdict

from ..fakes import report

RATCHET = ratchet.parse("listed  *  0  512\nstale  *  0  64\nloose  *  4096  4096\n", "r.txt")


def verdicts(*reports):
    result = audit(list(reports), RATCHET, [])
    return result, {(j.report.kernel if j.report else j.entry.kernel): j.verdict for j in result.judgements}


@pytest.mark.parametrize("kernel, figures, expected", [
    ("clean", {}, Verdict.CLEAN),
    ("new", {"spill": 64}, Verdict.NEW),
    ("listed", {"spill": 512}, Verdict.LISTED),
    ("listed", {"spill": 513}, Verdict.GREW),
    ("new", {"status": Status.SCRATCH_OVERFLOW}, Verdict.OVERFLOW),
    ("listed", {"status": Status.BUILD_FAILED}, Verdict.FAILED),
    ("new", {"status": Status.NOT_APPLICABLE}, Verdict.NOT_APPLICABLE),
])
def test_one_report_one_verdict(kernel, figures, expected):
    _, got = verdicts(report(kernel, **figures))
    assert got[kernel] is expected
    assert expected.fails == (expected in (Verdict.NEW, Verdict.GREW, Verdict.OVERFLOW, Verdict.FAILED))


def test_entries_that_match_nothing_are_stale_and_loose_ones_improved():
    result, got = verdicts(report("loose", spill=128), report("listed", spill=500))
    assert got["stale"] is Verdict.STALE and got["loose"] is Verdict.IMPROVED
    assert result.passed(strict=False) and not result.passed(strict=True)
    improved = {j.entry.kernel: j.message for j in result.judgements if j.verdict is Verdict.IMPROVED}
    # Each entry is tightened to the most its kernels use: `private spill`.
    assert "`0 128`" in improved["loose"] and "`0 500`" in improved["listed"]


def test_the_gate_fails_on_one_new_user_among_clean_ones():
    result, _ = verdicts(report("clean"), report("new", private=16), report("listed", spill=1))
    assert not result.passed(strict=False)
    assert [j.report.kernel for j in result.failures(strict=False)] == ["new"]
    assert result.scratch_kernels == 2 and result.kernels == 3 and result.listed_kernels == 1
