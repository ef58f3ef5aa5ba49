"""The published JSON Schemas (docs/schemas/) hold for real outputs: the corpus, a real SYCL
library (dpctl's, installed with the test extras), a diff, an audit, and every gate
configuration the project ships."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import KERNELS, ROOT
from published import validate

SCHEMAS = ROOT / "docs" / "schemas"


def test_every_schema_is_a_valid_schema():
    for path in SCHEMAS.glob("*.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


def test_report_documents_of_the_corpus_and_a_real_library(cli, tmp_path):
    import dpctl

    library = next(Path(dpctl.__file__).parent.glob("libDPCTLSyclInterface.so*"))
    docs = []
    for args in ((KERNELS, "-t", "tgllp,dg2-g10", "--cost"), (library, "-t", "dg2-g10")):
        _, doc = cli.json("inspect", *args, "-q")
        validate(doc, "report-1.json")
        assert doc["reports"]
        docs.append(doc)
    assert any(r["cost"] and r["cost"]["in_loops"] for r in docs[0]["reports"])  # the costs were validated too


def test_audit_and_diff_documents(cli, tmp_path):
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    res = cli("audit", KERNELS / "clean.cl", KERNELS / "private_array.cl", "-t", "dg2-g10", "--ratchet", ratchet,
              "--format", "json", "-q")
    validate(json.loads(res.out), "audit-1.json")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "dg2-g10", "--json", "-q").out)
    new.write_text(cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "dg2-g10", "--json", "-q", "--grf", "256").out)
    res = cli("diff", old, new, "--format", "json")
    doc = json.loads(res.out)
    validate(doc, "diff-1.json")
    assert doc["entries"]


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("gate.yaml")
                                        if ".venv" not in p.parts))
def test_the_projects_gate_configurations(path):
    validate(yaml.safe_load((ROOT / path).read_text()) or {}, "gate-1.json")


def test_the_gate_schema_rejects_what_the_reader_rejects():
    with pytest.raises(jsonschema.ValidationError):
        validate({"targets": "default", "typo_key": 1}, "gate-1.json")
