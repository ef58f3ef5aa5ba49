"""One build session per command (issue 60): `zeinspect triton` opens it at its door and passes
it down, to the screen, the capture's target and the costs, as pip-audit builds its service once."""

from __future__ import annotations

import pytest

import zeinspect.app.session as session_module
from zeinspect.app.gate import settings
from zeinspect.triton.app import request, screen_request
from zeinspect.triton.model.request import Way


@pytest.fixture
def opened(monkeypatch) -> list[object]:
    """Every session a command opens (open_session is looked up where it is used, at call time)."""
    got: list[object] = []
    real = session_module.open_session

    def counting(*args, **kwargs):
        got.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_module, "open_session", counting)
    return got


def test_a_cache_screen_with_costs_opens_one_session(tmp_path, monkeypatch, opened):
    """A cache whose only entry does not read: nothing to build, but the door, the screen and the
    costs each used to open their own."""
    monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    entry = tmp_path / "triton" / "abc"
    entry.mkdir(parents=True)
    (entry / "k.json").write_text("{not json")
    req = request((), settings({"targets": ("bmg-g21",), "cost": True}), {"cache_dir": str(tmp_path / "triton")})
    assert req.way is Way.CACHE
    got = screen_request(req)
    assert any("k.json" in n for n in got.collection.notes)  # the entry that did not read is said
    assert len(opened) == 1


def test_the_count_sees_a_second_session(tmp_path, monkeypatch, opened):
    """The test above can fail: a use case given no session opens its own."""
    monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    config = settings({"targets": ("bmg-g21",)})
    session_module.open_session(config)
    session_module.open_session(config)
    assert len(opened) == 2
