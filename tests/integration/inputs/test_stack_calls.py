"""Stack calls, as a real library ships them: xpu-kernels 0.3.0's SYCL int8 library (from the
package index at test time, never vendored), whose kernels call functions IGC does not inline.

IGC then reserves a call stack in scratch and reports it in the kernel's spill figure; the
kernel's `.ze_info` says `has_stack_calls`.  zeinspect must say what it is (a stack call, not a
register spill), with the compiler's own figures: the oracle compiles the library's SPIR-V
image with ocloc, with the image's own compile options, and reads `.ze_info` with binutils.
"""

from __future__ import annotations

import concurrent.futures
import json

import oracle
import pytest
import wheels

MEMBER = "xpu_kernels/int8/libxpuint8.so"
TARGET = "bmg-g21"


@pytest.fixture(scope="module")
def wheel():
    return wheels.wheel("xpu-kernels", "0.3.0")


@pytest.mark.slow  # a real library's image built whole: `make slow`
def test_kernels_that_make_stack_calls_are_said_as_such_with_the_compilers_figures(cli, sid_compiler, wheel,
                                                                                    tmp_path):
    member = f"{wheel}!{MEMBER}"
    res = cli("extract", member, "-o", tmp_path / "images")
    assert res.code == 0, res
    manifest = json.loads((tmp_path / "images" / "manifest.json").read_text())
    image = max((i for i in manifest["images"] if i.get("kind") == "spirv"), key=lambda i: i["bytes"])

    # The oracle's build and zeinspect's run side by side (two compiles of a 43-kernel module).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        building = pool.submit(oracle.ocloc, sid_compiler, tmp_path / "images" / image["file"], TARGET,
                               options=(image.get("sycl") or {}).get("compile_options", ""), spirv=True)
        res = cli("inspect", member, "-t", TARGET, "--compiler", sid_compiler.id, "--json", "-q")
        built = building.result()
    assert built.binary is not None, built.log[-2000:]
    # IGC's own symbol-table kernel is not one of the library's.
    figures = {name: f for name, f in oracle.driver_figures(built.binary, xe_hp_or_later=True).items()
               if not name.startswith("Intel_Symbol_Table")}
    calls = {k["name"] for k in oracle.zeinfo(built.binary)["kernels"] if k["execution_env"].get("has_stack_calls")}
    assert calls, "the library's kernels no longer make stack calls: this test needs another kernel"
    assert res.code in (0, 1), res
    reports = [r for r in json.loads(res.out)["reports"] if r["origin"]["image"] == image["source"]]
    assert {r["kernel"] for r in reports} == set(figures)
    for r in reports:
        want = figures[r["kernel"]]
        assert (r["spill_bytes"], r["private_bytes"]) == (want["spill"], want["private"]), r["kernel"]
        assert bool(r["stack_calls"]) == (r["kernel"] in calls), r["kernel"]
        if r["kernel"] in calls:
            assert r["cause"] == "stack_calls", r["kernel"]

    text = cli("inspect", member, "-t", TARGET, "--compiler", sid_compiler.id, "-q").out
    said = next(line for line in text.splitlines() if "make calls IGC did not inline" in line)
    assert said.strip().startswith(f"stack calls: {len(calls)} kernels make calls")
    reserved = {figures[k]["spill"] for k in calls}
    assert all(f"{n // 1024} KiB" in said for n in reserved), said
