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


MATMUL = """
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_K": k}, num_warps=4) for k in (16, 128)], key=["K"])
@triton.jit
def mm(a, b, c, K, M: tl.constexpr, N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    acc = tl.zeros((M, N), tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        x = tl.load(a + rm[:, None] * K + rk[None, :])
        y = tl.load(b + rk[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)
"""

RUN = """
import torch
from kpkg.mm import mm

a = torch.randn(16, 256, device="xpu", dtype=torch.float16)
b = torch.randn(256, 32, device="xpu", dtype=torch.float16)
c = torch.empty(16, 32, device="xpu", dtype=torch.float32)
mm[(1,)](a, b, c, 256, M=16, N=32)
"""

TORCH = ROOT / "build" / "torch-cpu"


@pytest.mark.skipif(not (TORCH / "torch").is_dir() and not os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS"),
                    reason="no CPU torch in build/torch-cpu (scripts/setup.sh installs it)")
def test_a_smaller_k_block_is_the_last_lever_with_its_cost(session_cache, sid_compiler, tmp_path):
    """Under --run --fix: an autotuned K-loop matmul whose BLOCK_K=128 config spills on arl-s (its
    FMA dot too small for the staging pass) and whose BLOCK_K=16 config does not.  No lever of the
    first config's own build cleans it, so the change is the other config, with its figures; the
    group tells the cost (occupancy and SLM, before and after); a re-run reads the record back."""
    (tmp_path / "kpkg").mkdir()
    (tmp_path / "kpkg" / "__init__.py").write_text("")
    (tmp_path / "kpkg" / "mm.py").write_text(MATMUL)
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=os.pathsep.join(map(str, (ROOT, TORCH, tmp_path))))
    records = tmp_path / "fixes.yaml"

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "zeinspect", "triton", "--run", "-t", "arl-s", "--fix", "--compiler",
                               sid_compiler.id, "--write", str(records), "-q", *extra, "--", sys.executable,
                               str(tmp_path / "run.py")], capture_output=True, text=True, env=env, timeout=900,
                              cwd=tmp_path)

    proc = run("--json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    reports = {r["kernel"]: r for r in doc["reports"]}
    [small] = [r for k, r in reports.items() if "BLOCK_K=16," in k]
    [large] = [r for k, r in reports.items() if "BLOCK_K=128," in k]
    # The premise, from the compiler's own figures: the large K block spills, the small one does not.
    assert large["spill_bytes"] + large["private_bytes"] > 0 and small["spill_bytes"] + small["private_bytes"] == 0
    [fix] = doc["fixes"]["specializations"]
    found = fix["record"]
    assert fix["row"] == large["kernel"] and found["cleans"] and found["triton"] == "BLOCK_K=16"
    assert found["k_block"] == {"name": "BLOCK_K", "value": 16, "row": small["kernel"]}
    result = found["results"]["arl-s"]
    assert (result["grf"], result["spill_bytes"], result["cost"]["slm_bytes"]) == (small["grf"], 0, small["slm_bytes"])
    # The cost: occupancy and SLM of the config as launched, then of the change.
    from zeinspect import occupancy

    def busy(r: dict) -> float:
        return round(occupancy.limits(r["ip"], grf_count=r["grf"], simd=r["simd"], slm_bytes=r["slm_bytes"] or 0,
                                      wg_size=r["work_group_size"]).xe_core_occupancy, 4)

    [group] = doc["fixes"]["groups"]
    cost = group["cost"]["arl-s"]
    # ([least, most] over the group's members: one member here.)
    assert cost["as_launched_occupancy"] == [busy(large)] * 2 and cost["chosen_occupancy"] == [busy(small)] * 2
    assert cost["as_launched_slm_bytes"] == [large["slm_bytes"]] * 2 and cost["chosen_slm_bytes"] == [small["slm_bytes"]] * 2
    # The text names the change and its cost; a re-run reads the record back instead of searching.
    text = run()
    assert "BLOCK_K=16: builds without scratch" in text.stdout and "cost: arl-s occupancy" in text.stdout
    again = json.loads(run("--json").stdout)
    assert again["fixes"]["specializations"][0]["record"].get("read_back") is True
