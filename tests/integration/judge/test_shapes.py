"""Shape levers, the shape search and the fix loop, with real compiles."""

from __future__ import annotations

import json
import shutil
import subprocess

import oracle
import pytest
from conftest import KERNELS, ROOT

from zeinspect.inputs.spirv import read_module
from zeinspect.levers.spirv_rewrite import spirv_val
from zeinspect.levers.sub_group import depends_on_sub_group, set_sub_group

TESTS_KERNELS = ROOT / "tests" / "kernels"
SUBSET = "tgllp,adl-s,dg2-g10,mtl-u,lnl-m,bmg-g21"


def spv_of(compiler, source, tmp_path) -> bytes:
    out = tmp_path / "spv"
    subprocess.run([compiler.path, "compile", "-file", str(source), "-device", "tgllp", "-spv_only",
                    "-out_dir", str(out), "-output", "m"], check=True, capture_output=True, cwd=tmp_path)
    return next(out.glob("*.spv")).read_bytes()


@pytest.mark.parametrize("size", [0, 8, 16, 32])
def test_rewrite_is_valid_and_the_compiler_obeys(sid_compiler, tmp_path, size):
    for source, kernel in ((KERNELS / "sg32_accumulate.cl", "sg32_accumulate"), (KERNELS / "clean.cl", "saxpy")):
        original = spv_of(sid_compiler, source, tmp_path)
        rewritten = set_sub_group(original, kernel, size)
        assert spirv_val(original) is None and spirv_val(rewritten) is None
        module = read_module(rewritten)
        fid = dict((name, f) for f, name in module.entry_points())[kernel]
        assert module.required_sub_group_size(fid) == (size or None)
        path = tmp_path / f"{kernel}.spv"
        path.write_bytes(rewritten)
        built = oracle.ocloc(sid_compiler, path, "dg2-g10", spirv=True)
        env = oracle.zeinfo(built.binary)["kernels"][0]["execution_env"]
        if size:
            assert env["simd_size"] == size
            assert env.get("required_sub_group_size", size) == size
        else:
            assert "required_sub_group_size" not in env


def test_sub_group_dependence_is_found(sid_compiler, tmp_path):
    dependent = spv_of(sid_compiler, TESTS_KERNELS / "subgroup_scan.cl", tmp_path)
    assert depends_on_sub_group(dependent, "subgroup_scan")
    for source in KERNELS.glob("*.cl"):
        module_bytes = spv_of(sid_compiler, source, tmp_path)
        for name in read_module(module_bytes).kernel_names():
            assert depends_on_sub_group(module_bytes, name) == [], (source, name)


def test_sg32_kernel_gets_a_shape_that_cleans_xe_lp(cli, sid_compiler):
    res = cli("shapes", KERNELS / "sg32_accumulate.cl", "-t", SUBSET, "--compiler", sid_compiler.id, "--json")
    assert res.code == 0, res
    (search,) = json.loads(res.out)["searches"]
    rows = {(r["shape"]["sub_group"], r["shape"]["grf"]): r for r in search["rows"]}
    assert search["written_sub_group"] == 32
    # As written it spills on the 32-byte-GRF targets and not on Xe2.
    written = rows[(32, "default")]
    assert set(written["targets_with_scratch"]) == {"tgllp", "adl-s", "dg2-g10", "mtl-u"}
    # 256 registers help Xe-HPG and Xe-LPG but are ignored on Xe-LP, which keeps spilling.
    large = rows[(32, "256")]
    states = {c["target"]: c["state"] for c in large["cells"]}
    assert states["tgllp"] == states["adl-s"] == "ignored"
    assert set(large["targets_with_scratch"]) == {"tgllp", "adl-s"}
    # Xe2 accepts no sub-group size of 8.
    eight = {c["target"]: c["state"] for c in rows[(8, "default")]["cells"]}
    assert eight["lnl-m"] == eight["bmg-g21"] == "n/a"
    # The winner builds everywhere and leaves no scratch, Xe-LP included.
    winner = rows[(search["winner"]["sub_group"], search["winner"]["grf"])]
    assert winner["builds_everywhere"] and winner["targets_with_scratch"] == []
    assert search["winner"]["sub_group"] != 32
    tgl = next(c for c in winner["cells"] if c["target"] == "tgllp")["report"]
    assert tgl["spill_bytes"] == 0 and tgl["private_bytes"] == 0


def test_sub_group_dependent_kernel_keeps_its_size(cli, sid_compiler):
    args = ("shapes", TESTS_KERNELS / "subgroup_scan.cl", "-t", "tgllp,dg2-g10,lnl-m", "--compiler",
            sid_compiler.id, "--json")
    (search,) = json.loads(cli(*args).out)["searches"]
    assert search["depends_on_sub_group"]
    for row in search["rows"]:
        assert row["changes_semantics"] == (row["shape"]["sub_group"] != 32)
    assert search["winner"]["sub_group"] == 32
    (allowed,) = json.loads(cli(*args, "--allow-subgroup-change").out)["searches"]
    assert not any(r["changes_semantics"] for r in allowed["rows"])
    assert allowed["winner"]["sub_group"] != 32


def test_fix_loop_leaves_no_scratch_and_the_gate_passes(cli, sid_compiler, tmp_path):
    project = tmp_path / "p"
    shutil.copytree(KERNELS, project / "kernels")
    (project / "ratchet").mkdir()
    # Xe-LP (no large register file, SIMD8 allowed) and Xe2 (SIMD16 at least, 256 registers):
    # the two ends of the register-file and sub-group regimes.  Xe-HPG's is checked by
    # test_the_projects_own_gate_uses_recorded_shapes, which builds the recorded shapes on all
    # 19 targets; a third target here cost 40 s of the suite's 10 minutes.
    targets = "tgllp,bmg-g21"
    res = cli("fix", "kernels", "-t", targets, "--compiler", sid_compiler.id, "--write", "ratchet/shapes.yaml",
              cwd=project)
    assert res.code == 0, res
    import yaml

    doc = yaml.safe_load((project / "ratchet" / "shapes.yaml").read_text())
    modules = doc["modules"]
    assert set(modules) == {"kernels/fma_tile.cl", "kernels/private_array.cl", "kernels/sg32_accumulate.cl",
                            "kernels/ptss_overflow.cl"}
    for entry in modules.values():
        for kernel, decision in entry["kernels"].items():
            results = decision["results"]
            assert set(results) == set(targets.split(","))
            assert all(r["status"] == "ok" for r in results.values()), (kernel, results)
            clean = all(r["spill_bytes"] == 0 and r["private_bytes"] == 0 for r in results.values())
            assert decision["cleans"] == clean
            assert clean == (kernel != "ptss_live_set"), (kernel, results)
            # No shape cleans it: the shapes' scratch traffic in loops was measured and ranked first.
            # Its loops are unrolled in the source (#pragma unroll), so none is left in the ISA.
            assert ("scratch_per_loop_iteration" in decision) == (not clean), decision
            if not clean:
                assert decision["scratch_per_loop_iteration"] == dict.fromkeys(sorted(results), 0), decision
                assert "no shape moves less scratch in loops" in decision["why"]
            assert decision["compilers"] == [sid_compiler.id]
            same = decision["same_results"]
            assert same["ran"] and same["equal"], (kernel, same)  # every corpus kernel describes its launch
        artefact = project / "ratchet" / entry["artefact"]
        assert spirv_val(artefact.read_bytes()) is None
    assert "drop [[sycl::reqd_sub_group_size(32)]]" in modules["kernels/fma_tile.cl"]["kernels"]["fma_tile"]["sycl"]
    # The audit builds each kernel in its chosen shape: only the PTSS kernel is left to list.
    (project / "gate.yaml").write_text(f"targets: [{targets}]\nratchet: scratch_ratchet.txt\ninputs: [kernels]\n"
                                       f"shapes: ratchet/shapes.yaml\ncompiler: {sid_compiler.id}\n")
    (project / "scratch_ratchet.txt").write_text("")
    res = cli("audit", "--config", "gate.yaml", cwd=project)
    assert res.code == 1
    assert [line.split(":")[2].split()[0] for line in res.out.splitlines() if line.startswith("FAIL")] == \
        ["ptss_live_set"] * len(targets.split(","))
    assert cli("ratchet", "update", "--config", "gate.yaml", "--allow-grow", cwd=project).code == 0
    res = cli("audit", "--config", "gate.yaml", "--strict", cwd=project)
    assert res.code == 0, res
    assert f"5 kernels on {len(targets.split(','))} targets: 1 use scratch memory, 1 listed" in res.out


def test_the_projects_own_gate_uses_recorded_shapes(cli):
    """ratchet/shapes.yaml is current: each recorded result is what the audit sees now."""
    import yaml

    doc = yaml.safe_load((ROOT / "ratchet" / "shapes.yaml").read_text())
    res = cli("audit", "--config", ROOT / "ratchet" / "gate.yaml", "--format", "json", cwd=ROOT)
    assert res.code == 0, res
    audit = json.loads(res.out)
    seen = {(v["report"]["input"], v["report"]["kernel"], v["report"]["target"]): v["report"]
            for v in audit["verdicts"] if v["report"]}
    for module, entry in doc["modules"].items():
        for kernel, decision in entry["kernels"].items():
            for target, figures in decision["results"].items():
                report = seen[(module, kernel, target)]
                if report["compiler"] != decision["compilers"][0]:
                    pytest.skip("the compiler moved since shapes.yaml was recorded")
                assert report["shape"] == decision["shape"]
                assert (report["spill_bytes"], report["private_bytes"]) == \
                    (figures["spill_bytes"], figures["private_bytes"])


@pytest.mark.parametrize("source, kernel", [
    (KERNELS / "sg32_accumulate.cl", "sg32_accumulate"), (KERNELS / "fma_tile.cl", "fma_tile"),
    (KERNELS / "private_array.cl", "private_histogram")])
def test_remedied_kernels_compute_the_same_results_on_the_cpu(sid_compiler, tmp_path, source, kernel):
    from zeinspect.app.equivalence import compare
    from zeinspect.judge.equivalence import launches

    original = spv_of(sid_compiler, source, tmp_path)
    launch = launches(source.read_text())[kernel]
    for size in (0, 16):
        got = compare(original, set_sub_group(original, kernel, size), launch)
        assert got.ran, got
        assert got.equal and got.outputs_compared > 0, got


def test_the_check_can_fail(sid_compiler, tmp_path):
    """A sub-group reduction over 32 lanes is not one over 16: the comparison must say so."""
    from zeinspect.app.equivalence import compare
    from zeinspect.judge.equivalence import launches

    source = TESTS_KERNELS / "subgroup_scan.cl"
    original = spv_of(sid_compiler, source, tmp_path)
    got = compare(original, set_sub_group(original, "subgroup_scan", 16), launches(source.read_text())["subgroup_scan"])
    assert got.ran and not got.equal and got.max_abs_diff > 0


def test_no_launch_description_is_not_a_claim(tmp_path):
    from zeinspect.judge.equivalence import launches

    assert launches((KERNELS / "clean.cl").read_text()) == {}
