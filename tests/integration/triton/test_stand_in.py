"""The stand-in XPU device (triton.capture.xpu) under `triton --run`: a real library that asks torch
about the device first, Liger-Kernel 0.8.5 from the package index (downloaded here), runs its
own ops through its functional API on the device it chooses itself, and takes its XPU branch.

Its `infer_device()` asks `torch.xpu.is_available()`; its layer norm's backward asks
`torch.xpu.get_device_properties(X.device).gpu_eu_count` and splits the rows over that many
programs (`rows_per_program`) on its XPU branch: the launch is checked against the figure the
stand-in answered for the target.
"""

from __future__ import annotations

import json
import math
import os
import sys

import pytest
import wheels
from conftest import ROOT, Cli, _clean_environ

TORCH = ROOT / "build" / "torch-cpu"
TARGETS = "arl-s,dg2-g10,lnl-m,bmg-g21"
pytestmark = pytest.mark.skipif(not (TORCH / "torch").is_dir() and not os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS"),
                                reason="no CPU torch in build/torch-cpu (scripts/setup.sh installs it)")
ROWS, HIDDEN, VOCAB = 256, 1024, 4096

OPS = f'''
import torch
from liger_kernel.utils import infer_device
from liger_kernel.transformers import functional as F

device = infer_device()
assert device == "xpu", device
dt = torch.bfloat16
x = torch.randn({ROWS}, {HIDDEN}, device=device, dtype=dt, requires_grad=True)
w = torch.randn({HIDDEN}, device=device, dtype=dt, requires_grad=True)
b = torch.randn({HIDDEN}, device=device, dtype=dt, requires_grad=True)
F.liger_rms_norm(x, w, 1e-6).sum().backward()
F.liger_layer_norm(x, w, b, 1e-6).sum().backward()
a = torch.randn({ROWS}, 4 * {HIDDEN}, device=device, dtype=dt, requires_grad=True)
g = torch.randn({ROWS}, 4 * {HIDDEN}, device=device, dtype=dt, requires_grad=True)
F.liger_swiglu(a, g).sum().backward()
logits = torch.randn({ROWS}, {VOCAB}, device=device, dtype=torch.float32, requires_grad=True)
target = torch.randint(0, {VOCAB}, ({ROWS},), device=device)
F.liger_cross_entropy(logits, target).backward()
q = torch.randn(2, 8, 128, 128, device=device, dtype=dt, requires_grad=True)
k = torch.randn(2, 8, 128, 128, device=device, dtype=dt, requires_grad=True)
cos, sin = torch.randn(1, 128, 128, device=device, dtype=dt), torch.randn(1, 128, 128, device=device, dtype=dt)
qr, kr = F.liger_rope(q, k, cos, sin)
(qr.sum() + kr.sum()).backward()
hidden = torch.randn({ROWS}, {HIDDEN}, device=device, dtype=dt, requires_grad=True)
lm = torch.randn({VOCAB}, {HIDDEN}, device=device, dtype=dt, requires_grad=True)
F.liger_fused_linear_cross_entropy(hidden, lm, target).backward()
'''
OPS_FILES = {"rms_norm.py", "layer_norm.py", "swiglu.py", "cross_entropy.py", "rope.py"}


@pytest.fixture(scope="module")
def captured(tmp_path_factory, session_cache):
    cli = Cli({**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(session_cache), "PYTHONPATH": str(ROOT)})
    library = wheels.unpacked("liger-kernel", "0.8.5", "liger_kernel").parent
    script = tmp_path_factory.mktemp("liger") / "ops.py"
    script.write_text(OPS)
    env = {"PYTHONPATH": os.pathsep.join(map(str, (TORCH, library)))}
    res = cli("triton", "--run", "-t", TARGETS, "--json", "-q", "--", sys.executable, str(script), env=env)
    assert res.code in (0, 1), res
    return json.loads(res.out)


@pytest.mark.slow
def test_a_library_that_asks_the_device_launches_its_xpu_kernels(captured):
    capture = captured["capture"]
    assert capture["exit_code"] == 0, captured["notes"]  # the script's own assert: infer_device() said xpu
    stand_in = capture["xpu"]
    first = TARGETS.split(",")[0]
    assert stand_in["target"] == first and {"is_available", "get_device_properties().gpu_eu_count"} <= set(
        stand_in["answered"]) and not stand_in["refused"]
    assert "torch.xpu stood in for" in capture["summary"]
    specs = capture["specializations"]
    assert {s["kernel"].rsplit(":", 1)[0].rsplit("/", 1)[1] for s in specs} == OPS_FILES
    assert any("fused_linear_cross_entropy.py" in site for s in specs for site in s["sites"]), [
        s["sites"] for s in specs]
    # Every tensor the kernels were given says it is on the Intel GPU, backward passes included.
    assert capture["devices"] == ["xpu"] and all(s["devices"] == ["xpu"] for s in specs)
    assert all(s["sites"] for s in specs)
    # Each specialization screened on every target.
    screened = {(r["kernel"], r["target"]) for r in captured["reports"]}
    assert len(screened) == len(specs) * len(TARGETS.split(","))


@pytest.mark.slow
def test_the_launch_follows_what_the_stand_in_answered(captured):
    """Liger's layer-norm backward on XPU: rows_per_program = ceil(rows / gpu_eu_count), with
    the EU count the stand-in answered for the first target."""
    from zeinspect.triton.capture.xpu import properties

    specs = [s for s in captured["capture"]["specializations"] if s["kernel"].endswith("_layer_norm_backward_kernel")]
    [backward] = specs
    eus = properties({"name": TARGETS.split(",")[0]})["gpu_eu_count"]
    assert backward["constexprs"]["rows_per_program"] == math.ceil(ROWS / eus)


def test_an_xpu_only_call_ends_in_one_line_naming_it(cli, tmp_path):
    script = tmp_path / "temperature.py"
    script.write_text("import torch\nprint(torch.xpu.temperature())\n")
    res = cli("triton", "--run", "-t", "bmg-g21", "--json", "-q", "--", sys.executable, str(script),
              env={"PYTHONPATH": str(TORCH)})
    assert res.code == 0, res  # nothing launched: nothing screened, nothing found
    doc = json.loads(res.out)
    assert doc["capture"]["xpu"]["refused"] == ["temperature"]
    assert "could not answer: temperature" in doc["capture"]["summary"]
    said = [n for n in doc["notes"] if n.startswith("torch.xpu.temperature: an XPU-only call")]
    assert len(said) == 1 and "\n" not in said[0]


def test_the_stand_in_answers_every_field_torch_s_xpu_properties_have():
    """The fields of torch's own _XpuDeviceProperties (its type stub, in the CPU build too),
    each answered, with the type the stub gives."""
    import re

    from zeinspect.triton.capture.xpu import properties

    stub = (TORCH / "torch" / "_C" / "__init__.pyi").read_text()
    block = stub[stub.index("class _XpuDeviceProperties:"):]
    block = block[:block.index("\n\n")]
    fields = dict(re.findall(r"^    (\w+): (.+)$", block, re.M))
    assert len(fields) > 20
    for target in TARGETS.split(","):
        answered = properties({"name": target, "caps": {"sub_group_sizes": [16, 32]}})
        assert set(answered) == set(fields), set(answered) ^ set(fields)
        kinds = {"str": str, "_int": int, "_bool": bool, "list[_int]": list, "Any": object}
        for key, kind in fields.items():
            assert isinstance(answered[key], kinds[kind]), (key, answered[key])
    assert properties({"name": "bmg-g21"})["name"] == "Intel(R) Arc(TM) B580 Graphics"


@pytest.mark.slow  # the library captured and screened a second time
def test_screened_from_the_run_s_ttir_as_from_its_module(captured, tmp_path_factory, session_cache):
    """Liger-Kernel's rows from the TTIR its run wrote (the default) equal those the capture
    without its front end gives (each kernel rebuilt from its module): the same kernels, the
    same figures on every target."""
    cli = Cli({**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(session_cache), "PYTHONPATH": str(ROOT)})
    library = wheels.unpacked("liger-kernel", "0.8.5", "liger_kernel").parent
    script = tmp_path_factory.mktemp("liger-static") / "ops.py"
    script.write_text(OPS)
    env = {"PYTHONPATH": os.pathsep.join(map(str, (TORCH, library))), "ZEINSPECT_TRITON_CAPTURE_FRONT_END": "0"}
    res = cli("triton", "--run", "-t", TARGETS, "--json", "-q", "--", sys.executable, str(script), env=env)
    static = json.loads(res.out)
    assert all(s["ttir"] for s in captured["capture"]["specializations"])
    figures = ("status", "simd", "grf", "spill_bytes", "private_bytes", "scratch_space_bytes", "slm_bytes")
    rows = [{(r["kernel"], r["target"]): {k: r[k] for k in figures} for r in doc["reports"]}
            for doc in (captured, static)]
    assert rows[0] == rows[1]
