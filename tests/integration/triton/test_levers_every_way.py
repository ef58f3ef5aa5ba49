"""The levers on the module way and on one kernel without --autotune (issue 63: every lever on
every way in; a lever that cannot apply is one line that says why, never silence), on the
seed's cliff: kernels/triton_dot.py's 64x128x128 f16 dot, over the scratch cap on arl-s as
compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("triton.backends.intel.compiler")

DOT = ROOT / "kernels" / "triton_dot.py"
VALUES = ("--signature", "*fp16", "--constexprs", "M=64,N=128,K=128", "-t", "arl-s")


def _triton(session_cache, *args: object) -> subprocess.CompletedProcess:
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "zeinspect", "triton", *map(str, args), "-q"],
                          capture_output=True, text=True, env=env, timeout=900)


def test_stage_on_a_module_adds_each_kernel_staged_and_what_cannot_apply_is_one_line(session_cache, sid_compiler):
    proc = _triton(session_cache, DOT, *VALUES, "--stage", "--compiler", sid_compiler.id, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    by_input = {r["input"].rpartition(":")[2]: r for r in json.loads(proc.stdout)["reports"]}
    as_compiled, staged = by_input["dot_kernel"], by_input["dot_kernel[staged]"]
    # The premise, and what the staging pass makes of it: the dot staged in SLM, and it builds.
    assert as_compiled["status"] == "scratch_overflow"
    assert staged["status"] == "ok" and any(d["applied"] for d in staged["extra"]["triton"]["staging"]["dots"])
    for args, said in (((DOT, "--fix"), "--fix searches the levers of one kernel"),
                       ((f"{DOT}:dot_kernel", "--autotune", "--stage"), "--stage with --autotune")):
        bad = _triton(session_cache, *args, *VALUES)
        assert bad.returncode == 2 and said in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


SMALL = ("--signature", "*fp16", "--constexprs", "M=32,N=64,K=64", "-t", "arl-s")


@pytest.mark.slow  # the levers' search: every shape of a dot (a small one: the cliff's takes minutes)
def test_fix_on_one_kernel_without_autotune_searches_its_levers(session_cache, sid_compiler):
    proc = _triton(session_cache, f"{DOT}:dot_kernel", *SMALL, "--fix", "--compiler", sid_compiler.id, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    [report] = doc["reports"]
    assert report["status"] == "ok" and report["spill_bytes"] > 0  # the premise: it spills on arl-s
    remedy = doc["remedy"]
    # The chosen shape builds, with no more scratch than as compiled (that shape is among those
    # searched), and the text says the change.
    got = remedy["results"]["arl-s"]
    assert remedy["found"] and got["status"] == "ok", remedy
    assert got["spill_bytes"] + got["private_bytes"] <= report["spill_bytes"] + report["private_bytes"]
    text = _triton(session_cache, f"{DOT}:dot_kernel", *SMALL, "--fix", "--compiler", sid_compiler.id)
    assert f"remedy: {remedy['triton']}" in text.stdout
