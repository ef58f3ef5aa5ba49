"""Profiles read (inputs.profile): the real GPT-2 step's PyTorch trace summed straight from its
JSON, the three formats' shapes, and every malformed one an input error naming the file."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import realworld

from zeinspect.errors import InputError
from zeinspect.inputs.profile import read_profile

INDUCTOR = realworld() / "inductor-gpt2" / "gpt2-step.tar.xz"


@pytest.fixture(scope="module")
def gpt2_trace(tmp_path_factory):
    if not INDUCTOR.is_file():
        pytest.skip("no ../shared/realworld/inductor-gpt2")
    tmp = tmp_path_factory.mktemp("trace")
    subprocess.run(["tar", "xJf", INDUCTOR, "-C", tmp, "trace_gpt2.json"], check=True)
    return tmp / "trace_gpt2.json"


def test_a_pytorch_trace_sums_each_kernel_s_launches(gpt2_trace):
    trace = json.loads(gpt2_trace.read_text())
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    profile = read_profile(str(gpt2_trace))
    assert profile.source == "pytorch" and profile.device == trace["deviceProperties"][0]["name"]
    assert profile.foreign  # an NVIDIA GPU's times: a proxy
    assert set(profile.kernels) == {e["name"] for e in events}
    assert sum(k.launches for k in profile.kernels.values()) == len(events)
    assert profile.total == pytest.approx(sum(e["dur"] for e in events) / 1e6)
    name = events[0]["name"]
    assert profile.kernels[name].seconds == pytest.approx(sum(e["dur"] for e in events if e["name"] == name) / 1e6)


def test_a_bare_event_list_and_unitrace_s_device_events(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"ph": "X", "cat": "gpu_op", "name": "k", "dur": 3},
                                {"ph": "X", "cat": "gpu_op", "name": "k", "dur": 5},
                                {"ph": "X", "cat": "cpu_op", "name": "host", "dur": 100},
                                {"ph": "i", "cat": "kernel", "name": "marker"}]))
    profile = read_profile(str(path))
    assert profile.source == "chrome" and profile.device is None and not profile.foreign
    assert list(profile.kernels) == ["k"] and profile.kernels["k"].launches == 2
    assert profile.kernels["k"].seconds == pytest.approx(8e-6)


def test_an_xpu_trace_as_torch_writes_it_counts_its_kernels_not_its_runtime_calls(tmp_path):
    """torch 2.13's exporter (torch/profiler/_chrome_trace_export.py) writes each Kineto activity
    as one line `{"ph":"X","cat":<type>,"name",...,"ts","dur"}`; on XPU a launch is an
    `xpu_runtime` event on the host and the kernel a `kernel` event (Kineto's ActivityType.h has
    no XPU kernel type of its own).  Only the kernels are GPU time."""
    lines = ['{"deviceProperties":[{"id":0,"name":"Intel(R) Arc(TM) B580 Graphics"}],"traceEvents":[']
    for n, (cat, name, dur) in enumerate([("cpu_op", "aten::add", "40.000"),
                                          ("xpu_runtime", "urEnqueueKernelLaunch", "12.500"),
                                          ("kernel", "triton_poi_fused_add_0", "3.250"),
                                          ("xpu_runtime", "urEnqueueKernelLaunch", "11.000"),
                                          ("kernel", "triton_poi_fused_add_0", "2.750")]):
        lines.append(f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":0,"tid":1,"ts":{100 + 50 * n}.000,'
                     f'"dur":{dur},"args":{{"External id": {n}}}}},')
    lines.append('{"name": "PyTorch Profiler", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 0}]}')
    path = tmp_path / "xpu_trace.json"
    path.write_text("\n".join(lines))
    profile = read_profile(str(path))
    assert profile.source == "pytorch" and not profile.foreign
    assert list(profile.kernels) == ["triton_poi_fused_add_0"] and profile.kernels["triton_poi_fused_add_0"].launches == 2
    assert profile.total == pytest.approx(6e-6)


def test_an_intel_device_is_not_a_proxy(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"deviceProperties": [{"name": "Intel(R) Arc(TM) B580 Graphics"}],
                                "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1}]}))
    assert not read_profile(str(path)).foreign


def test_a_plain_csv(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("kernel,time\na,2.5\nb,1\na,0.5\n\n")
    profile = read_profile(str(path))
    assert {n: k.seconds for n, k in profile.kernels.items()} == {"a": 3.0, "b": 1.0}


@pytest.mark.parametrize("content, says", [
    (b"{\"traceEvents\": [", "is not a Chrome trace"),
    (b"{\"traceEvents\": {\"a\": 1}}", "is not a Chrome trace"),
    (b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"x\", \"dur\": 1}]}", "no GPU kernel events"),
    (b"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": \"long\"}]", "is not a Chrome trace"),
    (b"name,seconds\na,1\n", "is not a profile"),
    (b"kernel,time\na,soon\n", "line 2: not KERNEL,TIME"),
    (b"kernel,time\na,-1\n", "line 2: a time of -1, not a positive number"),
    (b"kernel,time\na,nan\n", "not a positive number"),
    (b"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": -5}]", "has a duration of -5"),
    (b"kernel,time\n", "has no kernel rows"),
    (b"\x00\xff\xfe", "is not a profile"),
    (b"", "is not a profile"),
])
def test_a_malformed_profile_is_an_input_error_naming_it(tmp_path, content, says):
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_profile(str(path))
    line = caught.value.one_line()
    assert line.startswith(f"{path}: ") and says in line and "\n" not in line
