"""Every path of a shipped kernel, compared, and the build's intent checked on each.

vllm-xpu-kernels#348's mechanism, on a kernel of this repository: the native image was built
with the large register file (the flag given at the AOT link step only), the SPIR-V image's
options lack it.  A library laid out as the SYCL toolchain lays one out (tests/sycl_builds.py)
holds both, the native image for bmg-g21 named as `-fsycl-targets=intel_gpu_bmg_g21` names it
(its `compile_target`); the device with a native image runs it, a device without one (lnl-m)
compiles the SPIR-V at the first launch, with 128 registers, and spills there.

Without a `compile_target` the runtime takes the native image on every GPU (probes.paths): the
driver rebuilds the zebin from its own SPIR-V where it carries it, and fails where it does not.
"""

from __future__ import annotations

import pytest
import sycl_builds as sb
from conftest import KERNELS
from oracle import driver_figures, ocloc
from published import validate

SOURCE = KERNELS / "fma_tile.cl"
FLAG = "-cl-intel-256-GRF-per-thread"
KERNEL = "fma_tile"


@pytest.fixture(scope="module")
def library(sid_compiler, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paths")
    native = ocloc(sid_compiler, SOURCE, "bmg-g21", FLAG)
    assert native.returncode == 0, native.log
    spirv = sb.spirv_of(sid_compiler, SOURCE, tmp)
    (tmp / "k.spv").write_bytes(spirv)
    lib = sb.sycl_library(tmp, [{"data": native.binary, "entries": [KERNEL], "spec": "spir64_gen",
                                 "compile_target": "intel_gpu_bmg_g21"},
                                {"data": spirv, "entries": [KERNEL]}], name="libpaths")
    return {"lib": lib, "native": native.binary, "spirv": tmp / "k.spv"}


def _inspect(cli, sid_compiler, library):
    return cli.json("inspect", library["lib"], "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id)[1]


def test_every_kernel_target_pair_names_its_path_and_each_build_is_the_compilers(cli, sid_compiler, library):
    doc = _inspect(cli, sid_compiler, library)
    rows = {(r["target"], r["path"]["via"]): r for r in doc["reports"] if r["kernel"] == KERNEL}
    # ocloc keeps the module's SPIR-V in the zebin (.spv): the driver's rebuild of it is a path too.
    assert set(rows) == {("bmg-g21", "native"), ("bmg-g21", "spirv"), ("lnl-m", "spirv"), ("bmg-g21", "native_ir"),
                         ("lnl-m", "native_ir")}
    # The runtime's choice: the native image on its compile_target, the SPIR-V image elsewhere.
    assert {key for key, r in rows.items() if r["path"]["taken"]} == {("bmg-g21", "native"), ("lnl-m", "spirv")}
    assert doc["paths"]["taken"] == {"native": 1, "spirv": 1}
    validate(doc, "report-1.json")
    # Each path's figures are the compiler's own: the native image's .ze_info, and a plain
    # ocloc build of the SPIR-V with the options the runtime gives it (none asks for a register file).
    truth = driver_figures(library["native"], True)[KERNEL]
    native = rows["bmg-g21", "native"]
    assert (native["grf"], native["simd"], native["spill_bytes"], native["private_bytes"]) == \
        (truth["grf"], truth["simd"], truth["spill"], truth["private"])
    for target in ("bmg-g21", "lnl-m"):
        r = rows[target, "spirv"]
        assert FLAG not in (r["options"] or "") and "-ze-opt-large-register-file" not in (r["options"] or "")
        built = ocloc(sid_compiler, library["spirv"], target, r["options"] or "", spirv=True)
        t = driver_figures(built.binary, True)[KERNEL]
        assert (r["grf"], r["simd"], r["spill_bytes"], r["private_bytes"]) == \
            (t["grf"], t["simd"], t["spill"], t["private"]), target


def test_the_lost_flag_and_the_spill_on_the_jit_targets_are_named(cli, sid_compiler, library):
    doc = _inspect(cli, sid_compiler, library)
    rows = {(r["target"], r["path"]["via"]): r for r in doc["reports"] if r["kernel"] == KERNEL}
    native, jit = rows["bmg-g21", "native"], rows["lnl-m", "spirv"]
    # The premise, from the compiler's figures: 256 registers and no spill natively, fewer and a spill by JIT.
    assert native["grf"] == 256 and native["spill_bytes"] == 0
    assert jit["grf"] < 256 and jit["spill_bytes"] > 0
    [grf] = [d for d in doc["paths"]["differences"] if d["kernel"] == KERNEL and d["aspect"] == "grf"
             and d["via"] == "spirv"]
    assert grf["native"] == [256] and grf["jit"] == [jit["grf"]]
    assert "ask for none" in grf["text"] and "on targets served by JIT lnl-m" in grf["text"]
    assert f"{jit['spill_bytes'] + jit['private_bytes']:,} B of scratch" in grf["text"]
    res = cli("inspect", library["lib"], "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id)
    assert "paths differ:" in res.out and "native images use 256 registers" in res.out


def test_a_declared_register_file_fails_the_gate_on_the_jit_path_unless_accepted(cli, sid_compiler, library, tmp_path):
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    # The scratch lines for what spills, so that only the intent is judged.
    assert cli("ratchet", "update", library["lib"], "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id,
               "--ratchet", ratchet, "--allow-grow").code == 0
    gate = tmp_path / "gate.yaml"
    gate.write_text(f"inputs: [{library['lib']}]\ntargets: [bmg-g21, lnl-m]\nratchet: {ratchet}\n"
                    f"compiler: {sid_compiler.id}\nintent:\n  {KERNEL}: {{grf: 256}}\n")
    res = cli("audit", "--config", gate)
    assert res.code == 1, res
    _, audited = cli.json("audit", "--config", gate)
    validate(audited, "audit-1.json")
    assert audited["paths"]["differences"]
    failing = [line for line in res.out.splitlines() if line.startswith("FAIL")]
    assert failing and all("INTENT" in line for line in failing), res.out
    assert any("lnl-m, spirv path" in line and "the intent is 256" in line for line in failing)
    assert not any("native path" in line for line in failing)  # the native image has what was asked
    # Without the rule, the same build passes: the finding is the rule's.
    gate.write_text(gate.read_text().split("intent:")[0])
    assert cli("audit", "--config", gate).code == 0
    # The ratchet accepts the exception, with its reason.
    gate.write_text(gate.read_text() + f"intent:\n  {KERNEL}: {{grf: 256}}\n")
    with ratchet.open("a") as fh:
        fh.write(f"{KERNEL} * intent  # the SPIR-V image is for devices we do not ship to\n")
    res = cli("audit", "--config", gate)
    assert res.code == 0, res.out


def test_native_on_names_a_target_served_by_jit(cli, sid_compiler, library, tmp_path):
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    assert cli("ratchet", "update", library["lib"], "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id,
               "--ratchet", ratchet, "--allow-grow").code == 0
    gate = tmp_path / "gate.yaml"
    gate.write_text(f"inputs: [{library['lib']}]\ntargets: [bmg-g21, lnl-m]\nratchet: {ratchet}\n"
                    f"compiler: {sid_compiler.id}\nintent:\n  {KERNEL}: {{native_on: [bmg-g21, lnl-m]}}\n")
    res = cli("audit", "--config", gate)
    assert res.code == 1
    failing = [line for line in res.out.splitlines() if line.startswith("FAIL")]
    assert len(failing) == 1 and "lnl-m" in failing[0] and "has no native image" in failing[0], res.out


@pytest.mark.slow
def test_a_real_library_names_every_path_and_its_generic_ir_builds_are_the_compilers(cli, sid_compiler, tmp_path):
    """vllm-xpu-kernels 0.1.16.2 from the package index: its fat binaries hold members for Xe-HPC
    and Xe2 dGPUs (bmg-g21's among them) and a generic_ir member; lnl-m has no member, so the
    driver compiles the generic_ir there."""
    import subprocess
    import zipfile

    import oracle
    import wheels

    wheel = wheels.wheel("vllm-xpu-kernels", "0.1.16.2")
    member = "vllm_xpu_kernels/libgdn_attn_kernels_xe_2.so"
    _, doc = cli.json("inspect", f"{wheel}!{member}[.tgtimg[2]]", "-t", "bmg-g21,lnl-m", "--compiler",
                      sid_compiler.id)
    reports = [r for r in doc["reports"] if r["status"] == "ok"]
    assert reports and all(r["path"] is not None for r in doc["reports"])
    pairs: dict = {}
    for r in doc["reports"]:
        pairs.setdefault((r["kernel"], r["target"]), []).append(r)
    # Every kernel-target pair names the one path the runtime takes there.
    assert all(sum(r["path"]["taken"] for r in rows) == 1 for rows in pairs.values())
    taken = {(k, t): next(r["path"]["via"] for r in rows if r["path"]["taken"]) for (k, t), rows in pairs.items()}
    assert set(taken.values()) == {"native", "generic_ir"}
    assert all(via == ("native" if t == "bmg-g21" else "generic_ir") for (_, t), via in taken.items())
    # The generic_ir builds (taken on lnl-m, built for comparison on bmg-g21) against plain builds of
    # the member's SPIR-V with its own build options, both read from the ELF by binutils.
    with zipfile.ZipFile(wheel) as z:
        (tmp_path / "lib.so").write_bytes(z.read(member))
    subprocess.run([*_zeinspect(), "extract", tmp_path / "lib.so", "-o", tmp_path / "x"], check=True, capture_output=True)
    subprocess.run(["ar", "x", tmp_path / "x" / "002-fatbin.ar", "generic_ir"], check=True, cwd=tmp_path)
    ir = (tmp_path / "generic_ir").read_bytes()
    (tmp_path / "g.spv").write_bytes(oracle.section_bytes(ir, "SPIRV Object"))
    options = oracle.section_bytes(ir, "BuildOptions").rstrip(b"\0").decode()
    checked = 0
    for target in ("bmg-g21", "lnl-m"):
        built = oracle.ocloc(sid_compiler, tmp_path / "g.spv", target, options, spirv=True)
        assert built.binary is not None, built.log
        truth = oracle.driver_figures(built.binary, True)
        for r in reports:
            if r["target"] == target and r["path"]["via"] == "generic_ir":
                t = truth[r["kernel"]]
                assert (r["grf"], r["simd"], r["spill_bytes"], r["private_bytes"]) == \
                    (t["grf"], t["simd"], t["spill"], t["private"]), (target, r["kernel"])
                checked += 1
    assert checked == sum(1 for r in reports if r["path"]["via"] == "generic_ir") > 0
    # The native path on bmg-g21: the member the driver loads there (64.20.1.0, bmg-g21's IP).
    subprocess.run(["ar", "x", tmp_path / "x" / "002-fatbin.ar", "64.20.1.0"], check=True, cwd=tmp_path)
    truth = oracle.driver_figures((tmp_path / "64.20.1.0").read_bytes(), True)
    native = [r for r in reports if r["path"]["via"] == "native"]
    assert native and all(r["target"] == "bmg-g21" for r in native)
    for r in native:
        t = truth[r["kernel"]]
        assert (r["grf"], r["simd"], r["spill_bytes"], r["private_bytes"]) == \
            (t["grf"], t["simd"], t["spill"], t["private"]), r["kernel"]


def _without_compile_target(sid_compiler, tmp, exclude_ir: bool):
    native = ocloc(sid_compiler, SOURCE, "bmg-g21", FLAG)
    binary = native.binary
    if exclude_ir:
        built = subprocess_ocloc(sid_compiler, tmp, ["-exclude_ir"])
        binary = built
    spirv = sb.spirv_of(sid_compiler, SOURCE, tmp)
    return sb.sycl_library(tmp, [{"data": binary, "entries": [KERNEL], "spec": "spir64_gen"},
                                 {"data": spirv, "entries": [KERNEL]}], name="libany"), binary


def subprocess_ocloc(compiler, tmp, extra):
    out = tmp / "excl"
    sb.run([compiler.path, "compile", "-file", SOURCE, "-device", "bmg-g21", "-options", FLAG, *extra,
            "-out_dir", out, "-output", "k"], tmp)
    return next(out.glob("*.bin")).read_bytes()


def test_without_compile_target_the_native_image_is_taken_everywhere_and_rebuilt_from_its_spirv(
        cli, sid_compiler, tmp_path):
    import oracle

    lib, zebin = _without_compile_target(sid_compiler, tmp_path, exclude_ir=False)
    _, doc = cli.json("inspect", lib, "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id)
    rows = {(r["target"], r["path"]["via"]): r for r in doc["reports"] if r["kernel"] == KERNEL}
    taken = {t: via for (t, via), r in rows.items() if r["path"]["taken"]}
    # On lnl-m the runtime selects the bmg-g21 zebin (urDeviceSelectBinary prefers spir64_gen) and
    # the driver rebuilds it from its .spv with its recorded options: not the SPIR-V image.
    assert taken == {"bmg-g21": "native", "lnl-m": "native_ir"}
    assert not rows["lnl-m", "spirv"]["path"]["taken"]
    # The rebuilt figures are a plain build of the zebin's own SPIR-V with its own options.
    (tmp_path / "own.spv").write_bytes(oracle.section_bytes(zebin, ".spv"))
    options = oracle.section_bytes(zebin, ".misc.buildOptions").rstrip(b"\0").decode().strip()
    assert FLAG in options
    truth = driver_figures(ocloc(sid_compiler, tmp_path / "own.spv", "lnl-m", options, spirv=True).binary, True)[KERNEL]
    r = rows["lnl-m", "native_ir"]
    assert (r["grf"], r["simd"], r["spill_bytes"], r["private_bytes"]) == \
        (truth["grf"], truth["simd"], truth["spill"], truth["private"])
    assert r["grf"] == 256 and r["spill_bytes"] == 0  # the recorded flag travels with the zebin's IR


def test_a_native_image_without_ir_on_another_device_is_no_path(cli, sid_compiler, tmp_path):
    lib, zebin = _without_compile_target(sid_compiler, tmp_path, exclude_ir=True)
    assert b".spv" not in zebin  # the premise: ocloc -exclude_ir kept no SPIR-V
    res = cli("inspect", lib, "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id, "--json", "-q")
    assert res.code == 1
    import json

    doc = json.loads(res.out)
    [failed] = [r for r in doc["reports"] if r["target"] == "lnl-m" and r["status"] == "build_failed"]
    assert failed["path"] == {"via": "native", "taken": True}
    assert "no path on lnl-m" in failed["reason"] and "without a compile_target" in failed["reason"]
    assert not any(r["path"]["taken"] for r in doc["reports"] if r["target"] == "lnl-m" and r is not failed)


def _zeinspect():
    import sys

    return [sys.executable, "-m", "zeinspect"]
