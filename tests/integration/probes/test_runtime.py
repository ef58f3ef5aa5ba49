"""The Level Zero runtime probe, against Debian 12's driver in hardware-free mode.

The driver builds each module with its own IGC (the same 1.0.12504 as Debian's ocloc),
so zeKernelGetProperties must equal the derivation from the module's own native binary,
and the AOT compile of the same module by the same compiler generation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import oracle
import pytest
from conftest import KERNELS

PRODUCTS = {"tgllp": "tgllp", "dg2": "dg2-g10", "mtl": None, "pvc": "pvc"}  # product -> Debian ocloc target
CORPUS = sorted(p.name for p in KERNELS.glob("*.cl"))


@pytest.fixture(scope="module")
def driver_present():
    if not Path("/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1").exists():
        if os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS") == "1":
            pytest.fail("Debian 12's Level Zero driver (intel-opencl-icd) is missing")
        pytest.skip("no Level Zero driver")


def runtime(cli, source, product, *extra, cwd=None):
    res = cli("kernel", source, "--simulate", product, "--json", *extra, cwd=cwd)
    assert res.code in (0, 1, 3), res
    return res, json.loads(res.out)


@pytest.mark.parametrize("product", sorted(PRODUCTS))
@pytest.mark.parametrize("kernel_file", CORPUS)
def test_runtime_figures_equal_the_native_binary(cli, debian_compiler, driver_present, product, kernel_file, tmp_path):
    source = KERNELS / kernel_file
    res, doc = runtime(cli, source, product, cwd=tmp_path)
    assert res.code == 0, res
    assert not list(tmp_path.glob("*.aub")), "the driver's .aub files must not land in the working directory"
    for r in doc["reports"]:
        assert r["source"] == "runtime" and r["status"] == "ok"
        assert r["compiler"].startswith("level-zero driver 1.3.")
        # The cross-check inside the probe: no difference with the driver's own binary.
        assert not [n for n in r["notes"] if "differs" in n], r["notes"]
        binary = r["extra"]["native_binary_figures"]
        assert (r["spill_bytes"], r["private_bytes"], r["simd"]) == \
            (binary["spill_bytes"], binary["private_bytes"], binary["simd"])
        target = PRODUCTS[product]
        if target is None:
            continue  # Debian's ocloc has no Meteor Lake: no AOT twin
        built = oracle.ocloc(debian_compiler, source, target)
        aot = oracle.driver_figures(built.binary, xe_hp_or_later=product != "tgllp")[r["kernel"]]
        assert (r["spill_bytes"], r["private_bytes"], r["simd"], r["slm_bytes"]) == \
            (aot["spill"], aot["private"], aot["simd"], aot["slm"])
        spills = oracle.log_spills(built.log)
        if r["kernel"] in spills:
            assert any("spilled around" in line for line in r["log"])
            assert r["log_spilled_regs"] == spills[r["kernel"]]


WG_KERNELS = """
__attribute__((intel_reqd_sub_group_size(8)))  __kernel void k8(__global float* x)  { x[get_global_id(0)] *= 2.0f; }
__attribute__((intel_reqd_sub_group_size(16))) __kernel void k16(__global float* x) { x[get_global_id(0)] *= 2.0f; }
__attribute__((intel_reqd_sub_group_size(32))) __kernel void k32(__global float* x) { x[get_global_id(0)] *= 2.0f; }
"""


@pytest.mark.parametrize("options", ["", "-cl-intel-256-GRF-per-thread"])
@pytest.mark.parametrize("product", ["tgllp", "dg2"])
def test_the_drivers_work_group_limit_agrees_with_the_occupancy_model(cli, driver_present, product, options, tmp_path):
    """The driver's own per-kernel limit (zeKernelGetProperties: maxNumSubgroups x the SIMD
    width, NEO's calculateMaxWorkGroupSize) against zeinspect.occupancy's rule for the same
    build.  Debian 12's driver (2022) caps its DG2 device at 512 work-items where current NEO
    allows 1024, so the comparison is with the model bounded by the device's own maximum."""
    source = tmp_path / "wg.cl"
    source.write_text(WG_KERNELS)
    res, doc = runtime(cli, source, product, *(["--options", options] if options else []), cwd=tmp_path)
    assert res.code == 0, res
    device = doc["runtime"]["device"]
    assert {r["kernel"] for r in doc["reports"]} == {"k8", "k16", "k32"}
    for r in doc["reports"]:
        p = r["extra"]["properties"]
        assert r["grf"] == r["extra"]["native_binary_figures"]["grf"]
        if options and product == "dg2":
            assert r["grf"] == 256
        occupancy = r["occupancy"]
        assert occupancy is not None, r
        assert p["maxNumSubgroups"] * p["maxSubgroupSize"] == \
            min(occupancy["max_work_group_size"], device["max_work_group_size"]), (r["kernel"], p, occupancy)


def test_compare_aot_side_by_side(cli, driver_present, debian_compiler):
    res = cli("kernel", KERNELS / "sg32_accumulate.cl", "--runtime", "--simulate", "tgllp", "--compare-aot")
    assert res.code == 0, res
    assert "runtime (zeKernelGetProperties)" in res.out and f"AOT ({debian_compiler.id})" in res.out
    spill = next(line for line in res.out.splitlines() if line.strip().startswith("spill"))
    values = spill.split()[1:]
    assert len(set(values)) == 1 and values[0] != "0"  # runtime = native binary = AOT


def test_invalid_spirv_is_a_module_build_failure(cli, driver_present, sid_compiler, tmp_path):
    import subprocess

    subprocess.run([sid_compiler.path, "compile", "-file", str(KERNELS / "clean.cl"), "-device", "tgllp", "-spv_only",
                    "-out_dir", str(tmp_path), "-output", "c"], check=True, capture_output=True, cwd=tmp_path)
    good = next(tmp_path.glob("*.spv")).read_bytes()
    words = bytearray(good)
    # Replace the first OpFunction's opcode with one that does not exist: still well-formed words,
    # no longer a module any driver can build.
    import struct

    i = 20
    while i < len(words):
        word = struct.unpack_from("<I", words, i)[0]
        if word & 0xFFFF == 54:
            struct.pack_into("<I", words, i, (word & 0xFFFF0000) | 0x7FFF)
            break
        i += 4 * (word >> 16)
    bad = tmp_path / "bad.spv"
    bad.write_bytes(bytes(words))
    res, doc = runtime(cli, bad, "dg2")
    assert res.code == 1
    (r,) = doc["reports"]
    assert r["status"] == "build_failed"
    assert r["reason"] == "zeModuleCreate returned ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"
    assert r["extra"]["results"] == {"zeModuleCreate": "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"}
    assert r["log"], "the build log comes with the failure"


@pytest.mark.parametrize("env, needle", [
    ({"ZEINSPECT_ZE_LOADER": "/nonexistent/libze_loader.so.1"}, "cannot load the Level Zero loader"),
    ({"ZE_ENABLE_ALT_DRIVERS": "/nonexistent/libze_fake_gpu.so.1"}, "no Level Zero driver is installed"),
])
def test_no_loader_no_driver(cli, driver_present, env, needle):
    res = cli("kernel", KERNELS / "clean.cl", "--simulate", "dg2", env=env)
    assert res.code == 3 and needle in res.err and "Traceback" not in res.err, res


def test_no_device(cli, driver_present):
    res = cli("kernel", KERNELS / "clean.cl", "--runtime")
    assert res.code == 3, res
    assert "no Level Zero device: zeInit returned ZE_RESULT_ERROR_UNINITIALIZED" in res.err


def test_a_driver_crash_is_contained(cli, driver_present, tmp_path):
    res, doc = runtime(cli, KERNELS / "clean.cl", "dg2", cwd=tmp_path)
    assert res.code == 0
    res = cli("kernel", KERNELS / "clean.cl", "--simulate", "dg2", "--json", cwd=tmp_path,
              env={"ZEINSPECT_RUNTIME_FAULT": "bogus-kernel-handle"})
    assert res.code == 3
    doc = json.loads(res.out)
    (r,) = doc["reports"]
    assert r["status"] == "build_failed"
    assert r["reason"] == "driver crashed: signal 11 (SIGSEGV) in zeKernelGetProperties for kernel saxpy"
    assert "driver crashed: signal 11" in res.err and "Traceback" not in res.err
    assert not list(tmp_path.glob("*.aub"))


def test_devices(cli, driver_present):
    res = cli("devices", "--simulate", "dg2", "--json")
    assert res.code == 0, res
    doc = json.loads(res.out)
    (driver,) = doc["level_zero"]
    (device,) = driver["devices"]
    assert device["device_id"] == "0x56a0" and device["sub_group_sizes"] == [8, 16, 32]
    assert device["slm_bytes"] == 65536
    plain = cli("devices", "--json")
    assert "ZE_RESULT_ERROR_UNINITIALIZED" in json.loads(plain.out)["level_zero_error"]


def test_audit_through_the_runtime(cli, driver_present, tmp_path):
    ratchet = tmp_path / "r.txt"
    ratchet.write_text("")
    res = cli("audit", KERNELS / "sg32_accumulate.cl", KERNELS / "clean.cl", "--runtime", "--simulate", "tgllp",
              "--ratchet", ratchet, "--format", "json")
    assert res.code == 1
    doc = json.loads(res.out)
    verdicts = {(v["report"]["kernel"], v["verdict"]) for v in doc["verdicts"] if v["report"]}
    assert verdicts == {("sg32_accumulate", "NEW"), ("saxpy", "CLEAN")}
    assert all(v["report"]["source"] == "runtime" for v in doc["verdicts"] if v["report"])


@pytest.mark.parametrize("kernel_file", ["private_array.cl", "sg32_accumulate.cl"])
def test_the_drivers_own_compiler_cache_reads_as_what_it_built(cli, debian_compiler, driver_present, kernel_file,
                                                               tmp_path):
    """NEO's persistent compiler cache, as Debian 12's driver writes it (`l0_cache_dir`: it
    predates NEO_CACHE_PERSISTENT and NEO_CACHE_DIR): each entry read as an input gives the
    figures of the module the driver built, as zeKernelGetProperties gave them."""
    cache = tmp_path / "l0_cache"
    cache.mkdir()
    runtime(cli, KERNELS / kernel_file, "dg2", cwd=tmp_path)
    assert not list(cache.iterdir())  # not asked: nothing written
    env_res = cli("kernel", KERNELS / kernel_file, "--simulate", "dg2", "--json", cwd=tmp_path,
                  env={"l0_cache_dir": str(cache)})
    assert env_res.code in (0, 1), env_res
    built = {r["kernel"]: r for r in json.loads(env_res.out)["reports"]}
    entries = list(cache.iterdir())
    assert entries and all(e.suffix == ".l0_cache" for e in entries)
    code, read = cli.json("inspect", cache, "-v")
    assert code in (0, 1)
    got = {r["kernel"]: r for r in read["reports"]}
    assert set(got) == set(built)
    for name, r in got.items():
        assert (r["spill_bytes"], r["private_bytes"], r["simd"]) == \
            (built[name]["spill_bytes"], built[name]["private_bytes"], built[name]["simd"]), name
