"""Nothing lost without saying so: every kernel a SYCL library declares is reported, excluded for
a named reason, or fails the run (exit 3) and the gate.

The library is built the way `--offload-compress` builds one (tests/sycl_builds.py): zstd frames
with the descriptor around the compressed bytes and the `.tgtimg` record giving the size before
compression, the record that made zeinspect skip such images as "past the end of the file".
The declared count is checked against a second reading that shares no code with zeinspect's:
binutils for the section, the zstd library for the frames, SPIRV-Tools for the entry points.
A real library built so (bitsandbytes' XPU build, from the package index) is the slow test.
"""

from __future__ import annotations

import json

import oracle
import pytest
import sycl_builds as sb
import wheels
import zstandard
from conftest import KERNELS

TARGET = "bmg-g21"
SPIRV_SECTION = sb.SPIRV


@pytest.fixture(scope="module")
def modules(sid_compiler, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ledger")
    (tmp / "two.cl").write_text("__kernel void add_one(__global int* x) { x[get_global_id(0)] += 1; }\n"
                                "__kernel void twice(__global int* x) { x[get_global_id(0)] *= 2; }\n")
    return {"tmp": tmp, "spill": sb.spirv_of(sid_compiler, KERNELS / "sg32_accumulate.cl", tmp),
            "two": sb.spirv_of(sid_compiler, tmp / "two.cl", tmp)}


def _library(modules, name, damaged=False):
    two = {"data": modules["two"], "entries": ["add_one", "twice"]}
    if damaged:
        frame = zstandard.ZstdCompressor(level=10).compress(modules["two"])
        two["stored"] = frame[:len(frame) // 2]  # a frame cut short: its end never comes
    return sb.sycl_library(modules["tmp"], [{"data": modules["spill"], "entries": ["sg32_accumulate"]}, two],
                           name=name, compress=True)


def test_compressed_images_are_read_as_the_runtime_reads_them(modules):
    from zeinspect.inputs.offload import find_images

    lib = _library(modules, "libcompressed")
    images = find_images(lib.read_bytes(), "lib")
    assert [(i.kind, i.compression, i.info.format) for i in images] == [("spirv", "zstd", "compressed_none")] * 2
    # The record gives the size before compression; the bytes decoded are the module itself.
    assert [i.expanded_size for i in images] == [len(modules["spill"]), len(modules["two"])]
    assert [i.data for i in images] == [modules["spill"], modules["two"]]
    assert all(i.size < i.expanded_size for i in images)  # the extent on disk is the frame's, not the record's


def test_every_declared_kernel_is_reported_and_the_count_is_the_images_own(cli, sid_compiler, modules):
    lib = _library(modules, "libcompressed")
    code, doc = cli.json("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id)
    assert code == 0, doc["incidents"]
    independent = oracle.compressed_spirv_kernels(lib, SPIRV_SECTION)
    assert independent == {"sg32_accumulate", "add_one", "twice"}
    total = doc["coverage"]["total"]
    assert total["declared"] == len(independent) == total["reported"] and total["unread"] == 0
    assert {r["kernel"] for r in doc["reports"]} == independent
    text = cli("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id).out.splitlines()
    assert text[1] == "3 kernels declared: 3 reported"


def test_a_kernel_left_unread_exits_3_names_the_image_and_why_and_fails_the_gate(cli, sid_compiler, modules,
                                                                                 tmp_path):
    lib = _library(modules, "libdamaged", damaged=True)
    res = cli("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id)
    assert res.code == 3, res
    assert "3 kernels declared: 1 reported, 2 UNREAD" in res.out
    assert f"{lib}[.tgtimg[1]]: 2 declared kernels unread (truncated zstd frame)" in res.err
    assert "add_one" in res.err and "twice" in res.err
    doc = json.loads(cli("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id, "--json").out)
    [part] = [p for i in doc["coverage"]["inputs"] for p in i["parts"] if p["unread_kernels"]]
    assert set(part["unread_kernels"]) == {"add_one", "twice"} and part["declared_by"] == "SYCL offload entries"

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    gate = cli("audit", lib, "-t", TARGET, "--compiler", sid_compiler.id, "--ratchet", empty)
    assert gate.code == 3 and "gate failed (2 declared kernels unread)" in gate.out, gate
    audit = json.loads(cli("audit", lib, "-t", TARGET, "--compiler", sid_compiler.id, "--ratchet", empty,
                           "--format", "json").out)
    assert audit["passed"] is False and audit["coverage"]["total"]["unread"] == 2

    # Listed as unreadable, with a reason: the gate passes and says so.
    accepted = tmp_path / "accepted.txt"
    accepted.write_text("add_one  *  unreadable  # the vendor's frame; tracked upstream\n"
                        "twice  *  unreadable  # the vendor's frame; tracked upstream\n")
    gate = cli("audit", lib, "-t", TARGET, "--compiler", sid_compiler.id, "--ratchet", accepted)
    assert gate.code == 0, gate
    assert "2 excluded (listed as unreadable in the ratchet)" in gate.out and "gate passed" in gate.out


@pytest.mark.slow  # a real library from the package index
def test_a_real_compressed_sycl_library_is_read_whole(cli, sid_compiler):
    """bitsandbytes 0.50.2's XPU build: every image a zstd frame whose .tgtimg record gives the
    decompressed size (3 of 6 images were skipped, 9 of 14 kernels unread, exit 0)."""
    lib = wheels.library("bitsandbytes", "0.50.2", "libbitsandbytes_xpu2025")
    code, doc = cli.json("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id)
    assert code in (0, 1), doc["incidents"]
    independent = oracle.compressed_spirv_kernels(lib)
    total = doc["coverage"]["total"]
    assert total["declared"] == len(independent) == total["reported"] == 14
    assert total["unread"] == 0 and not doc["incidents"]
    assert {r["kernel"] for r in doc["reports"]} == independent
    # Its native images are for other devices than the one asked for: left out, and said so.
    natives = [p for i in doc["coverage"]["inputs"] for p in i["parts"] if not p["reported"]]
    assert natives and all(set(p["excluded_kernels"].values()) == {"a native image for targets not asked for"}
                           for p in natives)


@pytest.mark.slow  # a real library from the package index, one image built by the oracle
def test_stack_calls_name_their_callees_as_the_zebin_does(cli, sid_compiler, tmp_path):
    """bitsandbytes' bf16 kernels call the SYCL device library's bf16 conversions, which the
    runtime links in at load time: IGC keeps them as stack calls, and the zebin's relocations
    name them (read here with binutils' readelf, not zeinspect's reader)."""
    import re
    import subprocess

    lib = wheels.library("bitsandbytes", "0.50.2", "libbitsandbytes_xpu2025")
    assert cli("extract", lib, "-o", tmp_path / "x").code == 0
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())["images"]
    image = next(i for i in manifest if i.get("kind") == "spirv" and any("gemv" in e for e in i["sycl"]["entries"]))
    built = oracle.ocloc(sid_compiler, tmp_path / "x" / image["file"], TARGET, spirv=True,
                         options=image["sycl"]["compile_options"].split("-options", 1)[-1])
    assert built.binary is not None, built.log[-2000:]
    (tmp_path / "k.bin").write_bytes(built.binary)
    dump = subprocess.run(["readelf", "-rW", tmp_path / "k.bin"], capture_output=True, text=True).stdout
    called: dict[str, set[str]] = {}
    for section in re.split(r"\nRelocation section '", dump)[1:]:
        kernel = section.split("'", 1)[0].removeprefix(".rel.text.")
        called[kernel] = {line.split()[-1] for line in section.splitlines()[2:] if line.strip()
                          and not line.split()[-1].startswith("__INTEL_PATCH")}
    stack = {k["name"] for k in oracle.zeinfo(built.binary)["kernels"] if k["execution_env"].get("has_stack_calls")}
    assert stack, "no kernel of the image makes stack calls any more: this test needs another"
    doc = json.loads(cli("inspect", f"{lib}[{image['source']}]", "-t", TARGET, "--compiler", sid_compiler.id,
                         "--json").out)
    assert {r["kernel"] for r in doc["reports"] if r["stack_calls"]} == stack
    # IGC's retries, as its log says them: the same count in the reports (and per image).
    said = sum(1 for line in built.log.splitlines() if "[RetryManager] Start recompilation" in line)
    assert said and sum(r["retries"] for r in doc["reports"]) == said
    [timed] = doc["compile_times"]
    assert timed["retries"] == said and timed["seconds"] > 0
    for r in doc["reports"]:
        if r["stack_calls"]:
            assert set(r["callees"]) == called[r["kernel"]] and r["callees"], r["kernel"]
            assert any("devicelib" in c for c in r["callees"])


@pytest.mark.slow  # a real library from the package index
def test_the_compiles_that_cost_the_build_most_are_ranked_with_igcs_retries(cli, sid_compiler):
    """bitsandbytes 0.50.2's XPU library on bmg-g21: the ranking is compile_times, the longest
    first, each row's retries the sum of its kernels' (IGC's [RetryManager] lines), and the bf16
    gemv kernel IGC builds twice is named in its row, in JSON and in text."""
    lib = wheels.library("bitsandbytes", "0.50.2", "libbitsandbytes_xpu2025")
    doc = json.loads(cli("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id, "--json").out)
    ranked, times = doc["build_cost"], doc["compile_times"]
    assert len(ranked) == min(10, len(times)) >= 2
    assert [r["seconds"] for r in ranked] == sorted((t["seconds"] for t in times), reverse=True)[:len(ranked)]
    for row in ranked:
        mine = [r for r in doc["reports"] if r["input"] == row["input"] and r["target"] == row["target"]]
        assert row["retries"] == sum(r["retries"] for r in mine) == sum(row["retried"].values())
        assert row["retried"] == {r["kernel"]: r["retries"] for r in mine if r["retries"]}
    retried = [row for row in ranked if row["retried"]]
    assert retried and any("gemv" in k for row in retried for k in row["retried"])
    text = cli("inspect", lib, "-t", TARGET, "--compiler", sid_compiler.id).out
    assert "build cost, the compiles that took longest" in text
    assert any("retries (kgemv_4bit_inference" in line for line in text.splitlines())


def test_bitcode_in_an_object_is_left_out_before_its_device_link_and_said_so(cli, tmp_path):
    """A fat object's LLVM bitcode bundle (a device library's, as intel-sycl-rt ships them) is
    linked into a program before anything runs: excluded with that reason, not unread."""
    src = tmp_path / "devicelib.c"
    src.write_text("int __devicelib_helper(int x) { return x + 1; }\n")
    sb.run(["clang-15", "-c", "-emit-llvm", src, "-o", tmp_path / "devicelib.bc"], tmp_path)
    obj = sb.host_object(tmp_path, "fat")
    out = tmp_path / "fat_with_bitcode.o"
    sb.run(["objcopy", f"--add-section={SPIRV_SECTION}={tmp_path / 'devicelib.bc'}", obj, out], tmp_path)
    code, doc = cli.json("inspect", out, "-t", TARGET)
    assert code == 0, doc["incidents"]
    assert doc["coverage"]["total"]["excluded_parts"] == {"LLVM bitcode in an object, before its device link": 1}
    assert doc["coverage"]["total"]["unread_parts"] == 0


def test_bitcode_in_a_new_driver_object_is_left_out_before_its_device_link(cli, tmp_path):
    """The new offload driver's object (`.llvm.offloading`, an OffloadBinary entry carrying its
    options but no descriptor table), as intel-sycl-rt 2025.3's `libsycl-*.new.o` device
    libraries are: linked before anything runs, so excluded with that reason, not unread."""
    src = tmp_path / "devicelib.c"
    src.write_text("int __devicelib_helper(int x) { return x + 1; }\n")
    sb.run(["clang-15", "-c", "-emit-llvm", src, "-o", tmp_path / "devicelib.bc"], tmp_path)
    pkg = tmp_path / "devicelib.pkg"
    sb.run(["clang-offload-packager-15", "-o", pkg,
            f"--image=file={tmp_path / 'devicelib.bc'},triple=spir64-unknown-unknown,arch=,kind=sycl"], tmp_path)
    obj = sb.new_model_object(tmp_path, pkg, "devicelib_new")
    code, doc = cli.json("inspect", obj, "-t", TARGET)
    assert code == 0, doc["incidents"]
    assert doc["coverage"]["total"]["excluded_parts"] == {"LLVM bitcode in an object, before its device link": 1}
    assert doc["coverage"]["total"]["unread_parts"] == 0


@pytest.mark.slow  # a real package from the package index
def test_a_runtime_package_of_device_libraries_is_accounted_without_unread_parts(cli):
    """dpcpp-cpp-rt 2024.0.2: host libraries without device images (skipped as holding none, not
    unread) and device-library objects whose bitcode is linked into programs later: no kernel
    declared, every image part excluded with its reason, exit 0 (it was 4 unread parts, exit 3)."""
    whl = wheels.wheel("dpcpp-cpp-rt", "2024.0.2", binary=True)
    code, doc = cli.json("inspect", whl, "-t", TARGET)
    total = doc["coverage"]["total"]
    assert code == 0, (doc["incidents"], total)
    assert total["unread"] == 0 and total["unread_parts"] == 0 and not doc["reports"]
    assert total["declared"] is None  # objects without descriptor tables: no kernel declared by name
    assert total["excluded_parts"].get("LLVM bitcode in an object, before its device link", 0) > 0
