"""The process-wide bound on compilers running at once, and the Triton memo's bounds."""

from __future__ import annotations

import threading

from zeinspect.toolchain.run import SLOTS, run_tool
from zeinspect.triton.load.memo import Memo, file_key


def test_no_more_compiler_processes_run_at_once_than_the_bound(tmp_path):
    """However many threads ask (an autotune screen's configs, each with its own pool), the
    processes themselves never outnumber the bound."""
    SLOTS.bound(2)
    SLOTS.peak = 0
    try:
        threads = [threading.Thread(target=run_tool, args=(["sleep", "0.05"],), kwargs={"cwd": str(tmp_path)})
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert SLOTS.peak == 2 and SLOTS.running == 0
    finally:
        SLOTS.bound(0)


def test_the_memo_keeps_the_most_recently_used_and_says_what_it_dropped():
    dropped = []
    memo = Memo(2, on_drop=dropped.append)
    memo["a"], memo["b"] = 1, 2
    assert memo["a"] == 1  # used: "b" is now the oldest
    memo["c"] = 3
    assert "b" not in memo and dropped == [2] and len(memo) == 2


def test_a_changed_file_is_another_key(tmp_path):
    f = tmp_path / "k.py"
    f.write_text("a = 1\n")
    before = file_key(str(f))
    f.write_text("a = 22\n")
    assert file_key(str(f)) != before and file_key(str(f))[0] == before[0]
