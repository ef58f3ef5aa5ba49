"""torch.compile(mode="max-autotune") under `triton --run` (triton.capture.inductor._templates):
Inductor's own Triton GEMM templates for xpu, every config it offers screened (under Inductor's
own cap on their number), the PTSS cliff of the design this product comes from and its staged
remedy, and the fix loop per config (issue 63).

The stand-in answers as bmg-g21 (the first target): Inductor uses its GEMM templates only on a
GPU it calls big (16 Xe cores or more, utils.is_big_gpu), which arl-s is not; the configs it
generates are then screened on arl-s as well, as a cache written on one GPU is on another.
"""

from __future__ import annotations

import json
import os
import sys

import oracle
import pytest
from conftest import ROOT, Cli, _clean_environ

TORCH = ROOT / "build" / "torch-cpu"
pytestmark = pytest.mark.skipif(not (TORCH / "torch").is_dir() and not os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS"),
                                reason="no CPU torch in build/torch-cpu (scripts/setup.sh installs it)")

def linear(configs: int) -> str:
    """A bf16 linear layer under max-autotune, with Inductor's own cap on the configs it offers
    (its test knob, config.test_configs.max_mm_configs: the first `configs` of its list, each
    scaled to the problem, duplicates dropped), as Inductor's own tests keep their runs short.
    Every config of a larger problem (23), each searched on two targets, took one test 32 minutes
    beside the other slow tests, past what CI's 90 minutes leave to it."""
    return f'''
import torch
import torch._inductor.config
torch._inductor.config.test_configs.max_mm_configs = {configs}
torch.manual_seed(0)
linear = torch.nn.Linear(512, 256, bias=False).to("xpu").to(torch.bfloat16)
x = torch.randn(64, 512, device="xpu", dtype=torch.bfloat16)
with torch.no_grad():
    torch.compile(linear, mode="max-autotune")(x)
'''


SCREENED = 13
"""The 13th config of this problem, 64x128 tiles with BLOCK_K=128, is over the cap on arl-s."""
LINEAR = linear(SCREENED)
SEARCHED = 4
"""The first four spill on arl-s (from 5 to 69 KB) and build clean on bmg-g21: four searches,
two of them fixed by one change."""
TEMPLATE = "triton::mm for mm (64x512, 512x256 -> bfloat16)"


def run_linear(text: str, tmp_path, session_cache, *extra: str) -> dict:
    script = tmp_path / "linear.py"
    script.write_text(text)
    # Every build's files kept (a clean one's too): the oracle rebuilds the SPIR-V of clean builds.
    cli = Cli({**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(session_cache), "PYTHONPATH": str(ROOT),
               "ZEINSPECT_TRITON_ARTIFACTS": "1"})
    # A hang guard, not a time goal (those are the bench's).
    res = cli("triton", "--run", "-t", "bmg-g21,arl-s", "--json", "-q", *extra, "--", sys.executable, str(script),
              env={"PYTHONPATH": str(TORCH)}, timeout=1800)
    assert res.code in (0, 1), res
    doc = json.loads(res.out)
    assert doc["capture"]["exit_code"] == 0, doc["notes"]
    return doc


def rows_on(doc: dict) -> dict[str, dict[str, dict]]:
    return {t: {r["kernel"]: r for r in doc["reports"] if r["target"] == t} for t in ("arl-s", "bmg-g21")}


def staged(row: str) -> str:
    """The name of a row's staged build (`kernel[values]` -> `kernel[values, staged]`)."""
    return row[:-1] + ", staged]"


@pytest.mark.slow  # every config of Inductor's mm template on one problem, on 2 targets, as launched and staged
def test_max_autotune_templates_are_screened_and_the_cliff_builds_staged(tmp_path, session_cache, sid_compiler):
    doc = run_linear(LINEAR, tmp_path, session_cache, "--stage")
    capture = doc["capture"]
    # Every config of the template, each its own module, through Triton's front end in the run.
    templates = [s for s in capture["specializations"] if s["inductor_template"]]
    assert len(templates) == SCREENED, [(s["values"], s["inductor_graph"], s["kernel"]) for s in templates]
    assert all(s["inductor_template"] == TEMPLATE and s["ttir"] and not s["not_screened"] and "BLOCK_K=" in s["values"]
               for s in templates)
    assert len({s["values"] for s in templates}) == len(templates)
    total = doc["coverage"]["total"]  # each specialization twice: as launched and staged (--stage)
    assert total["declared"] == total["reported"] == 2 * len(capture["specializations"])
    # The premise: the PTSS cliff on arl-s, where the same configs build on bmg-g21.
    on = rows_on(doc)
    launched = {t: {k: r for k, r in rows.items() if not k.endswith(", staged]")} for t, rows in on.items()}
    over = [k for k, r in launched["arl-s"].items() if r["status"] == "scratch_overflow"]
    assert over and all(launched["bmg-g21"][k]["status"] == "ok" for k in over)
    # Each config also built staged (--stage: the SLM staging pass on its TTGIR), and the ones
    # over the cap on arl-s build staged there: the seed's remedy, on Inductor's own templates.
    for t, rows in launched.items():
        assert all(staged(k) in on[t] for k in rows), sorted(on[t])
    for k in over:
        built = on["arl-s"][staged(k)]
        assert built["status"] == "ok", built
        oracle.check_triton_report(built, sid_compiler)


@pytest.mark.slow  # four configs of Inductor's mm template, each finding searched over the Triton levers on 2 targets
def test_each_finding_of_max_autotune_templates_is_searched(tmp_path, session_cache, sid_compiler):
    doc = run_linear(linear(SEARCHED), tmp_path, session_cache, "--fix")
    templates = [s for s in doc["capture"]["specializations"] if s["inductor_template"]]
    assert len(templates) == SEARCHED and all(s["inductor_template"] == TEMPLATE for s in templates)
    on = rows_on(doc)
    # Every config with a finding on a target (over the cap, or spilling) was searched.
    findings = {k for t in on for k, r in on[t].items() if r["status"] != "ok" or r["spill_bytes"] + r["private_bytes"]}
    fixes = doc["fixes"]["specializations"]
    assert findings and {f["row"] for f in fixes} == findings
    for fix in fixes:
        found = fix["record"]
        # Where the staging pass applies and no lever cleans, the change shown is a staged one.
        if found["staging_applies"] and not found["cleans"] and found["found"]:
            assert found["shape"]["stage"], fix
        if not found["found"]:
            continue
        # The chosen build is never worse than the config as launched, and over the cap nowhere.
        for target, got in found["results"].items():
            launched = on[target][fix["row"]]
            assert got["status"] == "ok", (fix["row"], target, got)
            if launched["status"] == "ok":
                assert got["spill_bytes"] + got["private_bytes"] <= launched["spill_bytes"] + launched["private_bytes"]
            if target != "arl-s":  # the oracle where the spills are
                continue
            build = got["build"]
            report = {"kernel": fix["row"], "target": target, "options": build["options"], "simd": got["simd"],
                      "grf": got["grf"], "spill_bytes": got["spill_bytes"], "private_bytes": got["private_bytes"],
                      "extra": {"triton": {"artifacts": build["artifacts"],
                                           "metadata": {"name": build["name"],
                                                        "threads_per_warp": build["threads_per_warp"]}}}}
            oracle.check_triton_report(report, sid_compiler)
    # One template on one problem: its configs grouped by the change that fixes them, each group
    # with the range of its members' config values.
    groups = doc["fixes"]["groups"]
    assert sum(len(g["specializations"]) for g in groups) == len(fixes) and len(groups) < len(fixes)
    assert all(g["template"] == TEMPLATE and "inductor_choices" in g["inductor"] for g in groups)
    config_of = {f["row"]: f["config"] for f in fixes}
    for g in groups:
        members = [config_of[row] for row in g["specializations"]]
        assert g["configs"] == {key: sorted({m[key] for m in members}) for key in members[0]}, g


PRUNED = '''
import torch
import zeinspect.triton
# Inductor's own way in (config.inductor_choices_class): the configs that do not build on arl-s
# are dropped before Inductor compiles or benchmarks them.
torch._inductor.config.inductor_choices_class = zeinspect.triton.inductor_choices(targets=("arl-s",))
''' + LINEAR


@pytest.mark.slow  # two runs of Inductor's mm template: as it is, and with the prune hook installed
def test_the_prune_hook_drops_before_inductor_compiles_exactly_the_configs_that_do_not_build(tmp_path, session_cache):
    cli = Cli({**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(session_cache), "PYTHONPATH": str(ROOT)})
    docs = {}
    for name, text in (("plain", LINEAR), ("pruned", PRUNED)):
        script = tmp_path / f"{name}.py"
        script.write_text(text)
        res = cli("triton", "--run", "-t", "bmg-g21,arl-s", "--json", "-q", "--", sys.executable, str(script),
                  env={"PYTHONPATH": os.pathsep.join((str(TORCH), str(ROOT)))})
        assert res.code in (0, 1), res
        docs[name] = json.loads(res.out)
        assert docs[name]["capture"]["exit_code"] == 0, docs[name]["notes"]

    def configs(doc: dict) -> dict[str, str]:
        """Each template config the run generated (its values) -> its status on arl-s."""
        rows = {r["kernel"]: r["status"] for r in doc["reports"] if r["target"] == "arl-s"}
        return {s["values"]: next(status for row, status in rows.items() if row.endswith(f"[{s['values']}]"))
                for s in doc["capture"]["specializations"] if s["inductor_template"]}

    plain, pruned = configs(docs["plain"]), configs(docs["pruned"])
    assert any(status != "ok" for status in plain.values())  # the premise: configs over the cap on arl-s
    assert set(pruned) == {values for values, status in plain.items() if status == "ok"}
    assert all(status == "ok" for status in pruned.values())
