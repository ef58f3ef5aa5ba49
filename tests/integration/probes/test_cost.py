"""What a kernel's scratch traffic costs (`--cost`), against an independent reading of IGC's own
ISA dump: plain ocloc with IGC_ShaderDumpEnable, the final dump (the one whose spill size is the
zebin's), its spill and fill messages by their comments, their sizes from the message
descriptors' `hword`/`oword x N`, and its loops from branches back to a label above them, all
read by the test oracle (tests/oracle.py: final_dump, isa_traffic) without zeinspect's reader.
On both compiler generations.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import oracle
import pytest
from conftest import KERNELS
from counting import counting_ocloc

VISA_STATS = oracle.VISA_STATS


def _final_dump(compiler, source: Path, target: str, *, stats: bool = False) -> tuple[str, list | None]:
    # -g, as explain builds OpenCL C (for its lines); the report under test was built so too.
    return oracle.final_dump(compiler, source, target, options="-g", stats=stats)


@pytest.mark.parametrize("kernel", ["sg32_accumulate.cl", "fma_tile.cl"])
def test_the_cost_is_what_the_dump_says(cli, compiler, kernel):
    target = "dg2-g10"
    source = KERNELS / kernel
    res = cli("kernel", source, "-t", target, "--compiler", compiler.id, "--cost", "--json", "-q", "--options", "-g")
    [report] = json.loads(res.out)["reports"]
    cost = report["cost"]
    truth = oracle.isa_traffic(_final_dump(compiler, source, target)[0])
    assert (cost["messages"]["spill"], cost["messages"]["fill"]) == (truth["spills"], truth["fills"])
    assert truth["loop_bytes"] > 0 and cost["in_loops"]
    assert sum(b for d, b in cost["bytes_by_depth"].items() if d != "0") == truth["loop_bytes"]
    # One loop holds the traffic in both kernels: its bytes per iteration are all of it.
    assert cost["per_iteration_bytes"] == truth["loop_bytes"] and cost["loop_depth"] == 1


def test_igcs_own_statistics_are_not_the_isas_count(compiler):
    """IGC's own figures, checked against the ISA, as the cost's source (docs: how it works,
    #cost).  vISA's JSON statistics (`IGC_VISAOptions=-dumpVISAJsonStats`, with the shader dump)
    are written by the current release IGC beside each dump; IGC 1.0 does not know the option.
    Their spill size is the zebin's, but their spill-and-fill count is not the number of spill
    and fill messages in the final ISA, and release builds write no loop-weighted count: so the
    cost is read from the ISA.  Should a compiler's count come to equal the ISA's, or a
    loop-weighted one appear, this fails and the statistics could be used instead."""
    source, target = KERNELS / "fma_tile.cl", "dg2-g10"
    if (compiler.igc_version or "").startswith("1."):
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([compiler.path, "compile", "-file", str(source), "-device", target, "-out_dir", tmp,
                                  "-output", "k", "-q"], capture_output=True, text=True, cwd=tmp, timeout=600,
                                 env={**os.environ, "IGC_VISAOptions": VISA_STATS})
        assert run.returncode != 0 and f"{VISA_STATS}: unrecognized option" in run.stdout + run.stderr
        return
    asm, stats = _final_dump(compiler, source, target, stats=True)
    [figures] = stats
    truth = oracle.isa_traffic(asm)
    want = next(iter(oracle.driver_figures(oracle.ocloc(compiler, source, target, options="-g").binary,
                                           True).values()))["spill"]
    assert figures["name"] == "fma_tile" and figures["GRFSpillSize"] == want > 0
    assert truth["spills"] and figures["numGRFSpillFill"] != truth["spills"] + truth["fills"], (figures, truth)
    assert not [k for k in figures if "weight" in k.lower() or "loop" in k.lower()], sorted(figures)


def test_a_kernel_without_spills_has_no_cost_and_text_ranks_by_cost(cli, sid_compiler):
    res = cli("inspect", KERNELS / "sg32_accumulate.cl", KERNELS / "fma_tile.cl", KERNELS / "clean.cl",
              "-t", "dg2-g10,bmg-g21", "--compiler", sid_compiler.id, "--cost", "--json", "-q")
    reports = json.loads(res.out)["reports"]
    assert all(r["cost"] is None for r in reports if not (r["scratch_bytes"] or r["scratch_space_bytes"]))
    measured = sorted((r for r in reports if r["cost"]), key=lambda r: -r["cost"]["per_iteration_bytes"])
    text = cli("inspect", KERNELS / "sg32_accumulate.cl", KERNELS / "fma_tile.cl", "-t", "dg2-g10,bmg-g21",
               "--compiler", sid_compiler.id, "--cost", "-q").out.splitlines()
    start = text.index(next(line for line in text if line.startswith("scratch traffic")))
    first = text[start + 1]
    assert first.strip().startswith(f"{measured[0]['kernel']} on {measured[0]['target']}")


@pytest.mark.parametrize("kernel", ["sg32_accumulate", "fma_tile"])
def test_a_native_binarys_cost_is_read_from_its_code_as_the_dump_counts_it(cli, compiler, kernel, tmp_path):
    """A shipped binary carries no IGC dump: its scratch users' cost is read from its own code
    (`ocloc disasm`).  Of the same build (a fat binary, -g), it equals what IGC's dump says on
    each device: every scratch message, the bytes by loop depth, the bytes per iteration.  The
    dump side is tested against an independent reading above."""
    targets = [t for t in ("dg2-g10", "pvc", "bmg-g21") if t in compiler.targets]
    zebin = [] if compiler.zebin_by_default else ["-internal_options", "-cl-intel-allow-zebin"]
    subprocess.run([compiler.path, "compile", "-file", str(KERNELS / f"{kernel}.cl"), "-device", ",".join(targets),
                    "-out_dir", str(tmp_path), "-output", "fat", "-options", "-g", *zebin], check=True,
                   capture_output=True, cwd=tmp_path, timeout=600)
    [fat] = [p for p in tmp_path.iterdir() if p.suffix not in (".spv", ".gen", ".dbg")]
    common = ("-t", ",".join(targets), "--compiler", compiler.id, "--cost", "--json", "-q")
    native = {r["target"]: r for r in json.loads(cli("kernel", fat, *common).out)["reports"]}
    dumped = {r["target"]: r for r in json.loads(cli("kernel", KERNELS / f"{kernel}.cl", "--options", "-g",
                                                      *common).out)["reports"]}
    assert set(native) == set(dumped) == set(targets)
    for target in targets:
        ours, igc = native[target], dumped[target]
        assert ours["spill_bytes"] == igc["spill_bytes"], target  # the same build
        if not igc["cost"]:
            assert not ours["cost"] and not ours["spill_bytes"], target
            continue
        messages = ours["cost"]["messages"]
        assert set(messages) == {"write", "read"}  # code does not say spill from private
        assert messages["write"] + messages["read"] == sum(igc["cost"]["messages"].values()), target
        assert messages["write"] >= igc["cost"]["messages"]["spill"], target
        for field in ("bytes_by_depth", "per_iteration_bytes", "loop_depth", "in_loops"):
            assert ours["cost"][field] == igc["cost"][field], (target, field)
    assert any(r["cost"] and r["cost"]["in_loops"] for r in native.values())  # the test sees loops


def test_a_rewritten_shape_is_costed_and_explained_from_its_own_build(cli, sid_compiler):
    """`--sub-group 16` on a kernel written for 32 builds the rewritten module; its cost and its
    explanation come from IGC's dump of that build, not of the module as written: the dump says
    SIMD16, and its spill size is the rewritten build's zebin figure."""
    source, target = KERNELS / "fma_tile.cl", "dg2-g10"
    common = ("-t", target, "--compiler", sid_compiler.id, "--json", "-q")
    [as16] = json.loads(cli("kernel", source, "--sub-group", "16", "--cost", *common).out)["reports"]
    [written] = json.loads(cli("kernel", source, "--cost", *common).out)["reports"]
    assert (as16["simd"], written["simd"]) == (16, 32)
    assert as16["spill_bytes"] != written["spill_bytes"]  # two builds: the test can tell them apart
    [explained] = json.loads(cli("explain", source, "--sub-group", "16", *common).out)["reports"]
    totals = explained["totals"]
    assert (totals["simd"], totals["spill_size"], totals["zebin_spill_size"]) == (16, as16["spill_bytes"],
                                                                                 as16["spill_bytes"])
    assert (as16["cost"]["messages"]["spill"], as16["cost"]["messages"]["fill"]) == (totals["spills"], totals["fills"])
    assert as16["cost"] != written["cost"]


def test_the_audit_costs_a_kernel_in_its_recorded_shape_from_that_build(cli, sid_compiler, tmp_path):
    """Under recorded shapes (`shapes:`), a scratch user's loop traffic is measured from the build
    the audit made (its options, its rewritten module): the cost `kernel` gives in that shape,
    not the module's as written."""
    project = tmp_path / "p"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "fma_tile.cl").write_bytes((KERNELS / "fma_tile.cl").read_bytes())
    (project / "shapes.yaml").write_text("schema: zeinspect.shapes/1\nmodules:\n  kernels/fma_tile.cl:\n"
                                         "    kernels:\n      fma_tile:\n        shape: {grf: default, sub_group: 16}\n")
    (project / "r.txt").write_text("")
    (project / "gate.yaml").write_text(f"targets: [dg2-g10]\nratchet: r.txt\ninputs: [kernels]\nshapes: shapes.yaml\n"
                                       f"cost: true\ncompiler: {sid_compiler.id}\n")
    res = cli("audit", "--config", "gate.yaml", "--format", "json", cwd=project)
    assert res.code == 1, res  # an unlisted scratch user
    [audited] = [v["report"] for v in json.loads(res.out)["verdicts"] if v["report"]]
    common = ("-t", "dg2-g10", "--compiler", sid_compiler.id, "--cost", "--json", "-q")
    [shaped] = json.loads(cli("kernel", project / "kernels" / "fma_tile.cl", "--sub-group", "16", *common).out)["reports"]
    [written] = json.loads(cli("kernel", project / "kernels" / "fma_tile.cl", *common).out)["reports"]
    assert audited["shape"]["sub_group"] == 16 and audited["spill_bytes"] == shaped["spill_bytes"]
    assert audited["cost"] == shaped["cost"] and audited["cost"] != written["cost"]


@pytest.mark.parametrize("form", ["opencl", "spirv"])
def test_the_shape_search_costs_every_kernel_from_its_module_shape_s_one_build(cli, sid_compiler, tmp_path, form):
    """`shapes --cost` on a module of two scratch users measures each shape's traffic from one
    dumping compile of the whole module in that shape (issue 62: per module, not per kernel); each
    kernel's figure is what `kernel` gives for it alone in the same shape (its own build, whose
    cost the tests above check against IGC's dump).  As SPIR-V, the module shapes are built as
    those dumping compiles from the start, their plain builds answered from them (probes.dumps)."""
    from sycl_builds import spirv_of

    source = tmp_path / "two.cl"
    source.write_text((KERNELS / "fma_tile.cl").read_text() + (KERNELS / "sg32_accumulate.cl").read_text())
    module = source
    if form == "spirv":
        module = tmp_path / "two.spv"
        module.write_bytes(spirv_of(sid_compiler, source, tmp_path, device="dg2-g10"))
    common = ("-t", "dg2-g10", "--compiler", sid_compiler.id, "--json", "-q")
    # Every compile of the search, counted by an ocloc that logs them (a cache of its own): plain
    # or dumping (IGC_ShaderDumpEnable in its environment).
    counted = tmp_path / "compiles.txt"
    counting = counting_ocloc(sid_compiler, tmp_path / "counting", counted)
    doc = json.loads(cli("shapes", module, "--cost", *common, env={"ZEINSPECT_OCLOC": str(counting),
                                                                   "ZEINSPECT_CACHE_DIR": str(tmp_path / "c")}).out)
    plain, dumping, processes = (counted.read_text().split().count(k) for k in ("plain", "1", "process"))
    # As SPIR-V, only the as-written build is compiled plain (it finds the scratch users); every
    # other module shape's plain build is its dumping compile's.  OpenCL C is dumped with -g:
    # each measured shape is compiled twice.
    assert dumping > 2
    assert plain == 1 if form == "spirv" else plain >= dumping - 1
    if form == "spirv":  # the dumping compiles several to an `ocloc multi` process, as plain builds are
        assert processes < plain + dumping
    measured = [(s["kernel"], r["shape"], r["costs"]) for s in doc["searches"] for r in s["rows"] if r["costs"]]
    assert {k for k, _, _ in measured} == {"fma_tile", "sg32_accumulate"}  # both kernels, several shapes
    assert len({json.dumps(shape, sort_keys=True) for _, shape, _ in measured}) > 1
    for kernel, shape, costs in measured:
        [alone] = json.loads(cli("kernel", module, "-k", kernel, "--grf", shape["grf"],
                                 "--sub-group", str(shape["sub_group"]), "--cost", *common).out)["reports"]
        assert costs["dg2-g10"] == alone["cost"], (kernel, shape)
