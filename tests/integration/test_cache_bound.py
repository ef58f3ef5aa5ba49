"""The build cache stays its size (ZEINSPECT_CACHE_MAX_SIZE, as ccache's max_size): at the end of a
command the entries and Triton artifacts written longest ago go until it fits, never one the
command wrote or read; `cache stats` shows the bound."""

from __future__ import annotations

import json
import os
import time

from conftest import KERNELS


def _fill(root, n: int, size: int, age_days: float) -> list:
    """Old entries of the current format and old artifacts, `size` bytes each, written days ago."""
    from zeinspect.cache import BuildCache

    made = []
    then = time.time() - age_days * 86400
    for i in range(n):
        path = root / BuildCache.relative(f"{i:064x}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
        os.utime(path, (then + i, then + i))
        made.append(path)
    art = root / "triton-artifacts"
    art.mkdir(parents=True, exist_ok=True)
    for i in range(n // 2):
        path = art / f"old_{i}.spv"
        path.write_bytes(b"y" * size)
        os.utime(path, (then, then))
        made.append(path)
    return made


def _entries(root) -> set:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_command_leaves_the_cache_within_its_bound_and_keeps_what_it_used(fresh_cli, tmp_path, sid_compiler):
    root = tmp_path / "cache"
    env = {"ZEINSPECT_CACHE_DIR": str(root)}
    first = fresh_cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "dg2-g10", "--compiler", sid_compiler.id, "--json",
                      env=env)
    assert first.code in (0, 1), first
    used = _entries(root)  # what the command wrote (and a re-run reads)
    old = _fill(root, 40, 64 * 1024, age_days=30)
    written = {p: p.stat().st_mtime for p in old}
    bound = sum(p.stat().st_size for p in used) + 10 * 64 * 1024
    again = fresh_cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "dg2-g10", "--compiler", sid_compiler.id,
                      "--json", env={**env, "ZEINSPECT_CACHE_MAX_SIZE": str(bound)})
    assert again.code == first.code
    assert json.loads(again.out)["stats"]["compiles"] == 0  # every entry it needed was read back
    left = _entries(root)
    assert used <= left  # nothing the command read is lost
    assert sum(p.stat().st_size for p in left) <= bound
    gone = [p for p in old if p not in left]
    kept = [p for p in old if p in left]
    assert gone and (not kept or max(written[p] for p in gone) <= min(written[p] for p in kept))  # the oldest first
    stats = fresh_cli("cache", "stats", env={**env, "ZEINSPECT_CACHE_MAX_SIZE": "3G"})
    assert "bound 3072 MiB" in stats.out


def test_no_bound_keeps_everything(fresh_cli, tmp_path, sid_compiler):
    root = tmp_path / "cache"
    old = _fill(root, 10, 4096, age_days=30)
    res = fresh_cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "dg2-g10", "--compiler", sid_compiler.id,
                    env={"ZEINSPECT_CACHE_DIR": str(root), "ZEINSPECT_CACHE_MAX_SIZE": "0"})
    assert res.code in (0, 1), res
    assert all(p.exists() for p in old)
