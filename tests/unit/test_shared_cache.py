"""The shared cache's plumbing on a folder store: read-through, write-through, damage, secrets."""

from __future__ import annotations

import pytest

from zeinspect.app.cache import parse_size
from zeinspect.cache import BuildCache, pack_bundle, unpack_bundle
from zeinspect.errors import UsageError
from zeinspect.shared_cache import SharedStore, redact


def test_entries_go_local_then_shared_and_come_back_on_another_machine(tmp_path):
    store = SharedStore(str(tmp_path / "store"))
    one = BuildCache(tmp_path / "one", store)
    one.put("ab" * 32, {"returncode": 0}, b"zebin")
    one.flush()
    two = BuildCache(tmp_path / "two", SharedStore(str(tmp_path / "store")))
    two.prefetch(["ab" * 32, "cd" * 32])
    assert two.get("ab" * 32) == ({"returncode": 0}, b"zebin")
    assert (tmp_path / "two" / BuildCache.relative("ab" * 32)).exists()  # copied locally
    assert two.store.stats.hits == 1 and two.store.stats.misses == 1
    assert two.get("cd" * 32) is None and two.store.stats.misses == 1  # not asked twice


def test_a_damaged_shared_entry_is_ignored_and_counted(tmp_path):
    (tmp_path / "store" / BuildCache.relative("ef" * 32)).parent.mkdir(parents=True)
    (tmp_path / "store" / BuildCache.relative("ef" * 32)).write_bytes(b"ZEICACHE" + b"\0" * 80)
    cache = BuildCache(tmp_path / "local", SharedStore(str(tmp_path / "store")))
    assert cache.get("ef" * 32) is None
    assert cache.store.stats.errors == 1 and not (tmp_path / "local" / BuildCache.relative("ef" * 32)).exists()


def test_read_only_writes_nothing(tmp_path):
    cache = BuildCache(tmp_path / "local", SharedStore(str(tmp_path / "store"), readonly=True))
    cache.put("01" * 32, {}, b"x")
    cache.flush()
    assert not list((tmp_path / "store").rglob("*.entry")) and cache.get("01" * 32) is not None


def test_secrets_never_leave_in_a_message(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value")
    assert "very-secret-value" not in redact("signature for very-secret-value failed")
    assert redact("s3://user:pass@host/bucket") == "s3://***@host/bucket"


def test_sizes():
    assert parse_size("500M") == 500 << 20 and parse_size("2G") == 2 << 30 and parse_size("1.5GiB") == 3 << 29
    assert parse_size("4096") == 4096
    with pytest.raises(UsageError):
        parse_size("lots")


def test_a_module_on_several_targets_travels_as_one_bundle(tmp_path):
    keys = ["a1" * 32, "b2" * 32, "c3" * 32]
    one = BuildCache(tmp_path / "one", SharedStore(str(tmp_path / "store")))
    one.prefetch(keys, [keys])  # an empty store: the bundle is opened, written once complete
    for n, key in enumerate(keys):
        one.put(key, {"returncode": 0, "n": n}, b"zebin%d" % n)
    one.flush()
    bundles = list((tmp_path / "store").rglob("*.bundle"))
    assert len(bundles) == 1 and sorted(unpack_bundle(bundles[0].read_bytes())) == sorted(keys)
    # Another machine is answered by the bundle alone: no entry is asked for by itself.
    for entry in (tmp_path / "store").rglob("*.entry"):
        entry.unlink()
    two = BuildCache(tmp_path / "two", SharedStore(str(tmp_path / "store")))
    two.prefetch(keys, [keys])
    assert [two.get(k) for k in keys] == [({"returncode": 0, "n": n}, b"zebin%d" % n) for n in range(3)]
    assert two.store.stats.hits == 3 and two.store.stats.misses == 0 and two.store.stats.errors == 0
    # A damaged bundle is an error and falls back to the entries (here gone: misses).
    bundles[0].write_bytes(bundles[0].read_bytes()[:-1] + b"\0")
    three = BuildCache(tmp_path / "three", SharedStore(str(tmp_path / "store")))
    three.prefetch(keys, [keys])
    assert three.store.stats.errors == 1 and three.store.stats.misses == 3 and three.get(keys[0]) is None


def test_bundles_round_trip_and_refuse_damage():
    blobs = {"k1": b"one", "k2": b"", "k3": b"three" * 100}
    packed = pack_bundle(blobs)
    assert unpack_bundle(packed) == blobs
    for cut in (1, 10, len(packed) // 2):
        assert unpack_bundle(packed[:-cut]) is None
    assert unpack_bundle(b"ZEIBUNDL" + packed[8:40]) is None
