"""What a kernel's scratch traffic costs (`--cost`), against an independent reading of IGC's own
ISA dump: plain ocloc with IGC_ShaderDumpEnable, the final dump (the one whose spill size is the
zebin's), its spill and fill messages by their comments, their sizes from the message
descriptors' `hword`/`oword x N`, and its loops from branches back to a label above them, all
read here without zeinspect's reader.  On both compiler generations.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import oracle
import pytest
from conftest import KERNELS

LABEL = re.compile(r"^\s*([A-Za-z_][\w.$]*):\s*(//.*)?$")
SIZE = re.compile(r"\b(hword|oword)\b[^/]*? x(\d+)")


def _final_dump(compiler, source: Path, target: str) -> str:
    """The kernel's final ISA: of IGC's dumps (a retry writes a second), the one whose spill size
    is the zebin's."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "IGC_ShaderDumpEnable": "1", "IGC_DumpToCustomDir": tmp}
        # -g, as explain builds OpenCL C (for its lines); the report under test was built so too.
        subprocess.run([compiler.path, "compile", "-file", str(source), "-device", target, "-out_dir", tmp,
                        "-output", "k", "-options", "-g"], check=True, capture_output=True, env=env, cwd=tmp,
                       timeout=600)
        dumps = [p.read_text(errors="replace") for p in sorted(Path(tmp).rglob("*_entry_*.asm"))]
    spill = oracle.driver_figures(oracle.ocloc(compiler, source, target, options="-g").binary, True)
    want = next(iter(spill.values()))["spill"]
    sizes = [int(m.group(1)) if (m := re.search(r"^//\.spill size (\d+)", d, re.M)) else 0 for d in dumps]
    # IGC 1.0 rounds the spill space its zebin asks for up to a power of two.
    matching = [d for d, s in zip(dumps, sizes) if s == want or (s and 1 << (s - 1).bit_length() == want)]
    return (matching or dumps)[-1]


def _independent(asm: str) -> dict:
    rows = asm.splitlines()
    labels: dict[str, int] = {}
    loops = []
    for i, row in enumerate(rows):
        m = LABEL.match(row)
        if m:
            labels[m.group(1)] = i
            continue
        code = row.partition("//")[0]
        if re.search(r"\b(while|goto|jmpi)\b", code):
            loops += [(labels[t], i) for t in re.findall(r"\b([A-Za-z_][\w.$]*)\b", code) if t in labels]
    spills = fills = in_loops = 0
    for i, row in enumerate(rows):
        comment = row.partition("//")[2]
        kind = ("spill" if "scratch space spill" in comment or "spill to offset" in comment else
                "fill" if "scratch space fill" in comment or "fill from offset" in comment else None)
        if kind is None:
            continue
        spills += kind == "spill"
        fills += kind == "fill"
        size = SIZE.search(comment)
        if size and any(a <= i <= b for a, b in loops):
            in_loops += {"hword": 32, "oword": 16}[size.group(1)] * int(size.group(2))
    return {"spills": spills, "fills": fills, "loop_bytes": in_loops}


@pytest.mark.parametrize("kernel", ["sg32_accumulate.cl", "fma_tile.cl"])
def test_the_cost_is_what_the_dump_says(cli, compiler, kernel):
    target = "dg2-g10"
    source = KERNELS / kernel
    res = cli("kernel", source, "-t", target, "--compiler", compiler.id, "--cost", "--json", "-q", "--options", "-g")
    [report] = json.loads(res.out)["reports"]
    cost = report["cost"]
    truth = _independent(_final_dump(compiler, source, target))
    assert (cost["messages"]["spill"], cost["messages"]["fill"]) == (truth["spills"], truth["fills"])
    assert truth["loop_bytes"] > 0 and cost["in_loops"]
    assert sum(b for d, b in cost["bytes_by_depth"].items() if d != "0") == truth["loop_bytes"]
    # One loop holds the traffic in both kernels: its bytes per iteration are all of it.
    assert cost["per_iteration_bytes"] == truth["loop_bytes"] and cost["loop_depth"] == 1


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


def test_a_native_binarys_scratch_users_are_said_unmeasured_never_left_blank(cli, sid_compiler, tmp_path):
    built = oracle.ocloc(sid_compiler, KERNELS / "sg32_accumulate.cl", "dg2-g10")
    assert built.binary is not None, built.log[-1000:]
    zebin = tmp_path / "k.zebin"
    zebin.write_bytes(built.binary)
    doc = json.loads(cli("inspect", zebin, "--cost", "--json", "-q").out)
    users = [r for r in doc["reports"] if r["spill_bytes"] or r["private_bytes"]]
    assert users and all(r["cost"] is None for r in users)
    assert any(n.startswith(f"--cost: {len(users)} scratch users read from native images are not measured")
               for n in doc["notes"]), doc["notes"]


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
