"""The compiler's environment is part of every result: its cache key, its report, its diff.

An IGC variable changes what IGC builds (IGC_ExtraOCLOptions=-ze-opt-large-register-file gives
sg32_accumulate 256 registers and no spill on dg2-g10).  A run with it must never answer a run
without it from the cache, nor the other way round; each figure is what plain ocloc builds
under the same environment (the oracle).
"""

from __future__ import annotations

import json

import oracle
from conftest import KERNELS

KERNEL = KERNELS / "sg32_accumulate.cl"
TARGET = "dg2-g10"
VAR = {"IGC_ExtraOCLOptions": "-ze-opt-large-register-file"}


def truth(compiler, env: dict | None) -> dict:
    built = oracle.ocloc(compiler, KERNEL, TARGET, env=env)
    return oracle.driver_figures(built.binary, True)["sg32_accumulate"]


def kernel(cli, compiler, env=None, *extra):
    res = cli("kernel", KERNEL, "-t", TARGET, "--compiler", compiler.id, "--json", "-q", *extra, env=env)
    assert res.code == 0, res
    doc = json.loads(res.out)
    [report] = doc["reports"]
    return doc, report


def figures(report: dict) -> tuple:
    return report["grf"], report["spill_bytes"]


def test_a_run_with_an_igc_variable_never_answers_one_without_it(fresh_cli, sid_compiler):
    plain, under = truth(sid_compiler, None), truth(sid_compiler, VAR)
    assert (plain["grf"], plain["spill"]) != (under["grf"], under["spill"])  # the variable matters here

    first, a = kernel(fresh_cli, sid_compiler, VAR)
    assert first["stats"]["compiles"] == 1 and figures(a) == (under["grf"], under["spill"])
    second, b = kernel(fresh_cli, sid_compiler)
    assert second["stats"]["compiles"] == 1 and second["stats"]["cache_hits"] == 0
    assert figures(b) == (plain["grf"], plain["spill"])
    third, c = kernel(fresh_cli, sid_compiler, VAR)
    assert third["stats"]["compiles"] == 0 and figures(c) == figures(a)

    # Recorded in the report, the compiler's entry, the reproduce command and the summary.
    assert a["environment"] == VAR and b["environment"] == {}
    assert first["compilers"][0]["environment"] == VAR and second["compilers"][0]["environment"] == {}
    assert a["command"].startswith("IGC_ExtraOCLOptions=-ze-opt-large-register-file ")
    assert a["input_sha256"] and a["input_sha256"] == b["input_sha256"] and first["zeinspect"]
    res = fresh_cli("inspect", KERNEL, "-t", TARGET, "-q", env=VAR)
    assert "built under IGC_ExtraOCLOptions=-ze-opt-large-register-file" in res.out.splitlines()[0]


def test_env_options_and_the_gate_give_the_environment_over_the_callers(fresh_cli, sid_compiler, tmp_path):
    under = truth(sid_compiler, VAR)
    _, given = kernel(fresh_cli, sid_compiler, None, "--env", "IGC_ExtraOCLOptions=-ze-opt-large-register-file")
    assert figures(given) == (under["grf"], under["spill"]) and given["environment"] == VAR
    # NAME= drops a variable the caller has.
    plain = truth(sid_compiler, None)
    _, dropped = kernel(fresh_cli, sid_compiler, VAR, "--env", "IGC_ExtraOCLOptions=")
    assert figures(dropped) == (plain["grf"], plain["spill"]) and dropped["environment"] == {}
    gate = tmp_path / "gate.yaml"
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    gate.write_text(f"targets: {TARGET}\nratchet: {ratchet}\ninputs: [{KERNEL}]\n"
                    "environment:\n  IGC_ExtraOCLOptions: -ze-opt-large-register-file\n")
    res = fresh_cli("audit", "--config", gate, "--format", "json", "--compiler", sid_compiler.id, "-q")
    doc = json.loads(res.out)
    [verdict] = [v for v in doc["verdicts"] if v.get("report")]
    assert verdict["report"]["environment"] == VAR and (verdict["report"]["grf"], verdict["report"]["spill_bytes"]) \
        == (under["grf"], under["spill"])
    assert "built under IGC_ExtraOCLOptions" in doc["summary"]["text"]


def test_diff_attributes_a_change_to_the_environment(fresh_cli, sid_compiler, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(fresh_cli("kernel", KERNEL, "-t", TARGET, "--json", "-q").out)
    new.write_text(fresh_cli("kernel", KERNEL, "-t", TARGET, "--json", "-q", env=VAR).out)
    res = fresh_cli("diff", old, new, "--json")
    doc = json.loads(res.out)
    assert doc["environments"] == {"old": {}, "new": VAR}
    [entry] = [e for e in doc["entries"] if e["change"] != "same"]
    assert any("the compiler's environment alone changed: IGC_ExtraOCLOptions unset -> "
               "-ze-opt-large-register-file" in w for w in entry["why"])
    text = fresh_cli("diff", old, new).out
    assert "built under different compiler environments" in text.splitlines()[2]
