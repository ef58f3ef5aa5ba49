"""Packages come from anywhere: a hostile archive is one line naming it, never a file written,
a path followed out of it, or a member read past its bounds."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from zeinspect.errors import InputError
from zeinspect.inputs import Reading, collect, packages, read_input

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


def test_a_bomb_is_refused_before_it_is_inflated_and_the_other_members_read(tmp_path):
    """One member of a package is never the whole package: the bomb is named in a note, not
    inflated, and the package's kernels are read."""
    bomb = _zip(tmp_path / "bomb.zip", {"lib.so": b"\x7fELF" + bytes(8 << 20), "k.spv": SPIRV}, zipfile.ZIP_BZIP2)
    assert bomb.stat().st_size < 64 << 10
    reading = Reading()
    [inp] = collect([str(bomb)], reading)
    assert inp.path == f"{bomb}!k.spv"
    [note] = reading.notes()
    assert note.startswith(f"{bomb}: 1 member not audited") and "lib.so: " in note and "archive bomb" in note


def test_a_shader_a_data_file_and_a_broken_member_are_named_and_skipped(tmp_path):
    """A Vulkan compute shader shipped as .spv (its entry point's execution model is GLCompute,
    its capability Shader), SPIR-V without entry points and a .spv that is not SPIR-V: each is
    named with why, the package's kernel is read, and the note counts them."""
    words = [0x07230203, 0x00010000, 0, 8, 0,
             (2 << 16) | 17, 1,  # OpCapability Shader
             (3 << 16) | 14, 0, 1,  # OpMemoryModel Logical GLSL450
             (5 << 16) | 15, 5, 1, int.from_bytes(b"main", "little"), 0]  # OpEntryPoint GLCompute %1 "main"
    shader = b"".join(w.to_bytes(4, "little") for w in words)
    library = b"".join(w.to_bytes(4, "little") for w in words[:5] + words[5:7] + [(2 << 16) | 17, 6])
    wheel = _zip(tmp_path / "mixed-1.0-py3-none-any.whl", {"m/shader.spv": shader, "m/lib.spv": library,
                                                           "m/fake.spv": b"not spir-v", "m/k.spv": SPIRV})
    reading = Reading()
    [inp] = collect([str(wheel)], reading)
    assert inp.path.endswith("!m/k.spv")
    [note] = reading.notes()
    assert "3 members not audited" in note
    assert "m/shader.spv: a Vulkan or OpenGL shader module (1 GLCompute entry point, the Shader capability)" in note
    assert "m/lib.spv: a SPIR-V module without entry points" in note and "m/fake.spv: " in note
    # Named directly, the shader is an input error, one line naming it.
    (tmp_path / "shader.spv").write_bytes(shader)
    with pytest.raises(InputError) as err:
        read_input(str(tmp_path / "shader.spv"))
    assert "GLCompute" in err.value.one_line() and "shader.spv" in err.value.one_line()


def test_an_internal_error_in_one_member_is_its_incident(tmp_path, monkeypatch):
    """An exception while reading one member is that member's incident; the rest are read."""
    import zeinspect.inputs as inputs_mod

    wheel = _zip(tmp_path / "two-1.0-py3-none-any.whl", {"a/k.spv": SPIRV, "b/k.spv": SPIRV})
    real = inputs_mod._recognised

    def broken(path, data, origin=None):
        if path.endswith("a/k.spv"):
            raise RuntimeError("a reader bug")
        return real(path, data, origin)

    monkeypatch.setattr(inputs_mod, "_recognised", broken)
    monkeypatch.delenv("ZEINSPECT_DEBUG", raising=False)
    reading = Reading()
    [inp] = collect([str(wheel)], reading)
    assert inp.path.endswith("!b/k.spv")
    [incident] = reading.incidents
    assert incident.startswith(f"{wheel}!a/k.spv: internal error: RuntimeError: a reader bug")
    monkeypatch.setenv("ZEINSPECT_DEBUG", "1")
    with pytest.raises(RuntimeError):
        collect([str(wheel)], Reading())


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


def test_a_library_over_two_gigabytes_is_read_from_a_package_as_any_other():
    """intel-extension-for-tensorflow-lib ships a 2.3 GB library (22,000 kernels): a host file
    is spooled and mapped, so the 2 GB bound on members read whole does not apply to it."""
    import io
    import struct

    import pytest

    from zeinspect.errors import InputError
    from zeinspect.inputs import packages

    elf = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HH", 3, 0x3E)
    big = 3 * 1024 ** 3
    with pytest.raises(InputError, match="over the .* byte limit"):
        packages._bounded_read(io.BytesIO(b"x" * 64), big, None, "data.bin", "p.whl", b"x" * 20)
    spooled = packages._bounded_read(io.BytesIO(b"\0" * 64), big, None, "lib.so", "p.whl", elf)
    assert bytes(spooled[:20]) == elf  # read (spooled and mapped), not refused
