"""Device images inside SYCL AOT builds, made with real tools during the run."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
import sycl_builds as sb
from conftest import KERNELS

SOURCE = KERNELS / "sg32_accumulate.cl"


@pytest.fixture(scope="module")
def images(sid_compiler, tmp_path_factory):
    return sb.device_images(sid_compiler, SOURCE, tmp_path_factory.mktemp("images"))


@pytest.fixture(scope="module")
def llvm23():
    """Debian unstable's LLVM 23 (llvm-offload-binary writes OffloadBinary version 2)."""
    from zeinspect.errors import ToolchainError
    from zeinspect.toolchain.fetch import fetch_packages

    try:
        return fetch_packages("llvm-23-offload", ["libllvm23"], without_dependencies=("llvm-23",),
                              progress=lambda _: None) / "root"
    except ToolchainError as exc:
        pytest.fail(f"cannot fetch LLVM 23 from Debian unstable: {exc}")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def extracted(cli, path, tmp_path) -> list[dict]:
    out = tmp_path / f"x-{Path(path).name}"
    res = cli("extract", path, "-o", out)
    assert res.code == 0, res
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["images"]:
        if entry.get("file"):
            data = (out / entry["file"]).read_bytes()
            assert sha(data) == entry["sha256"] and len(data) == entry["bytes"]
            assert Path(entry["file"]).name == entry["file"]  # no folders, no escapes
    return manifest["images"]


def builds(tmp_path, images, llvm23=None):
    out = {
        "old-model object": sb.old_model_object(tmp_path, images, "old"),
        "old-model object, zstd": sb.old_model_object(tmp_path, images, "oldz", compress=True),
        "new-model object (v1)": sb.new_model_object(tmp_path, sb.package_v1(tmp_path, images), "new1"),
        "object with .tgtimg": sb.linked(tmp_path, images, "object"),
        "PIE executable": sb.linked(tmp_path, images, "pie"),
        "shared object": sb.linked(tmp_path, images, "shared"),
    }
    return out


@pytest.mark.parametrize("kind", ["old-model object", "old-model object, zstd", "new-model object (v1)",
                                  "object with .tgtimg", "PIE executable", "shared object"])
def test_every_image_round_trips(cli, images, tmp_path, kind):
    path = builds(tmp_path, images)[kind]
    entries = extracted(cli, path, tmp_path)
    got = {sha((tmp_path / f"x-{path.name}" / e["file"]).read_bytes()) for e in entries if e.get("file")}
    assert got == {sha(x) for x in images.values()}, entries
    kinds = sorted(e["kind"] for e in entries)
    assert kinds == ["fatbin", "spirv", "zebin"]
    by_kind = {e["kind"]: e for e in entries}
    assert by_kind["zebin"]["target"] == "dg2-g10"
    assert by_kind["fatbin"]["target"] == "mtl-u,tgllp"
    if "zstd" in kind:
        assert {e["compression"] for e in entries} == {"zstd"}
    if "v1" in kind:
        assert by_kind["zebin"]["arch"] == "dg2-g10" and by_kind["spirv"]["triple"] == "spir64-unknown-unknown"
    if kind in ("PIE executable", "shared object", "object with .tgtimg"):
        assert all(e["source"].startswith(".tgtimg[") for e in entries)


def test_version_2_offload_binary(cli, images, llvm23, tmp_path):
    pkg = sb.package_v2(tmp_path, {"zebin": images["zebin"], "spirv": images["spirv"]}, llvm23)
    assert struct.unpack_from("<I", pkg.read_bytes(), 4)[0] == 2  # the tool really wrote version 2
    obj = sb.new_model_object(tmp_path, pkg, "new2")
    entries = extracted(cli, obj, tmp_path)
    assert {e["kind"]: e["arch"] for e in entries} == {"zebin": "dg2-g10", "spirv": "generic"}
    assert "sycl" in entries[0]["source"]  # LLVM 23 records offload kind 8 (SYCL)


def test_static_archive_of_objects(cli, images, tmp_path):
    a = sb.old_model_object(tmp_path, images, "member_a")
    b = sb.new_model_object(tmp_path, sb.package_v1(tmp_path, images), "member_b")
    lib = sb.static_archive(tmp_path, [a, b])
    entries = extracted(cli, lib, tmp_path)
    assert sorted({e["member"] for e in entries}) == ["member_a.o", "member_b.o"]
    assert len(entries) == 6


def test_inspect_and_audit_a_shared_object(cli, sid_compiler, images, tmp_path):
    lib = sb.linked(tmp_path, images, "shared")
    _, doc = cli.json("inspect", lib, "-t", "dg2-g10,tgllp,lnl-m", "--compiler", sid_compiler.id)
    zebin = tmp_path / "alone.zebin"
    zebin.write_bytes(images["zebin"])
    _, alone = cli.json("inspect", zebin)
    fields = ("kernel", "simd", "grf", "spill_bytes", "private_bytes", "status")
    native = [r for r in doc["reports"] if r["source"] == "binary" and r["target"] == "dg2-g10"]
    from_spirv = [r for r in doc["reports"] if r["source"] == "aot" and r["path"]["via"] == "spirv"]
    assert [tuple(r[f] for f in fields) for r in native] == [tuple(alone["reports"][0][f] for f in fields)]
    assert {r["target"] for r in from_spirv} == {"dg2-g10", "tgllp", "lnl-m"}
    # The images name no compile_target: the runtime selects the first native image holding the
    # kernel (the dg2-g10 zebin) on every GPU, and the driver rebuilds it from its own SPIR-V where it
    # has no code; the SPIR-V image is never taken (probes.paths).
    assert any("no native image for lnl-m" in n and "no compile_target" in n for n in doc["notes"])
    taken = {r["target"]: (r["input"], r["path"]["via"]) for r in doc["reports"] if r["path"]["taken"]}
    zebin = native[0]["input"]
    assert taken == {"dg2-g10": (zebin, "native"), "tgllp": (zebin + "(ir)", "native_ir"),
                     "lnl-m": (zebin + "(ir)", "native_ir")}
    # The gate takes such builds too.
    ratchet = tmp_path / "r.txt"
    ratchet.write_text("")
    res = cli("audit", lib, "-t", "dg2-g10,tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet)
    assert res.code == 1 and "NEW: sg32_accumulate on dg2-g10" in res.out
    assert cli("ratchet", "update", lib, "-t", "dg2-g10,tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet,
               "--allow-grow").code == 0
    assert cli("audit", lib, "-t", "dg2-g10,tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet).code == 0


# -- hostile inputs -------------------------------------------------------------------------

def _tgtimg_record_offset(path: Path) -> int:
    from elftools.elf.elffile import ELFFile

    with path.open("rb") as fh:
        return ELFFile(fh).get_section_by_name(".tgtimg")["sh_offset"]


def test_records_past_the_end_into_themselves_and_overflowing(cli, images, tmp_path):
    lib = sb.linked(tmp_path, images, "shared")
    data = bytearray(lib.read_bytes())
    base = _tgtimg_record_offset(lib)
    struct.pack_into("<Q", data, base + 8, len(data) * 4)  # record 0: size past the end of the file
    struct.pack_into("<Q", data, base + 16 + 8, 0xFFFFFFFFFFFFFFFF)  # record 1: a size that overflows
    bad = tmp_path / "libbad.so"
    bad.write_bytes(bytes(data))
    res = cli("extract", bad, "-o", tmp_path / "out")
    assert res.code == 0, res
    assert res.out.count("skipped: .tgtimg[") == 2 and "past the end" in res.out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [e["kind"] for e in manifest["images"] if e.get("file")] == ["spirv"]
    # A record pointing into .tgtimg itself (the PIE's R_X86_64_RELATIVE addend rewritten).
    from elftools.elf.elffile import ELFFile

    with bad.open("rb") as fh:
        elf = ELFFile(fh)
        tgt = elf.get_section_by_name(".tgtimg")
        rela = elf.get_section_by_name(".rela.dyn")
        spots = [(rela["sh_offset"] + i * 24, r) for i, r in enumerate(rela.iter_relocations())
                 if r["r_offset"] == tgt["sh_addr"] + 32]
    (spot, _), = spots
    struct.pack_into("<q", data, spot + 16, tgt["sh_addr"])
    struct.pack_into("<Q", data, base + 32 + 8, 32)
    selfref = tmp_path / "libself.so"
    selfref.write_bytes(bytes(data))
    res = cli("extract", selfref, "-o", tmp_path / "out2")
    assert res.code == 0 and "points into .tgtimg itself" in res.out


def test_decompression_bomb_is_refused(cli, images, tmp_path):
    bomb = sb.zstd(b"\0" * (64 << 20))  # 64 MiB of zeros in a few KiB
    obj = sb.host_object(tmp_path, "bomb_host")
    (tmp_path / "bomb.bin").write_bytes(sb.end_to_end([bomb, images["zebin"]]))
    out = tmp_path / "bomb.o"
    sb.run(["objcopy", f"--add-section={sb.NATIVE}={tmp_path / 'bomb.bin'}", obj, out], tmp_path)
    res = cli("extract", out, "-o", tmp_path / "o", env={"ZEINSPECT_MAX_DECOMPRESSED": str(16 << 20)})
    assert res.code == 0, res
    assert "decompression bomb" in res.out


def test_names_cannot_escape_the_output_folder(cli, images, tmp_path):
    evil = tmp_path / "evil.img"
    evil.write_bytes(images["zebin"])
    pkg = tmp_path / "evil.bin"
    sb.run(["clang-offload-packager-15", "-o", pkg,
            f"--image=file={evil},triple=spir64_gen-unknown-unknown,arch=../../../../tmp/escaped\x1b[31m,kind=sycl"],
           tmp_path)
    obj = sb.new_model_object(tmp_path, pkg, "evil_obj")
    (tmp_path / "sub").mkdir()
    out = tmp_path / "sub" / "out"
    res = cli("extract", obj, "-o", out)
    assert res.code == 0, res
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == 2 and "manifest.json" in files
    assert all("/" not in f and not f.startswith(".") and "\x1b" not in f for f in files)
    assert not (tmp_path / "escaped").exists() and not Path("/tmp/escaped").exists()


def test_truncated_and_garbled_host_files(cli, images, tmp_path):
    obj = sb.old_model_object(tmp_path, images, "trunc")
    data = obj.read_bytes()
    cut = tmp_path / "cut.o"
    cut.write_bytes(data[: len(data) // 2])
    for cmd in (("inspect", cut), ("extract", cut, "-o", tmp_path / "o")):
        res = cli(*cmd)
        assert res.code == 2 and "cut.o" in res.err and "Traceback" not in res.err, res
    # A bundle section whose image claims more bytes than the section has.
    zebin = bytearray(images["zebin"])
    struct.pack_into("<Q", zebin, 0x28, 1 << 40)  # e_shoff far away
    (tmp_path / "garbled.bin").write_bytes(bytes(zebin))
    host = sb.host_object(tmp_path, "garbled_host")
    out = tmp_path / "garbled.o"
    sb.run(["objcopy", f"--add-section={sb.NATIVE}={tmp_path / 'garbled.bin'}", host, out], tmp_path)
    res = cli("extract", out, "-o", tmp_path / "g")
    assert res.code == 0 and "runs past the end" in res.out, res


# -- large files: mapped, not read ----------------------------------------------------------

def _images_of(path: Path) -> tuple[str, list[tuple[str, str, str]], list[str]]:
    from zeinspect.inputs import expand_host, read_input

    inp = read_input(str(path))
    found, notes, _ = expand_host(inp)
    return type(inp.data).__name__, [(i.path, i.kind, sha(i.data)) for i in found], notes


@pytest.mark.parametrize("kind", ["old-model object, zstd", "new-model object (v1)", "shared object",
                                  "static archive"])
def test_a_mapped_host_file_gives_what_its_bytes_give(images, tmp_path, monkeypatch, kind):
    """A library of hundreds of megabytes is mapped and its images read one at a time
    (inputs.files.MAP_BYTES); with the threshold at one byte, every host file takes that path,
    and must give the same images, byte for byte, and the same notes as when read whole."""
    from zeinspect.inputs import files

    if kind == "static archive":
        path = sb.static_archive(tmp_path, [sb.old_model_object(tmp_path, images, "a"),
                                            sb.new_model_object(tmp_path, sb.package_v1(tmp_path, images), "b")])
    else:
        path = builds(tmp_path, images)[kind]
    read_kind, read, read_notes = _images_of(path)
    monkeypatch.setattr(files, "MAP_BYTES", 1)
    mapped_kind, mapped, mapped_notes = _images_of(path)
    assert (read_kind, mapped_kind) == ("bytes", "mmap")
    assert mapped == read and len(read) >= 3
    assert mapped_notes == read_notes


def test_a_mapped_truncated_file_is_one_error(images, tmp_path, monkeypatch):
    from zeinspect.errors import InputError
    from zeinspect.inputs import expand_host, files, read_input

    data = sb.old_model_object(tmp_path, images, "trunc").read_bytes()
    cut = tmp_path / "cut.o"
    cut.write_bytes(data[: len(data) // 2])
    monkeypatch.setattr(files, "MAP_BYTES", 1)
    with pytest.raises(InputError, match="damaged ELF file") as raised:
        expand_host(read_input(str(cut)))
    assert raised.value.path == str(cut)
