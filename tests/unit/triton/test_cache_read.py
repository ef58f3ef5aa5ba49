"""A Triton cache is read entry by entry: an internal error on one entry is that entry's
incident, and the others are read (issue 45: never abort a whole input for one part of it)."""

from __future__ import annotations

import json

import pytest

from zeinspect.triton.sources import cache


def _entry(root, folder: str, name: str) -> None:
    d = root / folder
    d.mkdir(parents=True)
    (d / f"{name}.json").write_text(json.dumps({"name": name, "num_warps": 4, "target": {"backend": "cuda",
                                                                                        "arch": 90}}))
    (d / f"{name}.ttir").write_text(f'#loc = loc("/src/{name}.py":1:0)\nmodule {{}}\n')


def test_an_internal_error_on_one_entry_is_its_incident(tmp_path, monkeypatch):
    _entry(tmp_path, "AAAA", "good_kernel")
    _entry(tmp_path, "BBBB", "bad_kernel")
    real = cache.entry_kernel

    def broken(ttir, meta):
        if meta["name"] == "bad_kernel":
            raise KeyError("a reader bug")
        return real(ttir, meta)

    monkeypatch.setattr(cache, "entry_kernel", broken)
    monkeypatch.delenv("ZEINSPECT_DEBUG", raising=False)
    got = cache.read_cache(str(tmp_path))
    assert [s.kernel.kernel for s in got.specializations] == ["good_kernel"]
    [incident] = got.incidents
    assert incident.startswith("BBBB/bad_kernel.json: internal error: KeyError") and "report" in incident
    monkeypatch.setenv("ZEINSPECT_DEBUG", "1")
    with pytest.raises(KeyError):
        cache.read_cache(str(tmp_path))
