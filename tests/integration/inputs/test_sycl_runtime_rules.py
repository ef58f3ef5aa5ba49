"""SYCL images as the SYCL runtime builds them, on oneMKL's real sparse library.

The library comes from the package index (pip, bench/wheels.py), never from this project.
Each test takes the images that carry one rule and checks what zeinspect says against what
the compiler itself says about the same image:
- `reqd_sub_group_size 8`: not applicable where the compiler refuses sub-group size 8 (and
  the direct build there fails with that refusal), built where it accepts it;
- ESIMD (`isEsimdImage`): built with -vc-codegen; the VC back end's scratch is the spill the
  build log states, and it is never reported as 0;
- `sycl-grf-size: 256` on an ESIMD image: -doubleGRF.  The one real image with that property
  (in LAPACK) takes 48 s to compile, so it is in bench/realworld.py; here the property is
  set on a real ESIMD image that spills at 128 registers;
- aspect 73 (ext_oneapi_atomic16 in libsycl.so.9): not applicable, and built anyway the
  report keeps the compiler's own words.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
import wheels

from zeinspect.app.session import open_session
from zeinspect.inputs import Input
from zeinspect.inputs.buildlog import compiler_lines
from zeinspect.inputs.kinds import InputKind
from zeinspect.inputs.offload import find_images
from zeinspect.model import Status
from zeinspect.probes.aot import probe as aot_probe
from zeinspect.settings import Settings
from zeinspect.toolchain.knowledge import sub_group_sizes
from zeinspect.toolchain.requirements import check

ROOT = Path(__file__).resolve().parents[3]
SPARSE = ("onemkl-sycl-sparse", "2026.2.0", "libmkl_sycl_sparse.so")
ESIMD_SPILL = "dcompute_gemm_esimd_opt_kernel_i4_bufILi64EEE"


@pytest.fixture(scope="module")
def sparse():
    path = wheels.library(*SPARSE)
    images = [i for i in find_images(path.read_bytes(), str(path)) if i.info is not None and i.data]
    assert images and all(i.info.sycl_abi == 9 for i in images)  # the host needs libsycl.so.9
    return images


def probe(inputs, config: Settings):
    return aot_probe(inputs, config, open_session(config))


def _input(img, name: str, info=None) -> Input:
    return Input(path=name, kind=InputKind.SPIRV, data=img.data, image=info if info is not None else img.info)


def _smallest(images, pred):
    return min((i for i in images if pred(i.info)), key=lambda i: len(i.data))


def _zeinfo(zebin: Path) -> dict:
    """The .ze_info document, read independently of zeinspect (pyelftools and PyYAML)."""
    import yaml
    from elftools.elf.elffile import ELFFile

    with zebin.open("rb") as f:
        return yaml.safe_load(ELFFile(f).get_section_by_name(".ze_info").data())


def _ocloc(compiler, img, tmp: Path, target: str, options: str = "") -> tuple[int, str, Path]:
    (tmp / "image.spv").write_bytes(img.data)
    argv = [compiler.path, "compile", "-file", "image.spv", "-spirv_input", "-device", target, "-out_dir", "out",
            "-output", "k"] + (["-options", options] if options else [])
    run = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
    return run.returncode, run.stdout + run.stderr, tmp / "out"


def test_a_sub_group_size_the_compiler_refuses_makes_the_image_not_applicable(sparse, sid_compiler, tmp_path):
    img = _smallest(sparse, lambda x: x.requirements.reqd_sub_group_size == 8 and not x.aspects and not x.is_esimd)
    offered = {t: sub_group_sizes(sid_compiler, t) for t in ("bmg-g21", "tgllp")}
    assert 8 not in offered["bmg-g21"] and 8 in offered["tgllp"]  # the premise, by the compiler's word
    code, log, _ = _ocloc(sid_compiler, img, tmp_path, "bmg-g21")
    assert code != 0 and "subgroup size 8" in log  # built anyway, it fails there
    res = probe([_input(img, "sg8")], Settings(targets=("bmg-g21", "tgllp"), compiler=sid_compiler.id))
    by = {r.target: r for r in res.reports}
    sizes = ", ".join(map(str, offered["bmg-g21"]))
    assert by["bmg-g21"].status is Status.NOT_APPLICABLE
    assert by["bmg-g21"].unmet_requirements == (f"reqd_sub_group_size 8 (target offers {sizes})",)
    assert by["tgllp"].status is Status.OK and by["tgllp"].simd == 8
    builds = res.stats.compiles + res.stats.cache_hits + res.stats.shared
    assert builds == 1  # tgllp's build alone: the pair that is not applicable costs no compile


def test_every_sub_group_requirement_of_the_library_is_judged_by_the_rule(sparse, sid_compiler):
    """No compile: the whole library's images against bmg-g21's sub-group sizes."""
    ip = sid_compiler.ips("bmg-g21")[0]
    offered = sub_group_sizes(sid_compiler, "bmg-g21")
    for img in sparse:
        found = check(img.info, "bmg-g21", ip, [sid_compiler])
        size = img.info.requirements.reqd_sub_group_size
        should = size is not None and size not in offered and not img.info.is_esimd
        assert any(u.startswith("reqd_sub_group_size") for u in found.unmet) == should, img.info.entries


def test_an_esimd_image_is_built_by_the_vc_back_end_and_its_scratch_is_spill(sparse, sid_compiler, tmp_path):
    img = next(i for i in sparse if i.info.is_esimd and any(ESIMD_SPILL in e for e in i.info.entries))
    res = probe([_input(img, "esimd")], Settings(targets=("bmg-g21",), compiler=sid_compiler.id))
    [report] = res.reports
    assert report.status is Status.OK and "-vc-codegen" in report.options.split()
    # The compiler's own two words on the same build: its log and its .ze_info.
    code, log, out = _ocloc(sid_compiler, img, tmp_path, "bmg-g21", "-vc-codegen")
    assert code == 0
    stated = int(re.search(r"Spill memory used = (\d+) bytes", log)[1])
    zeinfo = _zeinfo(next(out.glob("*.bin")))
    [buffer] = [b for k in zeinfo["kernels"] for b in k.get("per_thread_memory_buffers", [])
                if b["type"] == "scratch"]
    assert buffer["usage"] == "single_space" and "spill_size" not in zeinfo["kernels"][0]["execution_env"]
    assert stated > 0 and report.spill_bytes == stated == buffer["size"]
    assert report.uses_scratch


def test_the_grf_size_property_builds_an_esimd_image_with_the_large_register_file(sparse, sid_compiler):
    img = next(i for i in sparse if i.info.is_esimd and any(ESIMD_SPILL in e for e in i.info.entries))
    props = {**img.info.properties,
             "SYCL/misc properties": {**img.info.properties["SYCL/misc properties"], "sycl-grf-size": 256}}
    large = dataclasses.replace(img.info, properties=props)
    res = probe([_input(img, "plain"), _input(img, "large", large)],
                Settings(targets=("bmg-g21",), compiler=sid_compiler.id))
    plain, big = sorted(res.reports, key=lambda r: r.input != "plain")
    assert "-doubleGRF" in big.options.split() and "-doubleGRF" not in plain.options.split()
    assert (plain.grf, big.grf) == (128, 256)
    assert plain.spill_bytes > 0 and big.spill_bytes < plain.spill_bytes
    assert not any("Spill memory used" in line for line in big.log) == (big.spill_bytes == 0)


def test_an_aspect_the_level_zero_device_never_has_makes_the_image_not_applicable(sparse, sid_compiler, tmp_path):
    img = _smallest(sparse, lambda x: 73 in x.aspects)
    res = probe([_input(img, "atomic16")], Settings(targets=("bmg-g21",), compiler=sid_compiler.id))
    [report] = res.reports
    assert report.status is Status.NOT_APPLICABLE
    assert "aspect ext_oneapi_atomic16" in report.unmet_requirements and "cl_ext_float_atomics" in report.reason
    # Built anyway (as a bare SPIR-V module), it fails, and the report keeps the compiler's words.
    code, log, _ = _ocloc(sid_compiler, img, tmp_path, "bmg-g21", "-ze-opt-level=2")
    assert code != 0
    words = compiler_lines(log)
    assert words
    bare = Input(path="bare", kind=InputKind.SPIRV, data=img.data)
    [forced] = probe([bare], Settings(targets=("bmg-g21",), compiler=sid_compiler.id)).reports
    assert forced.status is Status.BUILD_FAILED and words[0].strip() in forced.reason


def test_the_aspect_tables_are_the_runtimes_own():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "sycl_aspects.py"), "--check",
                          "--wheel-dir", str(wheels.store())], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
