"""The ledger's account (judge.coverage), from parts and reports the test writes: each way a
declared kernel ends (reported, excluded for a reason, unread), the per-input count, and the
lines that make a run exit 3."""

from __future__ import annotations

import pytest

from zeinspect.errors import InputError
from zeinspect.judge import ratchet
from zeinspect.judge.coverage import account
from zeinspect.ledger import Exclusion, Part
from zeinspect.model import WHOLE_MODULE, Status

from ..fakes import report

TARGETS = [("dg2-g10", "12.55.8"), ("bmg-g21", "20.1.0")]


def spirv(label: str, *kernels: str, **kw) -> Part:
    return Part("lib.so", label, kernels, "SYCL offload entries", compiled=True, **kw)


def both(kernel: str, label: str, **kw) -> list:
    return [report(kernel, "dg2-g10", input=label, **kw), report(kernel, "bmg-g21", ip="20.1.0", input=label, **kw)]


def test_a_kernel_reported_on_every_target_it_is_built_for_is_reported():
    got = account([spirv("lib.so[a]", "k1", "k2")], both("k1", "lib.so[a]") + both("k2", "lib.so[a]"),
                  targets=TARGETS)
    assert got.totals()["declared"] == 2 and got.totals()["reported"] == 2 and got.whole
    assert got.incidents() == []


def test_a_declared_kernel_with_no_report_is_unread_and_said_with_its_part():
    got = account([spirv("lib.so[a]", "k1", "k2")], both("k1", "lib.so[a]"), targets=TARGETS)
    assert not got.whole and got.totals()["unread"] == 1
    [line] = got.incidents()
    assert line.startswith("lib.so[a]: 1 declared kernel unread (no report): k2")


def test_a_target_without_its_report_leaves_the_kernel_unread_and_names_the_target():
    got = account([spirv("lib.so[a]", "k1")], [report("k1", "dg2-g10", input="lib.so[a]")], targets=TARGETS)
    assert got.inputs[0].parts[0].unread == {"k1": "no report on bmg-g21"}


def test_a_part_that_could_not_be_read_leaves_every_kernel_it_declares_unread_with_why():
    part = Part("lib.so", "lib.so[.tgtimg[0]]", ("d1", "d2", "d3"), "SYCL offload entries",
                unread="damaged zstd frame: Corrupted block detected")
    got = account([part, spirv("lib.so[b]", "g")], both("g", "lib.so[b]"), targets=TARGETS)
    t = got.totals()
    assert (t["declared"], t["reported"], t["unread"]) == (4, 1, 3)
    [line] = got.incidents()
    assert "lib.so[.tgtimg[0]]: 3 declared kernels unread (damaged zstd frame" in line and "d1, d2, d3" in line


def test_a_part_with_no_table_that_cannot_be_read_is_unread_with_its_kernels_unknown():
    got = account([Part("lib.so", "lib.so[x]", None, "nothing (no descriptor)", unread="truncated zstd frame")], [],
                  targets=TARGETS)
    assert got.totals()["unread_parts"] == 1 and not got.whole
    assert got.incidents() == ["lib.so[x]: unread, its kernels unknown: truncated zstd frame"]


@pytest.mark.parametrize("part, reports, kernels, reason", [
    (Part("lib.so", "lib.so[n]", ("k",), "zebin kernels", ips=("12.60.7",)), [], (), Exclusion.OTHER_TARGETS),
    (spirv("lib.so[a]", "k"), [], ("other*",), Exclusion.FILTERED),
    (spirv("lib.so[a]", "Intel_Symbol_Table_Void_Program"), [], (), Exclusion.INTERNAL),
    (spirv("lib.so[a]", "k", excluded=Exclusion.OTHER_DEVICE), [], (), Exclusion.OTHER_DEVICE),
    (spirv("lib.so[a]", "k"), both("k", "lib.so[a]", status=Status.NOT_APPLICABLE), (), Exclusion.NOT_APPLICABLE),
])
def test_each_reason_to_leave_a_kernel_out(part, reports, kernels, reason):
    got = account([part], reports, targets=TARGETS, narrowed=True, kernels=kernels)
    assert got.whole and got.totals()["excluded"] == {reason.value: 1}


def test_a_native_image_needs_a_report_on_the_targets_asked_for_that_it_holds():
    part = Part("lib.so", "lib.so[n]", ("k",), "zebin kernels", ips=("20.1.0", "12.60.7"))
    missing = account([part], [], targets=TARGETS, narrowed=True)
    assert missing.inputs[0].parts[0].unread == {"k": "no report"}
    read = account([part], [report("k", "bmg-g21", ip="20.1.0", input="lib.so[n]")], targets=TARGETS, narrowed=True)
    assert read.whole
    # Read as it is (no targets named): any report of the kernel will do.
    assert account([part], [report("k", "pvc", ip="12.60.7", input="lib.so[n]")], targets=TARGETS).whole


def test_a_module_that_failed_before_naming_its_kernels_reports_all_of_them():
    got = account([spirv("lib.so[a]", "k1", "k2")],
                  both(WHOLE_MODULE, "lib.so[a]", status=Status.BUILD_FAILED), targets=TARGETS)
    assert got.whole and got.totals()["reported"] == 2


def test_per_input_a_name_counts_once_and_unread_wins():
    native = Part("lib.so", "lib.so[n]", ("k",), "SYCL offload entries", unread="record points past the end")
    got = account([spirv("lib.so[s]", "k"), native], both("k", "lib.so[s]"), targets=TARGETS)
    assert got.totals()["declared"] == 1 and got.totals()["unread"] == 1 and got.totals()["reported"] == 0
    also = account([spirv("lib.so[s]", "k"), spirv("lib.so[t]", "k")], both("k", "lib.so[s]") + both("k", "lib.so[t]"),
                   targets=TARGETS)
    assert also.totals()["declared"] == 1 and also.totals()["reported"] == 1


def test_the_ratchet_accepts_an_unreadable_kernel_with_its_reason():
    r = ratchet.parse("d*  *  unreadable  # built by a compiler newer than the runtime we ship\n", "r.txt")
    part = Part("lib.so", "lib.so[x]", ("d1", "g1"), "SYCL offload entries", unread="damaged zstd frame")
    got = account([part], [], targets=TARGETS, accepts=r.accepts)
    assert got.inputs[0].parts[0].excluded == {"d1": Exclusion.ACCEPTED}
    assert got.inputs[0].parts[0].unread == {"g1": "damaged zstd frame"}
    assert r.accepts("d1") == "built by a compiler newer than the runtime we ship" and r.accepts("g1") is None


@pytest.mark.parametrize("line, problem", [
    ("d1  *  unreadable\n", "needs its reason"),
    ("d1  bmg-g21  unreadable  # why\n", "for every target"),
])
def test_an_unreadable_line_is_for_every_target_and_has_its_reason(line, problem):
    with pytest.raises(InputError, match=problem):
        ratchet.parse(line, "r.txt")


def test_unreadable_lines_sit_beside_scratch_lines_and_round_trip():
    text = "a  *  0  64  # spills\nb  *  unreadable  # zstd frame from a newer wrapper\n"
    r = ratchet.parse(text, "r.txt")
    assert [e.kernel for e in r.entries] == ["a"] and [u.kernel for u in r.unreadable] == ["b"]
    assert r.render() == text


def test_a_part_declared_twice_counts_once():
    got = account([spirv("lib.so[a]", "k"), spirv("lib.so[a]", "k")], both("k", "lib.so[a]"), targets=TARGETS)
    assert len(got.inputs[0].parts) == 1


def test_a_native_image_of_no_known_ip_narrowed_away_is_excluded_with_that_reason():
    legacy = Part("old.bin", "old.bin", ("saxpy",), "patch-token kernels")
    got = account([legacy], [], targets=TARGETS, narrowed=True)
    assert got.whole and got.totals()["excluded"] == {Exclusion.DEVICE_UNKNOWN.value: 1}
    # Read as it is (no targets named), its report is needed.
    assert not account([legacy], [], targets=None).whole
