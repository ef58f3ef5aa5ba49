"""Whole-or-nothing writes keep a file's mode, and give a new file the mode open() would."""

from __future__ import annotations

import os

from zeinspect.fileio import atomic_write


def test_a_new_file_gets_the_umask_mode_and_an_existing_one_keeps_its_own(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "new.txt", b"x")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
        kept = tmp_path / "kept.txt"
        kept.write_bytes(b"old")
        kept.chmod(0o640)
        atomic_write(kept, b"new")
        assert kept.read_bytes() == b"new" and kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(umask)
