"""SARIF 2.1.0 from an audit, checked against the official schema (OASIS, vendored in
tests/schemas with its licence)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from zeinspect.formats import sarif
from zeinspect.judge import ratchet
from zeinspect.judge.audit import audit
from zeinspect.model import Status

from ..fakes import report

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "sarif-schema-2.1.0.json").read_text())


def _audit(tmp_path):
    source = tmp_path / "k.cl"
    source.write_text("// a comment\n\n__kernel void spills(__global float* x) {}\n__kernel void over(int a) {}\n")
    rat = ratchet.parse("stale  *  0  64\n", str(tmp_path / "r.txt"))
    reports = [report("spills", "dg2-g10", spill=128, input=str(source)),
               report("spills", "bmg-g21", ip="20.1.0", spill=64, input=str(source)),
               report("over", "dg2-g10", status=Status.SCRATCH_OVERFLOW, input=str(source)),
               report("clean", "dg2-g10", input="lib.so[image 3]")]
    return audit(reports, rat, [])


def test_the_document_is_valid_sarif_2_1_0(tmp_path):
    doc = sarif.document(_audit(tmp_path), strict=True)
    jsonschema.validate(doc, SCHEMA)


def test_one_result_per_kernel_and_verdict_at_the_kernels_line(tmp_path):
    results = sarif.document(_audit(tmp_path), strict=False)["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert set(by_rule) == {"NEW", "OVERFLOW", "STALE"}  # nothing for clean kernels
    new = by_rule["NEW"]
    assert new["level"] == "error" and set(new["properties"]["targets"]) == {"dg2-g10", "bmg-g21"}
    assert new["properties"]["targets"]["dg2-g10"]["spill_bytes"] == 128
    assert new["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert by_rule["OVERFLOW"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    # A ratchet finding points at its line, and is a note unless the gate is strict.
    assert by_rule["STALE"]["level"] == "note"
    assert by_rule["STALE"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1


def test_a_librarys_findings_lead_by_cause_and_family_in_sarif_and_html():
    from zeinspect.formats import html
    from zeinspect.formats.audit import grouped_findings
    from zeinspect.formats.text import GROUPED_FROM

    many = GROUPED_FROM + 5
    reports = ([report(f"fmha::Fwd<int, {n}>", spill=64 * (n + 1), input="lib.so[.tgtimg[0]]")
                for n in range(many)]
               + [report(f"moe::Gate<{n}>", private=128, input="lib.so[.tgtimg[1]]")
                  for n in range(3)])
    result = audit(reports, ratchet.parse("", "r.txt"), [])
    lines = grouped_findings(result, strict=False)
    assert lines[0].startswith("by cause: ") and any(line.startswith("  Fwd: 25 instances, 25 use scratch")
                                                     for line in lines), lines
    doc = sarif.document(result, strict=False)
    jsonschema.validate(doc, SCHEMA)
    assert doc["runs"][0]["properties"]["grouped"] == lines
    page = html.page(result, [], strict=False)
    assert json.dumps(lines[0])[1:-1] in page
    # A handful of findings needs no grouping: the rows say it all.
    few = audit(reports[:3], ratchet.parse("", "r.txt"), [])
    assert grouped_findings(few, strict=False) == []
    assert "grouped" not in sarif.document(few, strict=False)["runs"][0]["properties"]
