"""The binary readers on real compiler output, directly: zebin, .ze_info, fat binaries, offload
objects, patch-token binaries and SPIR-V.

The fixtures are the fuzz corpus (tests/fuzz/corpus/): files ocloc and the LLVM offload tools
wrote, not hand-made bytes.  Each expectation is read from the file itself by another route
(pyelftools and PyYAML for ELF and YAML, the ar format's own headers, the SPIR-V words) or
follows from NEO's rules on what was read; damaged files must fail with zeinspect's own
one-line error.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import yaml
from elftools.elf.elffile import ELFFile

from zeinspect.errors import FormatError
from zeinspect.inputs.fatbin import read_members
from zeinspect.inputs.kinds import InputKind
from zeinspect.inputs.offload import find_images
from zeinspect.inputs.patchtokens import read_patchtoken_binary
from zeinspect.inputs.spirv import MODE_SUBGROUP_SIZE, OP_EXECUTION_MODE, read_module
from zeinspect.inputs.strict_yaml import load_yaml_strictly
from zeinspect.inputs.zebin import read_zebin
from zeinspect.inputs.zeinfo import derive_kernels
from zeinspect.levers.sub_group import set_sub_group

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus"


def _bytes(kind: str, name: str) -> bytes:
    return (CORPUS / kind / name).read_bytes()


def _zeinfo(data: bytes) -> dict:
    """The .ze_info document, by pyelftools and PyYAML."""
    import io

    return yaml.safe_load(ELFFile(io.BytesIO(data)).get_section_by_name(".ze_info").data())


@pytest.mark.parametrize("name", ["new-clean", "new-sg32", "old-clean", "old-sg32"])
def test_a_zebins_kernels_and_figures_are_its_ze_info_read_by_neos_rules(name):
    data = _bytes("zebin", name)
    zebin = read_zebin(data, name)
    doc = _zeinfo(data)
    assert f"{zebin.zeinfo_version[0]}.{zebin.zeinfo_version[1]}" == doc["version"]
    assert [k.name for k in zebin.kernels] == [k["name"] for k in doc["kernels"]]
    for fig, kernel in zip(zebin.kernels, doc["kernels"]):
        env = kernel["execution_env"]
        assert fig.simd == env["simd_size"] and fig.grf == env["grf_count"]
        buffers = kernel.get("per_thread_memory_buffers", [])
        if zebin.zeinfo_version >= (1, 39):
            spill = env.get("spill_size", 0)
        else:  # scratch slot 0 is spill before 1.39
            spill = next((b["size"] for b in buffers if b["type"] == "scratch" and b.get("slot", 0) == 0), 0)
        assert fig.spill_bytes == spill


def test_the_spilling_corpus_kernel_spills_and_the_clean_one_does_not():
    assert read_zebin(_bytes("zebin", "new-sg32"), "x").kernels[0].spill_bytes > 0
    assert read_zebin(_bytes("zebin", "new-clean"), "x").kernels[0].spill_bytes == 0


def test_a_damaged_zebin_is_a_format_error():
    with pytest.raises(FormatError):
        read_zebin(_bytes("zebin", "regression-compressed-section"), "damaged")
    with pytest.raises(FormatError):
        read_zebin(_bytes("zebin", "new-sg32")[:200], "truncated")


@pytest.mark.parametrize("name", ["new-sg32", "old-sg32", "new-clean", "old-clean"])
def test_ze_info_documents_give_their_version_and_kernels(name):
    text = (CORPUS / "zeinfo" / name).read_bytes()
    doc = load_yaml_strictly(text, name)
    version, kernels = derive_kernels(doc, xe_hp_or_later=True)
    assert f"{version[0]}.{version[1]}" == yaml.safe_load(text)["version"]
    assert [k.name for k in kernels] == [k["name"] for k in doc["kernels"]]
    assert all(k.simd == d["execution_env"]["simd_size"] for k, d in zip(kernels, doc["kernels"]))


def _ar_members(data: bytes) -> list[tuple[str, int]]:
    """(name, size) of each member, from the ar format's own 60-byte headers."""
    assert data[:8] == b"!<arch>\n"
    out, at = [], 8
    while at + 60 <= len(data):
        header = data[at:at + 60]
        name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58].decode().strip())
        out.append((name, size))
        at += 60 + size + (size & 1)
    return out


def test_a_fat_binarys_members_are_its_archive_entries():
    data = _bytes("fatbin", "fat-clean")
    members = read_members(data, "fat")
    # ocloc aligns members with `pad_N` entries, which hold no binary.
    assert [(m.name, len(m.data)) for m in members] == [e for e in _ar_members(data) if not e[0].startswith("pad_")]
    # ocloc names each member by its IP version, and each is a zebin for that IP.
    for m in members:
        assert m.name.endswith(m.ip) and read_zebin(m.data, m.name).ip == m.ip


@pytest.mark.parametrize("name, kinds", [("old-model.o", [InputKind.ZEBIN, InputKind.SPIRV]),
                                         ("new-model.o", [InputKind.ZEBIN])])
def test_offload_objects_give_their_embedded_images_byte_for_byte(name, kinds):
    data = _bytes("offload", name)
    images = find_images(data, name)
    assert [i.kind for i in images] == kinds
    for img in images:
        assert data.find(img.data) >= 0  # uncompressed images are the file's own bytes
        if img.kind == InputKind.ZEBIN:
            assert read_zebin(img.data, name).kernels
        if img.kind == InputKind.SPIRV:
            assert struct.unpack_from("<I", img.data)[0] == 0x07230203


def test_a_file_that_is_not_elf_has_no_images():
    with pytest.raises(FormatError):
        find_images(b"not an object file", "x.o")


def test_a_legacy_patch_token_binary_names_its_kernel():
    family, kernels = read_patchtoken_binary(_bytes("patchtokens", "legacy-clean"), "legacy")
    assert family and [k.name for k in kernels] == ["saxpy"] and kernels[0].spill_bytes == 0
    with pytest.raises(FormatError):
        read_patchtoken_binary(_bytes("patchtokens", "regression-zlib-section"), "damaged")


def test_spirv_entry_points_and_their_required_sub_group_size():
    clean = read_module(_bytes("spirv", "clean"), "clean")
    sg32 = read_module(_bytes("spirv", "sg32"), "sg32")
    assert clean.kernel_names() == ["saxpy"] and sg32.kernel_names() == ["sg32_accumulate"]
    [(fid, _)] = sg32.entry_points()
    modes = [i.operands for i in sg32.instructions if i.opcode == OP_EXECUTION_MODE
             and i.operands[:2] == (fid, MODE_SUBGROUP_SIZE)]
    assert modes == [(fid, MODE_SUBGROUP_SIZE, 32)] and sg32.required_sub_group_size(fid) == 32
    [(clean_fid, _)] = clean.entry_points()
    assert clean.required_sub_group_size(clean_fid) is None


def test_a_sub_group_rewrite_reads_back_as_written():
    data = _bytes("spirv", "sg32")
    for size in (16, 0):
        module = read_module(set_sub_group(data, "sg32_accumulate", size), "rewritten")
        [(fid, _)] = module.entry_points()
        assert module.required_sub_group_size(fid) == (size or None)
    with pytest.raises(FormatError):
        read_module(data[:19], "truncated")


def test_what_is_not_a_sycl_cache_entry_is_not_taken_for_one():
    """inputs.sycl_cache: only four length-prefixed items that use the whole file, the first two
    text, are an entry (its real entries: tests/integration/inputs/test_sycl_cache.py)."""
    import random
    import struct

    from zeinspect.inputs.sycl_cache import read_entry

    spirv = (CORPUS / "spirv" / "clean").read_bytes()
    assert read_entry(spirv) is None
    assert read_entry(b"") is None
    rng = random.Random(7)
    for _ in range(200):
        assert read_entry(bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))) is None
    past_the_end = struct.pack("<Q", 1 << 40) + b"x" * 64
    assert read_entry(past_the_end) is None


def test_an_offload_binary_image_declares_its_own_kernels():
    """The new offload model's entries carry options, not the runtime's table of kernels: the
    image itself declares them (the ledger)."""
    from zeinspect.inputs import host_info, iter_host_images, read_input

    path = CORPUS / "offload" / "new-model.o"
    info = host_info()
    list(iter_host_images(read_input(str(path)), [], info))
    native = [p for p in info["parts"] if p.declared_by != "SYCL offload entries"]
    assert native and all(p.kernels for p in native if p.unread is None and p.excluded is None)
