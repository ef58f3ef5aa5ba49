"""The fix loop on products (issue 46): a library searched image by image, one compile of the
image per shape; each decision checked against a plain ocloc build of the same image in the
chosen shape (tests/oracle.py: ocloc, binutils, PyYAML, not zeinspect's readers); native
images searched from their `generic_ir` member; the records read back by the audit.

Real libraries come from the package index at test time (oneMKL's RNG, vLLM's kernels); the
round trip of records and ratchet lines uses a SYCL-style library built here from the corpus.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import oracle
import pytest
import sycl_builds as sb
import wheels
import yaml
from conftest import KERNELS

from zeinspect.inputs import read_input

BIG_PRIVATE = """__kernel void big_private(__global const float* in, __global const uint* idx, __global float* out) {
  float a[2048];
  for (int i = 0; i < 2048; i++) a[i] = in[i];
  out[get_global_id(0)] = a[idx[get_global_id(0)] & 2047];
}
"""
RNG_IMAGES = (".tgtimg[1594]", ".tgtimg[1075]")
"""Two of oneMKL RNG's SPIR-V images whose kernel spills on bmg-g21 as the runtime builds it
(and needs fp64, which dg2-g10 lacks: not applicable there)."""


def _fix(cli, *args):
    res = cli("fix", *map(str, args), "-q", "--json")
    assert res.code == 0, res
    return json.loads(res.out)


def _oracle_scratch(compiler, spirv: bytes, kernel_fid: str | None, sub_group: int | None, options: str,
                    device: str, tmp: Path) -> dict:
    """A plain ocloc build of the module in a shape: the sub-group size set by spirv-dis and
    spirv-as (OpExecutionMode SubgroupSize, what reqd_sub_group_size compiles to), the register
    file by its option; the figures by the oracle's own reader."""
    path = tmp / "module.spv"
    path.write_bytes(spirv)
    if sub_group:
        text = subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout
        lines = text.splitlines()
        at = max(i for i, line in enumerate(lines) if "OpEntryPoint" in line)
        lines.insert(at + 1, f"OpExecutionMode {kernel_fid} SubgroupSize {sub_group}")
        if "OpCapability SubgroupDispatch" not in text:
            lines.insert(next(i for i, line in enumerate(lines) if "OpCapability" in line),
                         "OpCapability SubgroupDispatch")
        (tmp / "module.spvasm").write_text("\n".join(lines) + "\n")
        subprocess.run(["spirv-as", "--target-env", "spv1.4", str(tmp / "module.spvasm"), "-o", str(path)],
                       check=True, capture_output=True)
    built = oracle.ocloc(compiler, path, device, options, spirv=True)
    assert built.binary is not None, built.log
    return oracle.driver_figures(built.binary, True)


@pytest.mark.slow
def test_oneMKL_RNG_decisions_match_plain_builds_of_the_image(cli, sid_compiler, tmp_path):
    library = wheels.library("onemkl-sycl-rng", "2026.2.0", "libmkl_sycl_rng.so")
    images = [f"{library}[{image}]" for image in RNG_IMAGES]
    doc = _fix(cli, *images, "-t", "dg2-g10,bmg-g21", "--compiler", sid_compiler.id,
               "--write", tmp_path / "shapes.yaml")
    # One compile of each image per shape (and the image as written), never one per kernel.
    assert all(i["source"] == "SPIR-V" and 1 < i["compiles"] <= 16 for i in doc["images"])
    assert any(i["not_tried"] for i in doc["images"])  # shapes that cannot change a kernel are named
    members = [m for f in doc["families"] for m in f["members"]]
    assert members and all(m["cleans"] for m in members)
    recorded = yaml.safe_load((tmp_path / "shapes.yaml").read_text())["modules"]
    checked = 0
    for m in members:
        image = read_input(m["image"])
        shape = m["shape"]
        record = recorded[m["image"]]["kernels"][m["kernel"]]
        plain = json.loads(cli("inspect", m["image"], "-t", "bmg-g21", "--compiler", sid_compiler.id, "--json",
                               "-q").out)
        [report] = [r for r in plain["reports"] if r["kernel"] == m["kernel"]]
        options = report["options"] + (" -ze-opt-large-register-file" if shape["grf"] == "256" else "")
        fid = next(line.split()[2] for line in subprocess.run(
            ["spirv-dis", "-"], input=image.data, capture_output=True, check=True).stdout.decode().splitlines()
            if "OpEntryPoint" in line and f'"{m["kernel"]}"' in line)
        truth = _oracle_scratch(sid_compiler, image.data, fid, shape["sub_group"], options, "bmg-g21", tmp_path)
        got = record["results"]["bmg-g21"]
        assert (got["spill_bytes"], got["private_bytes"]) == (truth[m["kernel"]]["spill"], truth[m["kernel"]]["private"])
        assert report["spill_bytes"] > 0 and got["spill_bytes"] == 0  # as written it spills; its shape does not
        checked += 1
    assert checked == len(members)
    # dg2-g10 lacks fp64: the images are not applicable there, and no shape is judged on it.
    assert all(f["targets"]["dg2-g10"]["scratch_before"] == 0 for f in doc["families"])


@pytest.mark.slow
def test_vllm_native_images_are_searched_from_their_generic_ir(cli, sid_compiler, tmp_path):
    wheel = wheels.wheel("vllm-xpu-kernels", "0.1.16.2")
    # One image of the library (its third, whose chunked-inverse kernels spill at 128 registers):
    # the whole library's five take four times as long and show nothing more.
    member = f"{wheel}!vllm_xpu_kernels/libgdn_attn_kernels_xe_2.so[.tgtimg[2]]"
    doc = _fix(cli, member, "-t", "bmg-g21", "--compiler", sid_compiler.id)
    assert doc["images"] and all(i["source"] == "generic_ir" for i in doc["images"])
    users = [m for f in doc["families"] for m in f["members"]]
    assert users and any(m["cleans"] for m in users)
    family = next(f for f in doc["families"] if f["cleaned"])
    assert family["shape"] is not None and family["change"]
    # The change named is checked: the generic_ir member's SPIR-V, built with the options its native
    # members were built with and the register file's option, gives the chosen shape's figures.
    from zeinspect.inputs.fatbin import generic_ir, read_members

    m = family["members"][0]
    image = read_input(m["image"].removesuffix("(generic_ir)"))
    spirv, options = generic_ir(next(x for x in read_members(image.data) if x.entry == "generic_ir").data)
    assert family["shape"]["grf"] == "256" and "grf_size<256>" in family["change"][0]
    truth = _oracle_scratch(sid_compiler, spirv, None, None, f"{options} -ze-opt-large-register-file", "bmg-g21",
                            tmp_path)
    assert truth[m["kernel"]]["spill"] == 0 and truth[m["kernel"]]["private"] == 0


def test_a_native_only_image_says_so(cli, sid_compiler, tmp_path):
    built = oracle.ocloc(sid_compiler, KERNELS / "sg32_accumulate.cl", "bmg-g21")
    zebin = tmp_path / "sg32.bin"
    zebin.write_bytes(built.binary)
    doc = _fix(cli, zebin, "-t", "bmg-g21", "--compiler", sid_compiler.id)
    [image] = doc["images"]
    assert image["source"] == "native-only" and "-ze-opt-large-register-file" in image["note"]


def test_records_and_ratchet_lines_make_the_audit_of_the_library_pass(cli, sid_compiler, tmp_path):
    """A library whose images hold a kernel a shape cleans and one no shape cleans (a private
    array of 8 KiB indexed by loaded values: no register file holds it): the fix records the
    shapes, writes the ratchet line with its reason, and the audit in the recorded shapes passes
    on that ratchet; a second run reads it all back."""
    (tmp_path / "big_private.cl").write_text(BIG_PRIVATE)
    spill = sb.spirv_of(sid_compiler, KERNELS / "sg32_accumulate.cl", tmp_path)
    private = sb.spirv_of(sid_compiler, tmp_path / "big_private.cl", tmp_path)
    lib = sb.sycl_library(tmp_path, [{"data": spill, "entries": ["sg32_accumulate"]},
                                     {"data": private, "entries": ["big_private"]}])
    shapes, ratchet = tmp_path / "shapes.yaml", tmp_path / "ratchet.txt"
    targets = ("-t", "tgllp,bmg-g21", "--compiler", sid_compiler.id)
    doc = _fix(cli, lib, *targets, "--write", shapes, "--ratchet-lines", ratchet)
    causes = {f["family"]: f for f in doc["families"]}
    assert causes["sg32_accumulate"]["cleaned"] == 1 and causes["sg32_accumulate"]["change"]
    left = causes["big_private"]
    assert left["cleaned"] == 0 and left["cause"] == "private_arrays"
    assert "private arrays of 8192 bytes, indexed by values known only at run time" in left["reason"]
    lines = [line for line in ratchet.read_text().splitlines() if not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith("big_private  *  ") and left["reason"] in lines[0]
    res = cli("audit", lib, *targets, "--shapes", shapes, "--ratchet", ratchet, "-q")
    assert res.code == 0 and "gate passed" in res.out, res
    again = _fix(cli, lib, *targets)
    assert again["families"] == doc["families"]


@pytest.mark.parametrize("grf, option", [("256", "-ze-opt-large-register-file"),
                                         ("auto", "-ze-intel-enable-auto-large-GRF-mode")])
def test_the_kernel_property_a_fix_names_is_what_the_runtime_turns_into_the_shapes_option(grf, option):
    """`grf_size<256>` becomes the image property sycl-grf-size 256, which the SYCL runtime turns
    into the very option the search built with (program_manager, as inputs.sycl_image encodes it)."""
    from zeinspect.inputs.sycl_image import options_for_target
    from zeinspect.judge.families import SYCL_GRF
    from zeinspect.model import GrfMode

    words, _ = options_for_target("", "", ("bmg-g21",), grf_size=GrfMode(grf))
    assert words == [option] and SYCL_GRF[GrfMode(grf)][2] == option
