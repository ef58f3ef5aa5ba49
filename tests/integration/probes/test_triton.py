"""Triton kernels and the SLM staging pass: the cliff, the validation matrix, equivalence."""

from __future__ import annotations

import json

import numpy as np
import pytest
import triton_matrix as mx
from conftest import KERNELS

triton = pytest.importorskip("triton")

ELEM = {"fp16": "f16", "bf16": "bf16"}


@pytest.fixture(scope="module")
def tools(sid_compiler):
    from zeinspect.app.session import open_session
    from zeinspect.settings import Settings

    config = Settings(targets=("arl-s",), compiler=sid_compiler.id)
    return config, open_session(config)


def audit_target(kernel, target, tools, stage):
    """Reports for one target through the real front end and ocloc."""
    from dataclasses import replace

    from zeinspect.triton.probes.audit import probe_triton

    config, session = tools
    return probe_triton(kernel, replace(config, targets=(target,)), session, stage=stage).reports[0]


def test_the_cliff_and_its_remedy_through_the_cli(cli, sid_compiler):
    args = ("triton", KERNELS / "triton_dot.py:dot_kernel", "--signature", "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32",
            "--constexprs", "M=64,N=128,K=128", "-t", "arl-s,bmg-g21", "--compiler", sid_compiler.id, "--json")
    res = cli(*args)
    assert res.code == 1, res  # does not build on arl-s
    doc = json.loads(res.out)
    arl = next(r for r in doc["reports"] if r["target"] == "arl-s")
    assert arl["status"] == "scratch_overflow"
    assert arl["needed_scratch_bytes"] > arl["scratch_limit_bytes"] == 262144
    assert arl["extra"]["triton"]["path"] == "FMA"
    assert next(r for r in doc["reports"] if r["target"] == "bmg-g21")["extra"]["triton"]["path"] == "DPAS"
    res = cli(*args, "--stage")
    assert res.code == 0, res
    doc = json.loads(res.out)
    staged = next(r for r in doc["reports"] if r["target"] == "arl-s")
    (dot,) = staged["extra"]["triton"]["staging"]["dots"]
    assert staged["status"] == "ok" and dot["applied"] and dot["slm_bytes"] == 64 * 128 * 2 + 128 * 128 * 2
    assert 8 <= dot["k_tile"] < 128 and 128 % dot["k_tile"] == 0
    before = next(r for r in doc["before_staging"] if r["target"] == "arl-s")
    assert before["status"] == "scratch_overflow"
    bmg = next(r for r in doc["reports"] if r["target"] == "bmg-g21")
    assert bmg["extra"]["triton"]["staging"]["dots"][0]["gate"] == 1


def test_each_triton_build_is_kept_once_and_one_whose_files_are_gone_is_built_again(cli, sid_compiler):
    """The build cache keeps a Triton build's TTGIR and SPIR-V once: as the artifacts' files its
    reports name (triton.build.warm), in no cache entry (which keeps their digests), and no Triton
    cache of its own beside them (issue 62).  Warm after the test above (its cold run, the same
    session cache)."""
    import hashlib
    from pathlib import Path

    from zeinspect.cache import BuildCache

    args = ("triton", KERNELS / "triton_dot.py:dot_kernel", "--signature", "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32",
            "--constexprs", "M=64,N=128,K=128", "-t", "arl-s,bmg-g21", "--compiler", sid_compiler.id, "--json",
            "--stage")
    first = cli(*args)
    assert first.code == 0, first
    doc = json.loads(first.out)
    cache = Path(cli.env["ZEINSPECT_CACHE_DIR"])
    assert not (cache / "triton").exists()
    named = {f for r in doc["reports"] + doc["before_staging"] for f in r["extra"]["triton"]["artifacts"].values()}
    staged = next(r for r in doc["reports"] if r["target"] == "arl-s")["extra"]["triton"]["artifacts"]["spirv"]
    assert ".staged." in staged and len(named) == 6  # staged and not, on two targets; TTGIR and SPIR-V
    kept = [Path(f).read_bytes() for f in named]
    digests = {hashlib.sha256(k).hexdigest() for k in kept}
    fronts = 0
    for entry in cache.rglob("*.entry"):
        decoded = BuildCache._decode(entry.read_bytes())
        if decoded is None or "spirv_sha256" not in decoded[0]:
            continue  # not a Triton build's entry (a compile's keeps ocloc's zebin whole, its .spv section too)
        meta, payload = decoded
        fronts += meta["spirv_sha256"] in digests
        # The request, Triton's metadata, the notes and the files' digests: no TTGIR, no SPIR-V
        # (each is in its file; a staged build's front end's TTGIR, which no file holds, excepted).
        assert set(meta) == {"ttgir_sha256", "spirv_sha256", "metadata", "notes", "kernel"}, entry
        assert hashlib.sha256(payload).hexdigest() not in digests, entry
        assert not any(k in payload or k in json.dumps(meta).encode() for k in kept), entry
    assert fronts >= 3  # the front end's builds on two targets, and the staged one
    # A build whose files are gone is a miss: built again, the same figures, its files back.
    Path(staged).unlink()
    again = cli(*args)
    assert again.code == 0 and Path(staged).is_file(), again
    assert [{k: v for k, v in r.items() if k != "compile_seconds"} for r in json.loads(again.out)["reports"]] == \
           [{k: v for k, v in r.items() if k != "compile_seconds"} for r in doc["reports"]]


@pytest.mark.parametrize("case", mx.TESTED_A, ids=mx.case_id)
def test_group_a_overflows_and_builds_staged(tools, case):

    kernel = mx.kernel(case)
    before = audit_target(kernel, mx.FMA_TARGET, tools, stage=False)
    after = audit_target(kernel, mx.FMA_TARGET, tools, stage=True)
    assert before.status.value == "scratch_overflow", before
    assert after.status.value == "ok", after.reason
    from zeinspect.triton.model.part import triton_part

    staging = triton_part(after).staging
    assert staging["changed"] and all(d["applied"] for d in staging["dots"])
    _equivalent(kernel, case)


@pytest.mark.parametrize("case", mx.TESTED_B, ids=mx.case_id)
def test_group_b_spill_is_reduced(tools, case):
    kernel = mx.kernel(case)
    before = audit_target(kernel, mx.FMA_TARGET, tools, stage=False)
    after = audit_target(kernel, mx.FMA_TARGET, tools, stage=True)
    assert before.status.value == after.status.value == "ok"
    assert 0 < after.spill_bytes < before.spill_bytes
    _equivalent(kernel, case)


@pytest.mark.parametrize("target, case", mx.TESTED_C, ids=[f"{t}-{mx.case_id(c)}" for t, c in mx.TESTED_C])
def test_group_c_is_byte_identical(tools, tmp_path, target, case):
    from dataclasses import replace

    from zeinspect.triton.model.part import triton_part
    from zeinspect.triton.probes.audit import probe_triton

    config, session = tools
    kernel = mx.kernel(case)
    off = probe_triton(kernel, replace(config, targets=(target,)), session, stage=False, artifacts_dir=tmp_path / "off")
    on = probe_triton(kernel, replace(config, targets=(target,)), session, stage=True, artifacts_dir=tmp_path / "on")
    (r_off,), (r_on,) = off.reports, on.reports
    staging = triton_part(r_on).staging
    assert not staging["changed"] and all(not d["applied"] for d in staging["dots"])
    gate = staging["dots"][0]["gate"]
    assert gate == (1 if (target, case) in mx.GROUP_C_DPAS else 2)
    for kind in ("ttgir", "spirv"):
        a = open(triton_part(r_off).artifacts[kind], "rb").read()
        b = open(triton_part(r_on).artifacts[kind], "rb").read()
        assert a == b, kind


def _equivalent(kernel, case):
    """The reference evaluator runs the original and the staged TTGIR on the same inputs."""
    from support.ttgir_eval import run_dot_kernel

    from zeinspect.triton.build.backend import compile_kernel
    from zeinspect.triton.build.staging import stage, verify

    m, n, k, dtype, _ = case
    caps = {"has_subgroup_matrix_multiply_accumulate": False, "has_subgroup_2d_block_io": False,
            "has_bfloat16_conversions": False, "sub_group_sizes": [8, 16, 32]}
    ttgir, _, meta = compile_kernel(kernel, caps, mx.FMA_TARGET)
    staged = stage(ttgir, caps, slm_total=65536, shared_in_use=meta["shared"])
    assert staged.changed and verify(staged.ttgir) is None
    original = run_dot_kernel(ttgir, m, n, k, ELEM[dtype])
    rewritten = run_dot_kernel(staged.ttgir, m, n, k, ELEM[dtype])
    assert np.allclose(original, rewritten, rtol=1e-4, atol=1e-3), np.abs(original - rewritten).max()
    assert np.abs(original).max() > 1  # a real result, not zeros


def test_the_evaluator_catches_a_wrong_rewrite():
    """Feed B's first K tile every time: the evaluator must see a different result."""
    from support.ttgir_eval import run_dot_kernel

    from zeinspect.triton.build.backend import compile_kernel
    from zeinspect.triton.build.staging import stage

    case = mx.GROUP_A[0]
    caps = {"has_subgroup_matrix_multiply_accumulate": False, "has_subgroup_2d_block_io": False,
            "has_bfloat16_conversions": False, "sub_group_sizes": [8, 16, 32]}
    ttgir, _, meta = compile_kernel(mx.kernel(case), caps, mx.FMA_TARGET)
    staged = stage(ttgir, caps, slm_total=65536, shared_in_use=meta["shared"]).ttgir
    wrong = staged.replace("%zs0_sb[%zs0_k, %zs0_c0]", "%zs0_sb[%zs0_c0, %zs0_c0]")
    assert wrong != staged
    m, n, k, dtype, _ = case
    assert not np.allclose(run_dot_kernel(staged, m, n, k, "f16"), run_dot_kernel(wrong, m, n, k, "f16"),
                           rtol=1e-4, atol=1e-3)


def test_loop_form_beats_the_unrolled_chain(tools):
    """The measurement behind staging.FORM: on the seed's dot the scf.for form spills less."""
    from zeinspect.inputs import Input
    from zeinspect.probes.aot import probe
    from zeinspect.triton.build import staging
    from zeinspect.triton.build.backend import compile_kernel, compile_ttgir

    config, session = tools
    caps = {"has_subgroup_matrix_multiply_accumulate": False, "has_subgroup_2d_block_io": False,
            "has_bfloat16_conversions": False, "sub_group_sizes": [8, 16, 32]}
    kernel = mx.kernel(mx.GROUP_A[0])
    ttgir, _, meta = compile_kernel(kernel, caps, mx.FMA_TARGET)
    spills = {}
    for form in ("loop", "unrolled"):
        staged = staging.stage(ttgir, caps, slm_total=65536, shared_in_use=meta["shared"], form=form)
        spirv, _ = compile_ttgir(staged.ttgir, kernel, caps, mx.FMA_TARGET)
        (report,) = probe([Input(path=form, kind="spirv", data=spirv)], config, session).reports
        assert report.status.value == "ok"
        spills[form] = report.spill_bytes
    assert spills[staging.FORM] == min(spills.values()), spills


def test_a_declined_pass_says_which_gate(tools):
    from dataclasses import replace

    from zeinspect.triton.model.part import triton_part
    from zeinspect.triton.probes.audit import probe_triton

    config, session = tools
    # 72 KB to stage: more SLM than the target has (32x256 rather than 64x256: half the compile).
    over_slm = mx.kernel((32, 256, 128, "fp16", 4))
    (report,) = probe_triton(over_slm, replace(config, targets=("arl-s",)), session, stage=True).reports
    (dot,) = triton_part(report).staging["dots"]
    assert dot["gate"] == 4 and "SLM" in dot["reason"]
    assert report.status.value == "scratch_overflow"  # honest: the pass did not help here


def test_a_warm_screen_loads_no_module_and_an_edit_loads_it_again(sid_compiler, tmp_path, monkeypatch):
    """The front end's result is kept in the build cache (triton.build.warm): a warm screen gives the
    same reports without loading the kernel's module; an edit of the file is a new key."""
    import shutil

    from zeinspect.app.session import open_session
    from zeinspect.settings import Settings
    from zeinspect.triton.build import backend
    from zeinspect.triton.model.kernel import TritonKernel
    from zeinspect.triton.probes.audit import probe_triton

    monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "triton_dot.py"
    shutil.copy(KERNELS / "triton_dot.py", source)
    kernel = TritonKernel(file=str(source), kernel="dot_kernel",
                          signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"},
                          constexprs={"M": 16, "N": 16, "K": 16})
    loads = []
    real = backend.loaded_module
    monkeypatch.setattr(backend, "loaded_module", lambda *a, **k: loads.append(a) or real(*a, **k))
    config = Settings(targets=("arl-s", "bmg-g21"), compiler=sid_compiler.id)

    def screened():
        got = probe_triton(kernel, config, open_session(config), stage=False)
        return sorted(json.dumps(r.to_json(), sort_keys=True, default=str) for r in got.reports)

    cold = screened()
    assert len(loads) == 2  # arl-s (FMA) and bmg-g21 (DPAS) differ in what Triton's lowering reads
    assert screened() == cold and len(loads) == 2
    source.write_text(source.read_text() + "\n# an edit\n")
    screened()
    assert len(loads) == 4
