"""AOT inspection against the real compilers of both generations.

Every figure zeinspect prints must equal what the compiler wrote: the zebin's own
.ze_info (read here through readelf and derived with NEO's rules) and its build log.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import oracle
import pytest
from conftest import KERNELS, generation

CORPUS = sorted(p.name for p in KERNELS.glob("*.cl"))
# Per generation, targets covering each rule: Xe-LP (2 MiB cap, stateless-private rule),
# Xe-HPG, Xe-LPG and Xe2 (256 KiB cap).  Debian 12's ocloc knows no Xe-LPG or Xe2.
TARGETS = {"current": ["tgllp", "dg2-g10", "mtl-u", "bmg-g21"], "debian": ["tgllp", "dg2-g10"]}
XE_LP = {"tgllp", "adl-s", "adl-p", "adl-n", "rpl-s", "rpl-p"}



def by_key(doc) -> dict:
    return {(r["kernel"], r["target"]): r for r in doc["reports"]}


@pytest.mark.parametrize("kernel_file", CORPUS)
def test_figures_equal_the_compilers_own(cli, compiler, kernel_file):
    targets = TARGETS[generation(compiler)]
    source = KERNELS / kernel_file
    code, doc = cli.json("inspect", source, "-t", ",".join(targets), "--compiler", compiler.id)
    reports = by_key(doc)
    assert doc["compilers"][0]["id"] == compiler.id
    for target in targets:
        built = oracle.ocloc(compiler, source, target)
        cap = 2 * 1024 * 1024 if target in XE_LP else 256 * 1024
        if built.binary is None:
            overflows = oracle.log_overflows(built.log)
            assert overflows, f"{target}: ocloc failed without a PTSS error:\n{built.log}"
            for name, (needed, limit) in overflows.items():
                r = reports[(name, target)]
                assert r["status"] == "scratch_overflow"
                assert (r["needed_scratch_bytes"], r["scratch_limit_bytes"]) == (needed, limit)
                assert needed > limit
            continue
        expected = oracle.driver_figures(built.binary, xe_hp_or_later=target not in XE_LP)
        spills = oracle.log_spills(built.log)
        for name, fig in expected.items():
            r = reports[(name, target)]
            assert r["compiler"] == compiler.id and r["source"] == "aot"
            assert (r["simd"], r["grf"], r["slm_bytes"]) == (fig["simd"], fig["grf"], fig["slm"])
            # private_bytes is what the zebin says; the driver's own figure has its own field.
            assert (r["spill_bytes"], r["private_bytes"]) == (fig["spill"], fig["used_private"]), target
            assert r["driver_private_bytes"] == fig["private"], target
            assert r["scratch_bytes"] == fig["spill"] + fig["used_private"]
            assert r["scratch_space_bytes"] == sum(fig["slots"].values())
            assert r["log_spilled_regs"] == spills.get(name)
            over = max(fig["slots"].values(), default=0) > cap
            assert r["status"] == ("scratch_overflow" if over else "ok")
            assert r["scratch_limit_bytes"] == cap


def test_ptss_kernel_overflows_on_xe2(cli, sid_compiler):
    """IGC 2.x refuses the live-set kernel on Xe2; zeinspect says so with the log's figures."""
    res = cli("kernel", KERNELS / "ptss_overflow.cl", "-t", "bmg-g21,dg2-g10", "--compiler", sid_compiler.id)
    assert res.code == 1, res  # a kernel did not build: exit 1, and the card is still printed
    code, doc = cli.json("kernel", KERNELS / "ptss_overflow.cl", "-t", "bmg-g21,dg2-g10", "--compiler", sid_compiler.id)
    r = by_key(doc)[("ptss_live_set", "bmg-g21")]
    built = oracle.ocloc(sid_compiler, KERNELS / "ptss_overflow.cl", "bmg-g21")
    assert built.binary is None
    assert r["status"] == "scratch_overflow"
    assert (r["needed_scratch_bytes"], r["scratch_limit_bytes"]) == oracle.log_overflows(built.log)["ptss_live_set"]
    assert "headroom -" in res.out  # negative headroom on the card
    assert by_key(doc)[("ptss_live_set", "dg2-g10")]["status"] == "ok"


def test_ptss_kernel_on_debian_compiler(cli, debian_compiler):
    """IGC 1.0 predates the PTSS check: whatever it builds is judged by the zebin against the cap."""
    code, doc = cli.json("inspect", KERNELS / "ptss_overflow.cl", "-t", "dg2-g10", "--compiler", debian_compiler.id)
    r = by_key(doc)[("ptss_live_set", "dg2-g10")]
    built = oracle.ocloc(debian_compiler, KERNELS / "ptss_overflow.cl", "dg2-g10")
    slots = oracle.driver_figures(built.binary, True)["ptss_live_set"]["slots"]
    assert r["status"] == ("scratch_overflow" if max(slots.values()) > 256 * 1024 else "ok")
    assert code == (1 if r["status"] != "ok" else 0)


def test_aliases_share_one_compile(fresh_cli, sid_compiler):
    code, doc = fresh_cli.json("inspect", KERNELS / "sg32_accumulate.cl", "-t", "adl-s,rpl-s",
                               "--compiler", sid_compiler.id)
    assert doc["stats"]["compiles"] == 1
    a, b = (by_key(doc)[("sg32_accumulate", t)] for t in ("adl-s", "rpl-s"))
    assert a["ip"] == b["ip"] == "12.2.0"
    strip = lambda r: {k: v for k, v in r.items() if k not in ("target", "command")}  # noqa: E731
    assert strip(a) == strip(b)


def test_second_run_compiles_nothing_and_corruption_is_rebuilt(fresh_cli, sid_compiler, tmp_path):
    args = ("inspect", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10", "--compiler", sid_compiler.id)
    _, first = fresh_cli.json(*args)
    _, second = fresh_cli.json(*args)
    counts = lambda doc: (doc["stats"]["compiles"], doc["stats"]["cache_hits"])  # noqa: E731
    assert counts(first) == (2, 0)
    assert counts(second) == (0, 2)
    assert first["reports"] == second["reports"]
    # Damage one entry: it is detected by its hash and rebuilt, with the same result.
    entries = sorted((tmp_path / "cache").rglob("*.entry"))
    assert len(entries) == 2
    entries[0].write_bytes(entries[0].read_bytes()[:-100])
    _, third = fresh_cli.json(*args)
    assert counts(third) == (1, 1)
    assert third["reports"] == first["reports"]
    _, nocache = fresh_cli.json(*args, "--no-cache")
    assert counts(nocache) == (2, 0)


def test_card_shows_all_default_targets_and_a_command_that_reproduces(cli, sid_compiler, tmp_path):
    res = cli("kernel", KERNELS / "sg32_accumulate.cl", "-t", "default", "--compiler", sid_compiler.id)
    assert res.code == 0, res
    _, doc = cli.json("kernel", KERNELS / "sg32_accumulate.cl", "-t", "default", "--compiler", sid_compiler.id)
    assert len(doc["reports"]) == 19
    from zeinspect.toolchain.targets import DEFAULT_TARGETS

    rows = [line.split()[0] for line in res.out.splitlines() if line.startswith("  ") and len(line.split()) > 5]
    for target in DEFAULT_TARGETS:
        assert target in rows
    dg2 = by_key(doc)[("sg32_accumulate", "dg2-g10")]
    assert f"compiled by {sid_compiler.id}" in res.out
    assert f"reproduce: {dg2['command']}" in res.out
    # Run the printed command as a user would and read what it wrote.
    argv = shlex.split(dg2["command"]) + ["-out_dir", str(tmp_path)]
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    binary = next(p for p in tmp_path.iterdir() if p.suffix == ".bin").read_bytes()
    assert oracle.driver_figures(binary, True)["sg32_accumulate"]["spill"] == dg2["spill_bytes"] > 0


def test_json_schema_fields(cli, sid_compiler):
    _, doc = cli.json("inspect", KERNELS / "clean.cl", "-t", "tgllp", "--compiler", sid_compiler.id)
    assert doc["schema"] == "zeinspect.report/1"
    assert set(doc["compilers"][0]) == {"id", "path", "ocloc_version", "igc_version", "environment"}
    assert doc["compilers"][0]["environment"] == {}  # no IGC variable here: built as a clean driver would
    r = doc["reports"][0]
    required = {"input", "kernel", "target", "ip", "compiler", "shape", "status", "simd", "grf", "spill_bytes",
                "private_bytes", "scratch_bytes", "slm_bytes", "log_spilled_regs", "needed_scratch_bytes",
                "scratch_limit_bytes", "source"}
    assert required <= set(r)
    assert r["shape"] == {"grf": "default", "sub_group": None}
    assert (r["spill_bytes"], r["private_bytes"], r["scratch_bytes"]) == (0, 0, 0)
    assert r["needed_scratch_bytes"] is None  # unknown is null, never a made-up 0


def test_family_sets_come_from_the_compiler(cli, sid_compiler):
    _, doc = cli.json("inspect", KERNELS / "clean.cl", "-t", "xe2", "--compiler", sid_compiler.id)
    ids = subprocess.run([sid_compiler.path, "ids", "xe2"], capture_output=True, text=True).stdout.split()
    ips = {r["ip"] for r in doc["reports"]}
    assert ips and ips <= set(ids)
    assert {"20.1.0", "20.4.4"} <= ips


def test_large_register_file_option(cli, sid_compiler):
    _, doc = cli.json("inspect", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10", "--grf", "256",
                      "--compiler", sid_compiler.id)
    reports = by_key(doc)
    built = oracle.ocloc(sid_compiler, KERNELS / "sg32_accumulate.cl", "dg2-g10", options="-ze-opt-large-register-file")
    expected = oracle.driver_figures(built.binary, True)["sg32_accumulate"]
    assert reports[("sg32_accumulate", "dg2-g10")]["grf"] == expected["grf"] == 256
    assert reports[("sg32_accumulate", "tgllp")]["grf"] == 128  # Xe-LP has no large register file
    assert reports[("sg32_accumulate", "dg2-g10")]["shape"]["grf"] == "256"


def test_fat_binary_members_read_like_zebins(cli, sid_compiler, tmp_path):
    subprocess.run([sid_compiler.path, "compile", "-file", str(KERNELS / "sg32_accumulate.cl"), "-device",
                    "tgllp,dg2-g10", "-out_dir", str(tmp_path), "-output", "fat"], check=True, capture_output=True,
                   cwd=tmp_path)
    fat = next(p for p in tmp_path.iterdir() if p.read_bytes()[:8] == b"!<arch>\n")
    _, from_fat = cli.json("inspect", fat)
    _, compiled = cli.json("inspect", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10", "--compiler",
                           sid_compiler.id)
    fields = ("simd", "grf", "spill_bytes", "private_bytes", "slm_bytes", "status")
    got = {r["target"]: tuple(r[f] for f in fields) for r in from_fat["reports"]}
    want = {r["target"]: tuple(r[f] for f in fields) for r in compiled["reports"]}
    assert got == want
    assert all(r["source"] == "binary" for r in from_fat["reports"])


def test_legacy_patch_token_binary(cli, debian_compiler, tmp_path):
    """Old ocloc's default output: recognised, and its scratch figure equals the zebin's."""
    src = KERNELS / "sg32_accumulate.cl"
    subprocess.run([debian_compiler.path, "compile", "-file", str(src), "-device", "tgllp", "-out_dir",
                    str(tmp_path), "-output", "legacy"], check=True, capture_output=True, cwd=tmp_path)
    legacy = next(p for p in tmp_path.iterdir() if p.suffix == ".bin")
    assert legacy.read_bytes()[16:18] == b"\x04\xff"  # e_type 0xff04: not a zebin
    _, doc = cli.json("inspect", legacy)
    r = doc["reports"][0]
    assert r["kernel"] == "sg32_accumulate" and r["source"] == "binary"
    assert any("patch-token" in n for n in r["notes"])
    built = oracle.ocloc(debian_compiler, src, "tgllp")
    zebin = oracle.driver_figures(built.binary, False)["sg32_accumulate"]
    assert (r["simd"], r["grf"], r["spill_bytes"]) == (zebin["simd"], zebin["grf"], zebin["slots"][0])


def test_directory_walk_reports_every_corpus_kernel(cli, sid_compiler):
    _, doc = cli.json("inspect", KERNELS, "-t", "lnl-m", "--compiler", sid_compiler.id)
    inputs = {Path(r["input"]).name for r in doc["reports"]}
    assert inputs == set(CORPUS)


FEATURE_PROBE = """
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void feature_probe(__global float* x, __global const uint* idx) {
    size_t gid = get_global_id(0);
#if defined(cl_khr_fp64)
    double table[32];  /* indexed per work-item by loaded data: private memory at SIMD32 */
    for (int i = 0; i < 32; i++) table[i] = 0.0;
    for (int i = 0; i < 64; i++) table[idx[gid * 64 + i] & 31] += x[i];
    for (int i = 0; i < 32; i++) x[gid * 32 + i] = (float)table[i];
#else
    x[gid] *= 2.0f;
#endif
}
"""


@pytest.mark.parametrize("compiler_fixture", ["sid_compiler", "debian_compiler"])
def test_shared_front_end_gives_the_direct_build(compiler_fixture, request, cli, tmp_path):
    """OpenCL C compiled to SPIR-V once per front-end group, then to each target, must give
    exactly what one direct `ocloc -file k.cl -device T` per target gives: every figure and
    every log line (toolchain.front_end).  The feature probe takes a different path where the
    target offers fp64, so a grouping that ignored the device's features would differ."""
    compiler = request.getfixturevalue(compiler_fixture)
    probe = tmp_path / "feature_probe.cl"
    probe.write_text(FEATURE_PROBE)
    targets = [t for t in ("tgllp", "adl-s", "dg2-g10", "acm-g11", "mtl-u", "arl-h", "lnl-m", "bmg-g21")
               if compiler.knows(t)]
    args = ("inspect", probe, KERNELS / "sg32_accumulate.cl", KERNELS / "private_array.cl", "-t", ",".join(targets),
            "--grf", "256", "--compiler", compiler.id, "--json")
    _, direct = cli.json(*args, env={"ZEINSPECT_SHARE_FRONT_END": "0", "ZEINSPECT_CACHE_DIR": str(tmp_path / "a")})
    _, shared = cli.json(*args, env={"ZEINSPECT_CACHE_DIR": str(tmp_path / "b")})
    assert direct["stats"]["front_ends"] == 0
    from zeinspect.toolchain.knowledge import device_query

    if device_query(compiler, "CL_DEVICE_EXTENSIONS", targets[0]) is None:
        # IGC 1.0's ocloc cannot say what a target offers: no groups, every build direct.
        assert shared["stats"]["front_ends"] == 0
    else:
        assert 0 < shared["stats"]["front_ends"] < 3 * len(targets)  # grouped: fewer front ends than builds
    assert shared["stats"]["compiles"] == direct["stats"]["compiles"] > 0
    assert len(shared["reports"]) == 3 * len(targets)
    assert shared["reports"] == direct["reports"]
    # The probe is a real witness: targets with fp64 use private memory, the others none.
    private = {r["target"]: r["private_bytes"] for r in direct["reports"] if r["kernel"] == "feature_probe"}
    fp64 = {t: "cl_khr_fp64" in (device_query(compiler, "CL_DEVICE_EXTENSIONS", t) or "") for t in targets}
    if any(fp64.values()) and not all(fp64.values()):
        assert all((private[t] > 0) == fp64[t] for t in targets), (private, fp64)


MACRO_KERNEL = "__kernel void scaled(__global float* x) { x[get_global_id(0)] *= SCALE; }\n"


def test_the_shape_levers_front_end_gets_the_users_options(cli, sid_compiler, tmp_path):
    """A sub-group rewrite turns OpenCL C into SPIR-V first: with the -D macros of --options."""
    source = tmp_path / "scaled.cl"
    source.write_text(MACRO_KERNEL)
    common = ("-t", "dg2-g10", "--compiler", sid_compiler.id, "--options", "-DSCALE=2.0f")
    code, doc = cli.json("inspect", source, "--sub-group", "16", *common)
    (report,) = doc["reports"]
    assert code == 0 and report["status"] == "ok" and report["required_sub_group_size"] == 16
    res = cli("shapes", source, "-k", "scaled", *common, "--json")
    assert res.code == 0, res
    # The premise: without the macro the source does not build at all.
    res = cli("inspect", source, "-t", "dg2-g10", "--compiler", sid_compiler.id, "--sub-group", "16")
    assert res.code == 2 and "front end failed" in res.err


def test_a_large_register_file_asked_for_on_xe_lp_is_said_not_to_take_effect(cli, sid_compiler):
    """Xe-LP has no large register file: ocloc accepts the request and builds 128 registers
    (.ze_info's grf_count), where DG2 builds 256; the report says so on tgllp only."""
    code, doc = cli.json("kernel", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10", "--grf", "256",
                         "--compiler", sid_compiler.id)
    by = {r["target"]: r for r in doc["reports"]}
    assert by["tgllp"]["grf"] < 256 and by["dg2-g10"]["grf"] == 256
    assert any("did not take effect" in n for n in by["tgllp"]["notes"])
    assert not any("did not take effect" in n for n in by["dg2-g10"]["notes"])
