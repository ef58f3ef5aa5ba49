"""`toolchain fetch` takes its Debian mirror from the system's apt sources, in both formats."""

from __future__ import annotations

import pytest

from zeinspect.errors import ToolchainError
from zeinspect.toolchain.fetch import debian_mirror


def _etc(tmp_path, one_line: str = "", deb822: str = ""):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(one_line)
    if deb822:
        (tmp_path / "sources.list.d" / "debian.sources").write_text(deb822)
    return tmp_path


def test_one_line_format(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEINSPECT_DEBIAN_MIRROR", raising=False)
    etc = _etc(tmp_path, "# comment\ndeb [arch=amd64] http://mirror.example/debian-security bookworm-security main\n"
                         "deb http://mirror.example/debian/ bookworm main contrib\n")
    assert debian_mirror(etc) == "http://mirror.example/debian"


def test_deb822_format_skips_disabled_and_security(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEINSPECT_DEBIAN_MIRROR", raising=False)
    etc = _etc(tmp_path, deb822="Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\n"
                                "Enabled: no\n\nTypes: deb\nURIs: http://sec.example/debian-security\n"
                                "Suites: bookworm-security\nComponents: main\n\nTypes: deb-src deb\n"
                                "URIs: http://on.example/debian\nSuites: bookworm bookworm-updates\n"
                                "Components: main\n")
    assert debian_mirror(etc) == "http://on.example/debian"


def test_override_and_nothing_found(tmp_path, monkeypatch):
    etc = _etc(tmp_path, "deb https://other.example/apt cloud-sdk main\n")
    monkeypatch.setenv("ZEINSPECT_DEBIAN_MIRROR", "http://chosen.example/debian")
    assert debian_mirror(etc) == "http://chosen.example/debian"
    monkeypatch.delenv("ZEINSPECT_DEBIAN_MIRROR")
    with pytest.raises(ToolchainError, match="ZEINSPECT_DEBIAN_MIRROR"):
        debian_mirror(etc)
