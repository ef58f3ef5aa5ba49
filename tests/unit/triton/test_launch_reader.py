"""Reading a capture's launch lines (triton.sources.launches.LaunchReader): lines repeated thousands of
times are counted without being parsed again, and still give what parsing each would."""

from __future__ import annotations

import json

from zeinspect.triton.sources.launches import LaunchReader, read_launches
from zeinspect.triton.sources.run import _Tail


def _launch(**changes: object) -> str:
    record = {"file": "/lib/ops.py", "kernel": "scale_kernel", "site": "/lib/use.py:10", "devices": ["cpu"],
              "signature": {"x_ptr": "*fp32", "n": "i32"}, "constexprs": {"BLOCK": 1024},
              "attrs": [[[0], [["tt.divisibility", 16]]]], "num_warps": 4, "num_stages": 2,
              "grf_mode": None, "threads_per_warp": 32}
    record.update(changes)
    return json.dumps(record)


def test_repeated_lines_count_as_launches_of_one_specialization() -> None:
    lines = [_launch()] * 1000 + [_launch(site="/lib/other.py:3")] * 5 + [_launch(constexprs={"BLOCK": 512})]
    got = read_launches(["cmd"], 0, False, lines)
    assert [s.launches for s in got.specializations] == [1005, 1]
    assert got.specializations[0].sites == ["/lib/use.py:10", "/lib/other.py:3"]
    assert got.launches == len(lines) and not got.notes


def test_a_repeated_line_is_the_same_as_parsing_it_again() -> None:
    """The shortcut changes nothing: one reader fed lines that differ only in key order (each is
    parsed) gives the same specializations and counts as identical lines (counted)."""
    a = _launch()
    b = json.dumps(dict(reversed(list(json.loads(a).items()))))
    same = read_launches(["cmd"], 0, False, [a, a, a])
    parsed = read_launches(["cmd"], 0, False, [a, b, b])
    assert [(s.kernel, s.launches, s.sites, s.devices) for s in same.specializations] == \
        [(s.kernel, s.launches, s.sites, s.devices) for s in parsed.specializations]


def test_bad_lines_are_named_by_their_number_and_repeat_as_problems() -> None:
    reader = LaunchReader()
    for line in (_launch(), "{cut", '{"error": "no hook"}', "{cut"):
        reader.feed(line)
    got = reader.capture(["cmd"], 1, False)
    assert got.notes == ["capture line 2 does not read (cut short?)", "no hook",
                            "capture line 4 does not read (cut short?)"]
    assert got.launches == 1


def test_tail_gives_complete_lines_as_they_are_appended_and_the_cut_one_at_the_end(tmp_path) -> None:
    path = tmp_path / "launches.jsonl"
    tail = _Tail(path)
    assert tail.lines() == []  # not written yet
    with open(path, "ab") as f:
        f.write(b"one\ntw")
        f.flush()
        assert tail.lines() == ["one"]
        f.write(b"o\nthr")
        f.flush()
        assert tail.lines() == ["two"]
        assert tail.lines(final=True) == ["thr"]
    tail.close()
