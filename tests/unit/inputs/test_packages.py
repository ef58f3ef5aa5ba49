"""Packages come from anywhere: a hostile archive is one line naming it, never a file written,
a path followed out of it, or a member read past its bounds."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from zeinspect.errors import InputError
from zeinspect.inputs import collect, packages, read_input

SPIRV = Path("tests/fuzz/corpus/spirv/clean").read_bytes()


def _zip(path: Path, members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_a_wheels_kernels_are_inputs_named_package_bang_member(tmp_path):
    wheel = _zip(tmp_path / "demo_pkg-1.2.3-py3-none-any.whl",
                 {"demo_pkg/__init__.py": b"", "demo_pkg/k.spv": SPIRV, "demo_pkg/notes.txt": b"x"})
    [inp] = collect([str(wheel)])
    assert inp.path == f"{wheel}!demo_pkg/k.spv" and inp.origin is not None
    assert inp.origin.package == "demo-pkg 1.2.3"
    assert read_input(inp.path).data == SPIRV  # the name is an input again


@pytest.mark.parametrize("name", ["../evil.spv", "/etc/evil.spv", "a/../../evil.spv"])
def test_a_member_that_would_leave_the_archive_is_one_line(tmp_path, name):
    wheel = _zip(tmp_path / "bad-1.0-py3-none-any.whl", {name: SPIRV})
    with pytest.raises(InputError) as err:
        collect([str(wheel)])
    assert "would leave the archive" in err.value.one_line() and str(wheel) in err.value.one_line()


def test_a_bomb_is_refused_before_it_is_inflated(tmp_path):
    bomb = _zip(tmp_path / "bomb.zip", {"lib.so": b"\x7fELF" + bytes(8 << 20)}, zipfile.ZIP_BZIP2)
    assert bomb.stat().st_size < 64 << 10
    with pytest.raises(InputError) as err:
        collect([str(bomb)])
    assert "archive bomb" in err.value.one_line()


def test_links_are_never_followed_and_a_damaged_archive_is_one_line(tmp_path):
    tar = tmp_path / "build.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        info = tarfile.TarInfo("build/k.spv")
        info.size = len(SPIRV)
        t.addfile(info, io.BytesIO(SPIRV))
        link = tarfile.TarInfo("build/passwd.spv")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(link)
    assert [m.name for m in packages.members(str(tar))] == ["build/k.spv"]
    broken = tmp_path / "broken.whl"
    broken.write_bytes(tar.read_bytes()[:40])
    with pytest.raises(InputError) as err:
        collect([str(broken)])
    assert str(broken) in err.value.one_line()
