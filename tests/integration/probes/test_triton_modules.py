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

from zeinspect.hardware import slm_per_work_group
from zeinspect.model import Status

MODULES = ROOT / "tests" / "kernels" / "triton"


@pytest.fixture(scope="module")
def xpu_target():
    pytest.importorskip("triton.backends.intel.compiler")
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": "bmg-g21", "has_subgroup_matrix_multiply_accumulate": True,
                             "sub_group_sizes": [16, 32]}, 32)


def test_loading_runs_no_program_code(xpu_target):
    from zeinspect.triton.load import loader as triton_module
    from zeinspect.triton.model.placeholder import Placeholder

    loaded = triton_module.load(str(MODULES / "matmul_tutorial.py"), xpu_target)
    ns = loaded.namespace
    # The module ends in a `raise` and tensor code: neither ran, and torch is not installed.
    assert "a" not in ns and loaded.skipped["a"] > 0
    assert isinstance(ns["torch"], Placeholder)
    configs = loaded.kernel("matmul_kernel").configs  # built by a helper that asked the driver
    assert len(configs) == 4 and configs[0].kwargs["BLOCK_SIZE_N"] == 256


def test_a_name_that_did_not_run_is_named_with_its_line(tmp_path, xpu_target):
    from zeinspect.errors import InputError
    from zeinspect.triton.load import loader as triton_module

    source = tmp_path / "uses_tensor.py"
    source.write_text("import torch\nimport triton\nSCALE = torch.ones(1).item()\n\n"
                      "@triton.jit(do_not_specialize=[SCALE])\ndef k(x_ptr):\n    pass\n")
    # Loading goes on past what did not run; it is an error where the kernel needs it.
    loaded = triton_module.load(str(source), xpu_target)
    with pytest.raises(InputError) as err:
        loaded.kernel("k")
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
                           "--explain", "--json"], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_every_config_is_screened_and_what_cannot_launch_is_flagged(screen):
    assert len(screen["configs"]) == 4 and len(screen["reports"]) == 4
    for report in screen["reports"]:
        assert set(report["config"]) == {"constexprs", "num_warps", "num_stages", "grf_mode"}
        shared = report["extra"]["triton"]["metadata"]["shared"]
        assert report["slm_bytes"] == shared  # what Triton asks for at launch
        over = report["status"] == Status.SLM_OVERFLOW.value
        limit = slm_per_work_group(report["ip"])  # 64 KiB up to Xe-LPG, 128 KiB on Xe2
        assert over == (shared > limit and report["status"] not in ("scratch_overflow", "build_failed"))
    # Config 4 asks for 80 KiB: over what Xe-LPG has, within bmg-g21's 128 KiB (the real
    # tutorial's config that cannot launch on bmg-g21 is in tests/integration/triton/).
    assert any(r["slm_bytes"] > 64 * 1024 for r in screen["reports"])
    # The K loop carries a_ptrs and b_ptrs: tensors of pointers, read from the TTGIR.
    assert all(r["extra"]["triton"]["loop_carried"]["pointer_bytes_per_lane"] > 0 for r in screen["reports"])
    worst = {r["config_index"] for r in screen["reports"] if r["status"] != "ok"}
    assert not worst or screen["ranking"][-1] in worst


def test_explain_covers_every_config_that_uses_scratch(screen):
    """--autotune --explain: one explanation per config whose build uses scratch memory, of the
    build the screen reports (same spill size as its zebin)."""
    scratch = {str(r["config_index"]): r for r in screen["reports"] if r["spill_bytes"] or r["private_bytes"]}
    assert scratch and set(screen["explain"]) == set(scratch)
    for index, doc in screen["explain"].items():
        (e,) = doc["reports"]
        assert e["totals"]["zebin_spill_size"] == scratch[index]["spill_bytes"]
        assert e["totals"]["spills"] + e["totals"]["fills"] > 0 or not scratch[index]["spill_bytes"]


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


def _autotuner(configs, hook):
    """Triton's own Autotuner around the tutorial's kernel, as @triton.autotune builds it."""
    import triton
    from triton.backends.compiler import GPUTarget

    from zeinspect.triton.build.context import offline
    from zeinspect.triton.load import loader as triton_module
    from zeinspect.triton.load.module import jit_function
    from zeinspect.triton.offline.driver import OfflineDriver

    target = GPUTarget("xpu", {"name": "bmg-g21"}, 32)
    with offline():
        jit = jit_function(triton_module.load(str(MODULES / "matmul_tutorial.py"), target).kernel("matmul_kernel"))
    triton.runtime.driver.set_active(OfflineDriver(target))  # no GPU: as when zeinspect loads a module
    try:
        tuner = triton.autotune(configs=configs, key=["M", "N", "K"],
                                prune_configs_by={"early_config_prune": hook})(jit)
    finally:
        triton.runtime.driver.reset_active()
    # What Autotuner.run sets before it prunes: the launch's named arguments (no tensors here).
    tuner.nargs = dict(a_ptr=None, b_ptr=None, c_ptr=None, M=512, N=512, K=512, stride_am=512, stride_ak=1,
                       stride_bk=512, stride_bn=1, stride_cm=512, stride_cn=1)
    return tuner


@pytest.fixture
def session_cache_env(monkeypatch, session_cache):
    """The hook runs in this process: give it the session's build cache (the screen filled it)."""
    monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(session_cache))


def test_the_prune_hook_keeps_exactly_the_configs_without_a_finding(screen, sid_compiler, session_cache_env):
    import os
    import sys

    from triton.backends import backends

    import zeinspect.triton

    tuner = _autotuner(_tutorial_configs(), zeinspect.triton.prune_configs(
        targets=("bmg-g21",), max_spill_bytes=0, signature="*fp16", compiler=sid_compiler.id))
    before = (os.environ.get("TRITON_CACHE_DIR"), backends["intel"], set(sys.modules))
    kept = tuner.prune_configs({})
    # The hook runs inside the user's Triton process: it leaves it as it found it.
    assert (os.environ.get("TRITON_CACHE_DIR"), backends["intel"]) == before[:2]
    assert not {m for m in set(sys.modules) - before[2] if m.startswith("zeinspect_triton_")}
    clean = [n for n in range(len(screen["configs"]))
             if all(r["status"] == "ok" and not r["spill_bytes"] for r in screen["reports"] if r["config_index"] == n)]
    assert clean and len(clean) < len(screen["configs"])  # the premise: some configs have findings
    assert [tuner.configs.index(c) for c in kept] == clean


def test_the_prune_hook_never_drops_every_config(screen, sid_compiler, session_cache_env):
    import zeinspect.triton

    failing = [n for n in range(len(screen["configs"]))
               if any(r["status"] != "ok" or r["spill_bytes"] for r in screen["reports"] if r["config_index"] == n)]
    configs = [_tutorial_configs()[n] for n in failing]
    tuner = _autotuner(configs, zeinspect.triton.prune_configs(targets=("bmg-g21",), max_spill_bytes=0,
                                                               signature="*fp16", compiler=sid_compiler.id))
    with pytest.warns(UserWarning, match="keeping the least bad"):
        kept = tuner.prune_configs({})
    assert len(kept) == 1 and kept[0] in configs


def _tutorial_configs():
    from triton.backends.compiler import GPUTarget

    from zeinspect.triton.build.context import offline
    from zeinspect.triton.load import loader as triton_module

    with offline():
        loaded = triton_module.load(str(MODULES / "matmul_tutorial.py"), GPUTarget("xpu", {"name": "bmg-g21"}, 32))
    return list(loaded.kernel("matmul_kernel").configs)


def test_a_gate_entry_with_autotune_judges_every_config(cli, screen, sid_compiler, tmp_path):
    import yaml

    (tmp_path / "ratchet.txt").write_text("")
    (tmp_path / "gate.yaml").write_text(yaml.safe_dump({
        "targets": ["bmg-g21"], "ratchet": "ratchet.txt", "compiler": sid_compiler.id,
        "triton": [{"kernel": f"{MODULES / 'matmul_tutorial.py'}:matmul_kernel", "signature": "*fp16",
                    "autotune": True}]}))
    res = cli("audit", "--config", tmp_path / "gate.yaml", "--format", "json")
    assert res.code == 1, res
    import json

    verdicts = json.loads(res.out)["verdicts"]
    assert len({v["report"]["input"] for v in verdicts}) == len(screen["configs"])
    for v in verdicts:  # a config that cannot launch or build fails as an overflow; a new scratch user as new
        report = v["report"]
        if report["status"] in ("slm_overflow", "wg_overflow", "scratch_overflow"):
            assert v["verdict"] == "OVERFLOW"
        elif report["spill_bytes"] or report["private_bytes"]:
            assert v["verdict"] == "NEW"
        else:
            assert v["verdict"] == "CLEAN"
    assert any(v["verdict"] == "NEW" for v in verdicts)


def test_explain_names_the_python_line_that_spills(cli, sid_compiler, screen):
    """The tutorial matmul's 128x256 tile (its first autotune config) on bmg-g21: the epilogue's
    pointer and mask tensors spill, so the spill and fill messages sit on the `tl.store` line,
    not on the dot.  The lines are the module's own: the file at that line is the call.  The
    JSON is the screen's (`--autotune --explain`); the text is `triton --explain` of that config."""
    (report,) = [r for r in screen["reports"] if r["config_index"] == 0]
    (e,) = screen["explain"]["0"]["reports"]
    assert e["target"] == "bmg-g21" and e["totals"]["agrees_with_zebin"] is True
    assert e["totals"]["zebin_spill_size"] == report["spill_bytes"] > 0
    module = str((MODULES / "matmul_tutorial.py").resolve())
    source = Path(module).read_text().splitlines()
    moving = [x for x in e["lines"] if x["spills"] or x["fills"]]
    hottest = max(moving, key=lambda x: x["weight"])
    assert hottest["file"] == module and "tl.store(" in source[hottest["line"] - 1]
    assert sum(x["spills"] for x in moving) == e["totals"]["spills"] and hottest["spills"] > 0
    (dot,) = [x for x in e["lines"] if x["file"] == module and "tl.dot(" in source[x["line"] - 1]]
    assert dot["spills"] == dot["fills"] == 0
    res = cli("triton", f"{MODULES / 'matmul_tutorial.py'}:matmul_kernel", "--signature", "*fp16", "--constexprs",
              "BLOCK_SIZE_M=128,BLOCK_SIZE_N=256,BLOCK_SIZE_K=64,GROUP_SIZE_M=8,num_stages=3", "--num-warps", "8",
              "-t", "bmg-g21", "--compiler", sid_compiler.id, "--explain")
    assert "tl.store(c_ptrs, c, mask=c_mask)" in res.out.split("hottest lines")[1].splitlines()[2]


def test_pointers_not_named_ptr_are_found_by_use(cli, sid_compiler):
    """Triton's layer-norm tutorial names its pointers X, Y, W, B, Mean, Rstd: they are typed by
    `*TYPE` because the kernel loads from and stores to them, and the build is Triton's own."""
    code, doc = cli.json("triton", f"{MODULES / 'layer_norm.py'}:_layer_norm_fwd_fused", "--signature",
                         "*fp16,eps=fp32", "--constexprs", "BLOCK_SIZE=1024", "-t", "bmg-g21",
                         "--compiler", sid_compiler.id)
    (report,) = doc["reports"]
    assert report["status"] == "ok"
    (said,) = [n for n in report["notes"] if n.startswith("pointers by use")]
    assert sorted(said.split(": ", 1)[1].split(", ")) == ["B", "Mean", "Rstd", "W", "X", "Y"]
    assert any(n == "scalar arguments typed i32 by default: stride, N" for n in report["notes"])


def test_configs_chosen_by_the_device_are_screened_where_the_module_chooses_them(cli, sid_compiler):
    """The module asks the driver's target for DPAS: arl-s (no DPAS) gets one config, bmg-g21
    two.  Each config is screened on the targets whose list has it, and the table says n/a."""
    args = ("triton", f"{MODULES / 'device_configs.py'}:scale_kernel", "--signature", "*fp32", "--autotune",
            "-t", "arl-s,bmg-g21", "--compiler", sid_compiler.id)
    _, doc = cli.json(*args)
    assert [c.get("targets") for c in doc["configs"]] == [None, ["bmg-g21"]]
    assert sorted((r["config_index"], r["target"]) for r in doc["reports"]) == [
        (0, "arl-s"), (0, "bmg-g21"), (1, "bmg-g21")]
    res = cli(*args)
    (row,) = [line for line in res.out.splitlines() if line.startswith("2 ")]
    assert row.split()[-2:] == ["n/a", "-"]
