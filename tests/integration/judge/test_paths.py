"""Every path of a shipped kernel, compared, and the build's intent checked on each.

vllm-xpu-kernels#348's mechanism, on a kernel of this repository: the native image was built
with the large register file (the flag given at the AOT link step only), the SPIR-V image's
options lack it.  A library laid out as the SYCL toolchain lays one out (tests/sycl_builds.py)
holds both; the device with a native image (bmg-g21) runs it, a device without one (lnl-m)
compiles the SPIR-V at the first launch, with 128 registers, and spills there.
"""

from __future__ import annotations

import pytest
import sycl_builds as sb
from conftest import KERNELS
from oracle import driver_figures, ocloc

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
    lib = sb.sycl_library(tmp, [{"data": native.binary, "entries": [KERNEL], "spec": "spir64_gen"},
                                {"data": spirv, "entries": [KERNEL]}], name="libpaths")
    return {"lib": lib, "native": native.binary, "spirv": tmp / "k.spv"}


def _inspect(cli, sid_compiler, library):
    return cli.json("inspect", library["lib"], "-t", "bmg-g21,lnl-m", "--compiler", sid_compiler.id)[1]


def test_every_kernel_target_pair_names_its_path_and_each_build_is_the_compilers(cli, sid_compiler, library):
    doc = _inspect(cli, sid_compiler, library)
    rows = {(r["target"], r["path"]["via"]): r for r in doc["reports"] if r["kernel"] == KERNEL}
    assert set(rows) == {("bmg-g21", "native"), ("bmg-g21", "spirv"), ("lnl-m", "spirv")}
    # The runtime's choice: the native image where there is one, the SPIR-V image elsewhere.
    assert rows["bmg-g21", "native"]["path"]["taken"] and rows["lnl-m", "spirv"]["path"]["taken"]
    assert not rows["bmg-g21", "spirv"]["path"]["taken"]
    assert doc["paths"]["taken"] == {"native": 1, "spirv": 1}
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
    [grf] = [d for d in doc["paths"]["differences"] if d["kernel"] == KERNEL and d["aspect"] == "grf"]
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
