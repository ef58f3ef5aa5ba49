"""inputs.saved: the lean reader of saved documents gives the judge what the whole document does."""

from __future__ import annotations

import json

import pytest

from zeinspect.errors import InputError
from zeinspect.inputs import saved
from zeinspect.judge.diff import compare, side


def _report(kernel, **over):
    out = {"input": f"lib.so[.tgtimg[{kernel}]]", "kernel": kernel, "target": "bmg-g21", "ip": "20.1.0",
           "compiler": "ocloc-x/igc-y", "status": "ok", "simd": 16, "grf": 128, "spill_bytes": 0,
           "private_bytes": 64, "scratch_bytes": 64, "code_bytes": 4096, "log": ["warning: a line"] * 3,
           "command": "ocloc compile ...", "notes": [], "work_group_size": None, "scratch_unknown": False,
           "origin": {"file": "lib.so", "member": None, "image": ".tgtimg[1]", "variant": "spir64"},
           "occupancy": {"threads_per_eu": 8, "max_work_group_size": 1024}, "missing_aspects": []}
    out.update(over)
    return out


REPORTS = [
    _report("plain"),
    _report("wrong_kinds", grf=True, scratch_bytes="lots", occupancy="none", extra=[1]),
    _report("triton", extra={"triton": {"first_build": {"spill_bytes": 2048}}, "other": list(range(50))}),
    _report("failed", status="build_failed", reason="ocloc crashed", spill_bytes=None, scratch_bytes=None),
    {"kernel": "sparse", "target": "bmg-g21"},  # most fields absent
    _report("unknown_scratch", scratch_unknown=True, scratch_space_bytes=512, scratch_bytes=None),
]


def _generic(doc: dict) -> list[dict]:
    # What the judge got before the lean reader: the whole reports, as the json module reads them.
    return json.loads(json.dumps(doc))["reports"]


def test_the_lean_reader_and_the_whole_document_are_judged_alike():
    doc = {"schema": "zeinspect.report/1", "compilers": [{"id": "ocloc-x/igc-y", "path": "/x"}],
           "reports": REPORTS, "stats": {}, "notes": [], "incidents": ["ocloc crashed (signal 11)"]}
    got = saved.read_saved(json.dumps(doc).encode(), "doc.json")
    assert got.schema == "zeinspect.report/1" and got.compilers == ["ocloc-x/igc-y"]
    assert got.incidents == ["ocloc crashed (signal 11)"]
    lean, whole = side(got.reports), side(_generic(doc))
    assert lean == whole
    assert len(lean) == len(REPORTS) and compare(lean, whole).counts()["worse"] == 0


def test_an_audit_documents_verdicts_give_their_reports():
    doc = {"schema": "zeinspect.audit/1", "verdicts": [{"verdict": "CLEAN", "report": r} for r in REPORTS]
           + [{"verdict": "STALE", "report": None}]}
    got = saved.read_saved(json.dumps(doc).encode(), "audit.json")
    assert side(got.reports) == side(REPORTS)


@pytest.mark.parametrize(("data", "says"), [
    (b'{"schema": "zeinspect.report/1", "reports": [', "is not a complete JSON document"),
    (b"\xff\xfe{}", "is not a JSON document (not UTF-8 text)"),
    (b'{"schema": "other/1", "reports": []}', "is not a zeinspect report or audit document"),
    (b'["a list"]', "is not a zeinspect report or audit document"),
    (b'{"schema": "zeinspect.report/1"}', "has no reports"),
])
def test_what_is_not_a_saved_document_is_one_line_naming_the_file(data, says):
    with pytest.raises(InputError) as caught:
        saved.read_saved(data, "doc.json")
    assert says in caught.value.one_line() and caught.value.one_line().startswith("doc.json: ")


def test_a_document_of_another_shape_is_read_by_the_general_path():
    # A report that is not an object, and incidents that are not a list: the lean structs
    # refuse them, the general path keeps what can be read.
    doc = {"schema": "zeinspect.report/1", "reports": [REPORTS[0], "not a report"], "incidents": "x"}
    got = saved.read_saved(json.dumps(doc).encode(), "doc.json")
    assert side(got.reports) == side([REPORTS[0]]) and got.incidents == []
