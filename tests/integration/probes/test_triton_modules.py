"""Triton modules as their users write them (tests/kernels/triton/): torch imported at the top,
configs built through the driver, program code at the end; every autotune config screened.

Expectations come from the compiler: a reproduce command run by hand gives the report's
figures, a flagged config asks for more shared local memory than a work-group has (Triton's
own metadata), and Triton's rebuild rule fires only where its condition holds.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from zeinspect.model import Status

MODULES = ROOT / "tests" / "kernels" / "triton"
SLM = 65536


@pytest.fixture(scope="module")
def xpu_target():
    pytest.importorskip("triton.backends.intel.compiler")
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": "bmg-g21", "has_subgroup_matrix_multiply_accumulate": True,
                             "sub_group_sizes": [16, 32]}, 32)


def test_loading_runs_no_program_code(xpu_target):
    from zeinspect.probes import triton_module

    loaded = triton_module.load(str(MODULES / "matmul_tutorial.py"), xpu_target)
    ns = loaded.namespace
    # The module ends in a `raise` and tensor code: neither ran, and torch is not installed.
    assert "a" not in ns and loaded.skipped["a"] > 0
    assert isinstance(ns["torch"], triton_module.Placeholder)
    configs = loaded.kernel("matmul_kernel").configs  # built by a helper that asked the driver
    assert len(configs) == 4 and configs[0].kwargs["BLOCK_SIZE_N"] == 256


def test_a_name_that_did_not_run_is_named_with_its_line(tmp_path, xpu_target):
    from zeinspect.errors import InputError
    from zeinspect.probes import triton_module

    source = tmp_path / "uses_tensor.py"
    source.write_text("import torch\nimport triton\nSCALE = torch.ones(1).item()\n\n"
                      "@triton.jit(do_not_specialize=[SCALE])\ndef k(x_ptr):\n    pass\n")
    with pytest.raises(InputError) as err:
        triton_module.load(str(source), xpu_target)
    line = err.value.one_line()
    assert str(source) in line and "'SCALE'" in line and "line 3" in line


@pytest.fixture(scope="module")
def screen(tmp_path_factory, sid_compiler, session_cache):
    import json
    import os
    import sys

    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(session_cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "zeinspect", "triton", f"{MODULES / 'matmul_tutorial.py'}:matmul_kernel",
                           "--autotune", "--signature", "*fp16", "-t", "bmg-g21", "--compiler", sid_compiler.id,
                           "--json"], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_every_config_is_screened_and_one_that_cannot_launch_is_flagged(screen):
    assert len(screen["configs"]) == 4 and len(screen["reports"]) == 4
    for report in screen["reports"]:
        assert set(report["config"]) == {"constexprs", "num_warps", "num_stages", "grf_mode"}
        shared = report["extra"]["triton"]["metadata"]["shared"]
        assert report["slm_bytes"] == shared  # what Triton asks for at launch
        over = report["status"] == Status.SLM_OVERFLOW.value
        assert over == (shared > SLM and report["status"] not in ("scratch_overflow", "build_failed"))
    assert any(r["status"] == "slm_overflow" for r in screen["reports"])
    assert screen["ranking"][-1] in {r["config_index"] for r in screen["reports"] if r["status"] == "slm_overflow"}


def test_tritons_rebuild_rule_fires_where_its_condition_holds(screen):
    for report in screen["reports"]:
        first = report["extra"]["triton"].get("first_build")
        if first is None:
            assert not report["spill_bytes"] or report["spill_bytes"] <= 1000 or "GRF" in report["options"]
            continue
        assert first["spill_bytes"] > 1000 and first["grf"] == 128
        assert "-cl-intel-256-GRF-per-thread" in report["options"] and report["grf"] == 256


def test_the_reproduce_command_runs_and_gives_the_same_figures(screen, tmp_path):
    from zeinspect.inputs.zebin import read_zebin

    report = next(r for r in screen["reports"] if r["status"] == "ok" or r["status"] == "slm_overflow")
    subprocess.run(shlex.split(report["command"]), cwd=tmp_path, check=True, capture_output=True, timeout=300)
    (binary,) = [p for p in Path(tmp_path).iterdir() if p.suffix == ".bin" or p.name.endswith(report["target"])]
    (kernel,) = read_zebin(binary.read_bytes(), "reproduced").kernels
    assert (kernel.spill_bytes, kernel.private_bytes, kernel.grf) == (
        report["spill_bytes"], report["private_bytes"], report["grf"])


@pytest.mark.parametrize("module, kernel, constexprs", [
    ("softmax.py", "softmax_kernel", "BLOCK_SIZE=1024,num_stages=2"),
    ("attention.py", "attention_kernel", "BLOCK_M=64,BLOCK_N=64,HEAD_DIM=64"),
])
def test_common_patterns_audit_offline(cli, sid_compiler, module, kernel, constexprs):
    code, doc = cli.json("triton", f"{MODULES / module}:{kernel}", "--signature", "*fp16", "--constexprs", constexprs,
                         "-t", "bmg-g21", "--compiler", sid_compiler.id)
    (report,) = doc["reports"]
    assert report["status"] == "ok" and report["slm_bytes"] == report["extra"]["triton"]["metadata"]["shared"]
    assert any("typed i32 by default" in n for n in report["notes"])
