"""The build cache's size at a command's end (app.cache.cache_size): what listing every file
gives, counted again only in the folders that changed since the last count, so that a warm
command on a large cache does not stat every entry to keep the bound."""

from __future__ import annotations

import os

from zeinspect.app import cache as cache_app
from zeinspect.cache import BuildCache


def _entry(root, key: str, size: int) -> None:
    path = root / BuildCache.relative(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def _listed(root) -> int:
    """Every file the bound counts, listed, and the counts' own file."""
    stamp = root / cache_app.SIZES
    return sum(f["size"] for f in cache_app._bounded_files(root)) + (stamp.stat().st_size if stamp.exists() else 0)


def test_the_size_is_the_listing_s_and_only_changed_folders_are_counted_again(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    for i in range(40):
        _entry(root, f"{i:02x}{'0' * 62}", 100 + i)
    (root / "triton-artifacts").mkdir()
    (root / "triton-artifacts" / "k.spv").write_bytes(b"y" * 500)
    counted: list[str] = []
    real = cache_app._counted
    monkeypatch.setattr(cache_app, "_counted", lambda folder: counted.append(folder.name) or real(folder))
    assert cache_app.cache_size(root) == _listed(root) and len(counted) == 41  # the first count: every folder
    counted.clear()
    assert cache_app.cache_size(root) == _listed(root) and counted == []  # nothing changed: nothing counted
    _entry(root, "05" + "1" * 62, 7000)  # a command writes into one folder
    (root / "triton-artifacts" / "k.spv").unlink()  # and an artifact goes
    assert cache_app.cache_size(root) == _listed(root)
    assert sorted(counted) == ["05", "triton-artifacts"]


def test_a_damaged_count_is_counted_again_in_full(tmp_path):
    root = tmp_path / "cache"
    for i in range(3):
        _entry(root, f"{i:02x}{'0' * 62}", 10)
    (root / cache_app.SIZES).write_text("{not json")
    size = cache_app.cache_size(root)
    assert size == _listed(root) and size - (root / cache_app.SIZES).stat().st_size == 30
    os.chmod(root, 0o500)  # a read-only cache: counted, the count not kept
    try:
        assert cache_app.cache_size(root) == size
    finally:
        os.chmod(root, 0o700)
