"""Modules built several to an `ocloc multi` process give what one process per compile gives.

Reports and cache entries are compared field for field (the cache's `argv` names each run's
own temporary folder and `seconds` its time: those two only may differ) on the corpus as
SPIR-V and on real images of oneMKL's DFT library (from the package index).  A compile that
crashes or hangs inside a batch takes the batch's process with it: every build it did not
finish is built again alone, and only the one that fails again is a finding, with the
message and exit code a single compile gives.
"""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest
import wheels
from conftest import KERNELS

from zeinspect.cache import BuildCache

DFT = ("onemkl-sycl-dft", "2026.2.0", "libmkl_sycl_dft.so")
IMAGES = 24


@pytest.fixture(scope="module")
def modules(tmp_path_factory, sid_compiler):
    """The corpus as SPIR-V (ocloc's own front end) and the first SPIR-V images of oneMKL DFT."""
    from zeinspect.inputs.offload import find_images

    out = tmp_path_factory.mktemp("spirv")
    # ptss_overflow.cl takes IGC most of a minute per build: the others show the same things.
    for source in sorted(p for p in KERNELS.glob("*.cl") if p.stem != "ptss_overflow"):
        subprocess.run([sid_compiler.path, "compile", "-file", str(source), "-device", "dg2-g10", "-spv_only",
                        "-output", source.stem, "-out_dir", str(out)], check=True, capture_output=True, timeout=300)
    library = wheels.library(*DFT)
    images = [i for i in find_images(library.read_bytes(), str(library)) if i.data and i.data[:4] == b"\x03\x02\x23\x07"]
    for n, img in enumerate(images[:IMAGES]):
        (out / f"dft-{n:03}.spv").write_bytes(img.data)
    spv = sorted(out.glob("*.spv"))
    assert len(spv) >= IMAGES + 3
    return spv


def _run(cli, paths, cache: Path, multi: str, *extra, env=None):
    res = cli("inspect", *paths, "-t", "dg2-g10", "--json", "-q", *extra,
              env={"ZEINSPECT_CACHE_DIR": str(cache), "ZEINSPECT_MULTI": multi, **(env or {})})
    return res, json.loads(res.out) if res.out.strip().startswith("{") else None


def test_batched_and_single_builds_are_identical_field_for_field(cli, sid_compiler, modules, tmp_path):
    single, one = _run(cli, modules, tmp_path / "single", "0", "--compiler", sid_compiler.id)
    batched, many = _run(cli, modules, tmp_path / "multi", "1", "--compiler", sid_compiler.id)
    assert single.code == batched.code and single.code in (0, 1)
    assert many["stats"]["multi_batches"] > 0 and one["stats"]["multi_batches"] == 0
    assert many["stats"]["compiles"] == one["stats"]["compiles"] == len(modules)
    assert many["reports"] == one["reports"]
    # Each report's log holds its own compile's lines: the spilling corpus kernels' logs name
    # them, and no log names another module's kernel.
    kernels = {r["kernel"] for r in many["reports"]}
    for r in many["reports"]:
        for line in r["log"]:
            assert not any(k in line for k in kernels - {r["kernel"]} if len(k) > 12 and k not in r["kernel"])
    assert any(r["log"] for r in many["reports"] if r["spill_bytes"])
    a, b = BuildCache(tmp_path / "single"), BuildCache(tmp_path / "multi")
    keys = [p.stem for p in (tmp_path / "single").rglob("*.entry")]
    assert len(keys) == len(modules)
    for key in keys:
        (meta_a, payload_a), (meta_b, payload_b) = a.get(key), b.get(key)
        # An entry holds no zebin (executor._store): its figures, in the metadata, are compared.
        assert payload_a == payload_b == b"", key
        assert meta_a["figures"] and {k: v for k, v in meta_a.items() if k not in ("argv", "seconds")} == \
            {k: v for k, v in meta_b.items() if k not in ("argv", "seconds")}, key


def _poisoned(tmp_path: Path, real: str, action: str) -> str:
    """An ocloc that misbehaves whenever a module holding the kernel `poisoned` is in its folder:
    a whole `multi` batch, then that module's own compile again."""
    path = tmp_path / f"ocloc-{action.split()[0]}"
    path.write_text("#!/bin/sh\n"
                    "for f in *.spv; do\n"
                    f"  if grep -q poisoned \"$f\" 2>/dev/null; then {action}; fi\n"
                    "done\n"
                    f"exec '{real}' \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("action, words", [
    ("kill -SEGV $$", "signal 11 (SIGSEGV)"),
    ("sleep 300", "timed out after 4 s"),
])
def test_a_crash_or_hang_in_a_batch_is_the_finding_of_that_compile_alone(cli, sid_compiler, modules, tmp_path,
                                                                         action, words):
    poison = tmp_path / "poison.cl"
    poison.write_text("__kernel void poisoned(__global float* x) { x[get_global_id(0)] *= 2.0f; }\n")
    subprocess.run([sid_compiler.path, "compile", "-file", str(poison), "-device", "dg2-g10", "-spv_only",
                    "-output", "poison", "-out_dir", str(tmp_path)], check=True, capture_output=True, timeout=300)
    dft = [m for m in modules if m.name.startswith("dft-")]  # quick to build, well within the time limit
    (spirv,) = tmp_path.glob("poison*.spv")
    paths = [*dft[:8], spirv, *dft[8:12]]
    faulty = {"ZEINSPECT_OCLOC": _poisoned(tmp_path, sid_compiler.path, action)}
    results = {}
    for multi in ("0", "1"):
        res, doc = _run(cli, paths, tmp_path / f"cache-{multi}", multi, "--timeout", "4", env=faulty)
        results[multi] = (res, doc)
    (single, one), (batched, many) = results["0"], results["1"]
    assert batched.code == single.code == 3, batched
    assert many["stats"]["multi_batches"] > 0
    failed = [r for r in many["reports"] if r["status"] != "ok"]
    assert [r["kernel"] for r in failed] == ["poisoned"] and words in failed[0]["reason"]
    assert many["reports"] == one["reports"]
    assert [x for x in batched.err.splitlines() if x.startswith("zeinspect: error:")] == \
        [x for x in single.err.splitlines() if x.startswith("zeinspect: error:")]
