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


def _cost(per_iteration, spill=1, fill=1, private=0):
    return {"per_iteration_bytes": per_iteration, "loop_depth": int(per_iteration > 0),
            "messages": {"spill": spill, "fill": fill, "private": private}}


def test_the_loop_rule_passes_scratch_outside_loops_and_within_its_bound_only():
    empty = ratchet.parse("", "r.txt")
    reports = [report("prologue", spill=4096, cost=_cost(0)), report("light", spill=64, cost=_cost(96)),
               report("heavy", spill=64, cost=_cost(4352)), report("unmeasured", spill=64),
               # Private memory the dump's messages do not show (Xe-LP, Xe-HPG): not known to be free.
               report("hidden", private=4096, cost=_cost(0, spill=0, fill=0))]
    got = {j.report.kernel: j for j in audit(reports, empty, [], loop_bound=128).judgements}
    assert {k: j.verdict for k, j in got.items()} == {
        "prologue": Verdict.LISTED, "light": Verdict.LISTED, "heavy": Verdict.NEW, "unmeasured": Verdict.NEW,
        "hidden": Verdict.NEW}
    assert "outside loops only" in got["prologue"].message and "96 bytes per loop iteration" in got["light"].message
    assert "4352 bytes per loop iteration, over the gate's loop bound of 128" in got["heavy"].message
    assert "could not be measured" in got["unmeasured"].message and "could not be measured" in got["hidden"].message
    # Without the rule (the default), any scratch is a finding, measured or not.
    assert {j.verdict for j in audit(reports, empty, []).judgements} == {Verdict.NEW}


def test_a_native_images_cost_judges_its_spills_but_not_its_private_memory():
    """A native image's cost comes from its code (writes and reads, not told apart): a spill-only
    kernel is judged on it; one with private memory is not known to be free of loop traffic."""
    empty = ratchet.parse("", "r.txt")

    def native(per_iteration, write=2, read=3):
        return {"per_iteration_bytes": per_iteration, "loop_depth": int(per_iteration > 0),
                "messages": {"write": write, "read": read}}

    reports = [report("spills_outside", spill=4096, cost=native(0)), report("spills_inside", spill=64, cost=native(256)),
               report("private", private=4096, cost=native(0)),
               report("nothing_seen", spill=64, cost=native(0, write=0, read=0))]
    got = {j.report.kernel: j.verdict for j in audit(reports, empty, [], loop_bound=128).judgements}
    assert got == {"spills_outside": Verdict.LISTED, "spills_inside": Verdict.NEW, "private": Verdict.NEW,
                   "nothing_seen": Verdict.NEW}


def test_a_spill_that_moves_into_a_loop_grew_though_its_bytes_did_not():
    listed = ratchet.parse("k  *  0  512  loop=0\n", "r.txt")
    (moved,) = audit([report("k", spill=512, cost=_cost(256))], listed, []).judgements
    assert moved.verdict is Verdict.GREW and "256 bytes of scratch per loop iteration" in moved.message
    (same,) = audit([report("k", spill=512, cost=_cost(0))], listed, []).judgements
    assert same.verdict is Verdict.LISTED
    # Unmeasured loop traffic is judged on the bytes alone.
    (unmeasured,) = audit([report("k", spill=512)], listed, []).judgements
    assert unmeasured.verdict is Verdict.LISTED
    loose = ratchet.parse("k  *  0  512  loop=1024\n", "r.txt")
    improved = [j for j in audit([report("k", spill=512, cost=_cost(256))], loose, []).judgements
                if j.verdict is Verdict.IMPROVED]
    assert improved and "tighten it to `0 512 loop=256`" in improved[0].message


def test_the_ratchet_update_records_the_loop_traffic_beside_the_bytes():
    from zeinspect.judge.update import update

    book = ratchet.parse("old  *  0  512  # reason\n", "r.txt")
    reports = [report("old", spill=512, cost=_cost(256)), report("old", "bmg-g21", spill=128, cost=_cost(64)),
               report("new", spill=64, cost=_cost(0)), report("unmeasured", spill=32)]
    plan = update(book, audit(reports, book, []), allow_grow=True)
    assert book.render().splitlines()[:1] == ["old  *  0  512  loop=256  # reason"]  # the most of its targets
    added = {e.kernel: e.loop for e in book.entries[1:]}
    assert added == {"new": 0, "unmeasured": None}, plan
    # The loop figure tightens like the bytes and, without --allow-grow, never grows.
    plan = update(book, audit([report("old", spill=512, cost=_cost(9000))], book, []), allow_grow=False)
    assert book.entries[0].loop == 256 and any("would grow" in line for line in plan.refused)


def test_a_ratchet_line_may_name_a_family_as_the_summary_shows_it():
    members = ["_ZTSN4fmha3FwdIiLi1EEE", "_ZTSN4fmha3FwdIiLi2EEE"]  # fmha::Fwd<int, 1> and <int, 2>
    other = "_ZTSN4fmha3BwdIiLi1EEE"
    rat = ratchet.parse("Fwd  *  0  4096  # the forward kernels' tiles spill by design\n", "r.txt")
    result = audit([report(k, spill=1024) for k in members + [other]], rat, [])
    verdicts = {j.report.kernel: j.verdict for j in result.judgements if j.report is not None}
    assert verdicts == {members[0]: Verdict.LISTED, members[1]: Verdict.LISTED, other: Verdict.NEW}
