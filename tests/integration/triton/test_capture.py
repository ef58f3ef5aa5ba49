"""`zeinspect triton --run -- CMD`: a library's kernels at the values its own code launches them
with, captured from a run on CPU tensors (a CPU build of torch, build/torch-cpu, installed by
scripts/setup.sh beside the .venv so the rest of the suite runs without torch), and screened on
every target.  The real library is xpu-kernels 0.3.0 from the package index (downloaded here).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import wheels
from conftest import ROOT

TORCH = ROOT / "build" / "torch-cpu"
TARGETS = "arl-s,dg2-g10,lnl-m,bmg-g21"
pytestmark = pytest.mark.skipif(not (TORCH / "torch").is_dir() and not os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS"),
                                reason="no CPU torch in build/torch-cpu (scripts/setup.sh installs it)")

OPS = '''
import torch
import xpu_kernels.triton.adaln as adaln
import xpu_kernels.triton.nf4 as nf4
import xpu_kernels.triton.quantize as quantize
import xpu_kernels.triton.rope as rope

B, S, H, D = 1, 64, 8, 128
x = torch.randn(B, S, H, D, dtype=torch.bfloat16)
rope._rows(x, torch.randn(1, S, 1, D // 2, 2, 2), torch.rand(D), 1e-6)
hidden = torch.randn(B, S, 4096, dtype=torch.bfloat16)
adaln._run(hidden, torch.randn(B, 1, 4096, dtype=torch.bfloat16), torch.randn(B, 1, 4096, dtype=torch.bfloat16), 1e-6)
n = 4096 * 64
nf4._launch(torch.randint(0, 255, (n // 2,), dtype=torch.uint8), torch.rand(n // nf4.BLOCKSIZE), nf4.codebook(),
            torch.empty(n, dtype=torch.bfloat16), n, nf4.BLOCKSIZE, torch.bfloat16)
quantize._rows(torch.randn(S, 4096, dtype=torch.bfloat16))
'''

TINY = '''
import os, sys, time
import torch, triton, triton.language as tl

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) * factor, mask=i < n)

x = torch.randn(4096)
scale_kernel[(4,)](x, torch.empty_like(x), 4096, 2.0, BLOCK=1024)
scale_kernel[(4,)](x, torch.empty_like(x), 4096, 3.0, BLOCK=1024)
what = sys.argv[1] if len(sys.argv) > 1 else ""
if what == "exit":
    os._exit(7)
if what == "hang":
    time.sleep(600)
if what == "refuse":
    raise RuntimeError("xpu_kernels needs an XPU device: none found")
if what == "modules":
    open(sys.argv[2], "w").write("\\n".join(sorted(sys.modules)))
'''


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return wheels.unpacked("xpu-kernels", "0.3.0", "xpu_kernels").parent


def _capture(cli, script, *args, env=None, extra=()):
    full = {"PYTHONPATH": os.pathsep.join(str(p) for p in (TORCH, *(env or {}).pop("path", ()))), **(env or {})}
    res = cli("triton", "--run", "-t", TARGETS, "--json", "-q", *extra, "--", sys.executable, str(script), *args,
              env=full)
    assert res.code in (0, 1), res
    return json.loads(res.out)


# Every kernel of a real library on four targets: `make slow` (the default run keeps this module's
# other captures of the same library, on fewer kernels).
@pytest.mark.slow
def test_every_kernel_a_real_library_launches_is_screened_on_every_target(cli, library, tmp_path):
    script = tmp_path / "ops.py"
    script.write_text(OPS)
    doc = _capture(cli, script, env={"path": (library,)})
    capture = doc["capture"]
    assert capture["exit_code"] == 0 and capture["launches"] == 4 and capture["devices"] == ["cpu"]
    assert "not an Intel GPU" in capture["summary"]
    kernels = {s["kernel"].rsplit(":", 1)[1] for s in capture["specializations"]}
    assert kernels == {"_rms_rope_rows_kernel", "_rms_adaln_rows_kernel", "_nf4_dequant_kernel",
                       "_quantize_row_kernel"}
    screened = {(r["kernel"].split("[")[0], r["target"]) for r in doc["reports"] if r["status"] == "ok"}
    assert screened == {(k, t) for k in kernels for t in TARGETS.split(",")}
    # Each call site is the library's own line that launches the kernel (`kernel[grid](`), and
    # Triton's own specialization was kept (strides of 1 become constexprs, as Triton
    # specializes them).
    for s in capture["specializations"]:
        for site in s["sites"]:
            file, line = site.rsplit(":", 1)
            assert file.startswith(str(library)), site
            assert "](" in Path(file).read_text().splitlines()[int(line) - 1], site
    assert any("stride_x_k=1" in s["values"] for s in capture["specializations"])


FIGURES = ("status", "simd", "grf", "spill_bytes", "private_bytes", "scratch_space_bytes", "slm_bytes")


@pytest.mark.slow  # the library captured and screened twice
def test_the_run_s_own_front_end_gives_what_the_module_rebuilt_gave(cli, library, tmp_path):
    """xpu-kernels, which the static loader can rebuild: screened from the TTIR its run wrote
    (the default) and from its module (the capture without its front end), the same rows with
    the same figures on every target."""
    script = tmp_path / "ops.py"
    script.write_text(OPS)
    runs = [_capture(cli, script, env={"path": (library,), "ZEINSPECT_TRITON_CAPTURE_FRONT_END": flag})
            for flag in ("1", "0")]
    assert all(s["ttir"] for s in runs[0]["capture"]["specializations"])
    assert not any(s["ttir"] for s in runs[1]["capture"]["specializations"])
    rows = [{(r["kernel"], r["target"]): {k: r[k] for k in FIGURES} for r in doc["reports"]} for doc in runs]
    assert rows[0] == rows[1] and len(rows[0]) == 4 * len(TARGETS.split(","))


def test_the_specialization_is_tritons_own(cli, library, tmp_path):
    """What Triton derived from the real launch arguments is what is built: the pointers' 16-byte
    alignment (`tt.divisibility`) that a value typed by hand does not carry, and which changes the
    code (vectorised loads: the adaLN kernel spills less on dg2-g10 with it than without)."""
    script = tmp_path / "ops.py"
    script.write_text(OPS)
    doc = _capture(cli, script, env={"path": (library,)})
    adaln = next(s for s in doc["capture"]["specializations"] if s["kernel"].endswith("_rms_adaln_rows_kernel"))
    aligned = {tuple(path) for path, attrs in adaln["attrs"] if ["tt.divisibility", 16] in attrs}
    pointers = [i for i, (k, v) in enumerate(adaln["signature"].items()) if v.startswith("*")]
    assert pointers and all((i,) in aligned for i in range(len(pointers)))
    file = adaln["kernel"].rsplit(":", 1)[0]
    pairs = ",".join(f"{k}={v}" for k, v in adaln["constexprs"].items())
    types = ",".join(f"{k}={v}" for k, v in adaln["signature"].items())
    by_hand = cli("triton", f"{file}:_rms_adaln_rows_kernel", "-t", "dg2-g10", "--json", "-q",
                  "--signature", types, "--constexprs", pairs, "--num-warps", str(adaln["num_warps"]))
    [hand] = json.loads(by_hand.out)["reports"]
    [captured] = [r for r in doc["reports"]
                  if r["kernel"].startswith("_rms_adaln_rows_kernel") and r["target"] == "dg2-g10"]
    assert captured["grf"] == hand["grf"] and captured["spill_bytes"] < hand["spill_bytes"]


def test_the_captured_command_loads_only_the_capture_s_share_of_zeinspect(cli, tmp_path):
    """The capture's rule (tests/unit/test_layers.py) in a real captured command: after its
    launches went through Triton's front end with the stand-in XPU, the process holds no module
    of zeinspect beyond triton's capture/, offline/ and model/ and the core's device table and
    errors (the screen's modules stay in zeinspect's own process)."""
    from unit.test_layers import loaded_beyond_the_capture_rule

    script, modules = tmp_path / "tiny.py", tmp_path / "modules.txt"
    script.write_text(TINY)
    doc = _capture(cli, script, "modules", str(modules), extra=("-t", "arl-s"))
    assert doc["capture"]["launches"] == 2 and all(s["ttir"] for s in doc["capture"]["specializations"])
    loaded = modules.read_text().split()
    assert "zeinspect.triton.capture.record" in loaded and "zeinspect.triton.offline.driver" in loaded
    assert loaded_beyond_the_capture_rule(loaded) == []


@pytest.mark.parametrize("how, code", [("exit", 7), ("hang", None), ("refuse", 1)])
def test_the_commands_end_never_takes_the_capture_with_it(cli, tmp_path, how, code):
    script = tmp_path / "tiny.py"
    script.write_text(TINY)
    user_cache = tmp_path / "user-triton-cache"
    doc = _capture(cli, script, how, env={"TRITON_CACHE_DIR": str(user_cache)}, extra=("--run-timeout", "20"))
    capture = doc["capture"]
    assert capture["launches"] == 2 and len(capture["specializations"]) == 1  # 2.0 and 3.0: one specialization
    assert capture["timed_out"] is (how == "hang")
    if code is not None:
        assert capture["exit_code"] == code
    if how == "refuse":
        assert any("the command ended with: RuntimeError: xpu_kernels needs an XPU device" in n for n in doc["notes"])
    assert not user_cache.exists()  # the user's Triton cache is never written
    assert {r["target"] for r in doc["reports"]} == set(TARGETS.split(","))
