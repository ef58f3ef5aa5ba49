"""Triton's own tutorials, unedited and in place (../shared/realworld/triton-tutorials/), screened
offline for bmg-g21 as a new user runs them: no values given beyond a pointer type.

Each expectation is read from the module itself (the shapes its own test launches with, its
XPU config list) or from Triton and the compiler (Triton's metadata, the build options, the
first build Triton-XPU's own rule rebuilt).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, realworld

pytest.importorskip("triton.backends.intel.compiler")

TUTORIALS = realworld() / "triton-tutorials"
TARGET = "bmg-g21"
LARGE = "-cl-intel-256-GRF-per-thread"

pytestmark = pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no ../shared/realworld (set $ZEINSPECT_REALWORLD)")


def _triton(session_cache, *args, expect=(0, 1)):
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "zeinspect", "triton", *map(str, args), "-t", TARGET, "-q", "--json"],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode in expect, proc.stderr
    return json.loads(proc.stdout) if proc.returncode in (0, 1) else proc.stderr


def _notes(report) -> str:
    return " | ".join(report["notes"])


@pytest.mark.parametrize("spec, pointer", [("01-vector-add.py:add_kernel", "*fp32"),
                                           ("02-fused-softmax.py:softmax_kernel", "*fp32"),
                                           ("05-layer-norm.py:_layer_norm_fwd_fused", "*fp16")])
def test_a_tutorial_kernel_is_screened_with_the_values_its_module_launches_it_with(spec, pointer, session_cache,
                                                                                   sid_compiler):
    doc = _triton(session_cache, TUTORIALS / spec, "--signature", pointer, "--compiler", sid_compiler.id)
    [report] = doc["reports"]
    assert report["target"] == TARGET and report["spill_bytes"] is not None and report["grf"] in (128, 256)
    text = (TUTORIALS / spec.split(":")[0]).read_text()
    block = int(re.search(r"BLOCK_SIZE=(\d+): as the module's own code launches it", _notes(report))[1])
    if spec.startswith("01"):  # the launch writes the value itself
        assert block == int(re.search(r"BLOCK_SIZE=(\d+)\)", text)[1])
    elif spec.startswith("02"):  # next power of two of the columns its own test has
        cols = int(re.search(r"torch\.randn\((\d+), (\d+), device=DEVICE\)", text)[2])
        assert block == 2 ** math.ceil(math.log2(cols))
    else:  # min(64 KiB / fp32, next power of two of N) for its own test's N; 32 warps on XPU
        n = int(re.search(r"N = 32 if is_xpu_cri\(\) else (\d+)", text)[1])
        assert block == min(65536 // 4, 2 ** math.ceil(math.log2(n)))
        assert report["extra"]["triton"]["metadata"]["num_warps"] == 32  # Triton's own metadata


def test_every_xpu_config_of_the_matmul_tutorial_is_screened_and_the_retry_rule_holds(session_cache, sid_compiler):
    from triton.backends.compiler import GPUTarget

    from zeinspect.hardware import slm_per_work_group
    from zeinspect.triton.build.context import offline
    from zeinspect.triton.load import loader

    path = TUTORIALS / "03-matrix-multiplication.py"
    doc = _triton(session_cache, f"{path}:matmul_kernel", "--autotune", "--compiler", sid_compiler.id)
    with offline():
        module = loader.load(str(path), GPUTarget("xpu", {"name": TARGET, "arch": "bmg"}, 32))
    xpu = module.namespace["get_xpu_autotune_config"]()
    assert [c["constexprs"] for c in doc["configs"]] == [{k: v for k, v in c.kwargs.items() if k != "grf_mode"}
                                                         for c in xpu]
    assert sorted(r["config_index"] for r in doc["reports"]) == list(range(len(xpu)))
    for r in doc["reports"]:
        first = r["extra"]["triton"].get("first_build")
        if first is not None:  # Triton-XPU's load-time rule: over 1,000 bytes of spill, no register flag
            assert first["spill_bytes"] > 1000 and LARGE not in (first["options"] or "")
            assert LARGE in r["options"]
        elif r["status"] == "ok" and LARGE not in (r["options"] or ""):
            assert r["spill_bytes"] <= 1000
        # Shared local memory at launch against the target's per-work-group limit.
        assert (r["status"] == "slm_overflow") == (r["slm_bytes"] > slm_per_work_group(r["ip"]))
    # BLOCK 256x512x64 asks for 131,584 bytes: more than even Xe2's 128 KiB; it cannot launch,
    # and ranks last.
    over = {r["config_index"] for r in doc["reports"] if r["status"] == "slm_overflow"}
    assert over and doc["ranking"][-1] in over


def test_a_kernel_this_triton_cannot_build_says_why_in_one_line(session_cache, sid_compiler):
    spec = TUTORIALS / "06-fused-attention.py:_attn_fwd"
    err = _triton(session_cache, spec, "--autotune", "--signature", "*fp16,sm_scale=fp32", "--constexprs",
                  "HEAD_DIM=64,FP8_OUTPUT=False,STAGE=1,warp_specialize=False,IS_HOPPER=False",
                  "--compiler", sid_compiler.id, expect=(2,))
    [line] = err.strip().splitlines()
    assert "tensor descriptors" in line and str(spec) in line


def test_the_tutorials_folder_ends_every_launched_kernel_one_of_three_ways(session_cache, sid_compiler):
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "zeinspect", "triton", str(TUTORIALS), "--compiler", sid_compiler.id,
                           "-t", TARGET, "-q", "--json"], capture_output=True, text=True, env=env, timeout=900)
    doc = json.loads(proc.stdout)
    ended = len(doc["screened"]) + len(doc["unscreened"])
    assert ended > 0 and not doc["load_errors"]
    # A launched kernel left unscreened fails the run (exit 3), each named in an incident with why.
    assert doc["unscreened"] and proc.returncode == 3, proc.stderr
    assert doc["coverage"]["total"]["unread"] == len({u["kernel"] for u in doc["unscreened"]})
    for u in doc["unscreened"]:
        assert u["reason"] and "\n" not in u["reason"] and ("internal error" not in u["reason"])
        assert u["needs"] or "Triton could not compile it" not in u["reason"]
        assert any(i.startswith(f"{u['kernel']}: 1 declared kernel unread") for i in doc["incidents"]), u
    screened = {r["input"].split("[")[0] for r in doc["reports"]}
    assert screened == set(doc["screened"])
    assert f"{TUTORIALS / '01-vector-add.py'}:add_kernel" in doc["screened"]
