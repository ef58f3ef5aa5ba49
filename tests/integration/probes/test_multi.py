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


def exits(cache: Path) -> dict[str, int]:
    """Each build's exit in a build cache, by its key (a compile's entry keeps ocloc's)."""
    store = BuildCache(cache)
    return {p.stem: store.get(p.stem)[0]["returncode"] for p in cache.rglob("*.entry")}


def test_a_build_that_fails_in_a_batch_is_its_failure_and_not_compiled_again(cli, sid_compiler, modules, tmp_path):
    """A scratch overflow (IGC 2.x refuses the live-set kernel on Xe2, after trying every way to
    fit) among modules that build, in one `ocloc multi` process: its report is what its compile
    alone gives (status, figures from the log, the log's lines), and it is compiled once, as
    every other module (an ocloc that counts its compiles, tests/counting.py)."""
    from counting import counting_ocloc
    from sycl_builds import spirv_of

    failing = tmp_path / "ptss.spv"
    failing.write_bytes(spirv_of(sid_compiler, KERNELS / "ptss_overflow.cl", tmp_path, device="tgllp"))
    # Eight modules on two workers (-j 2): four batches of two (executor.pack), none built alone.
    paths = [*[m for m in modules if m.name.startswith("dft-")][:7], failing]
    counted = tmp_path / "compiles.txt"
    counting = counting_ocloc(sid_compiler, tmp_path / "counting", counted)
    docs = {}
    for multi in ("0", "1"):
        res = cli("inspect", *paths, "-t", "bmg-g21", "-j", "2", "--json", "-q", "--compiler", sid_compiler.id,
                  env={"ZEINSPECT_CACHE_DIR": str(tmp_path / f"cache-{multi}"), "ZEINSPECT_MULTI": multi,
                       "ZEINSPECT_OCLOC": str(counting)})
        assert res.code == 1, res  # a kernel did not build
        docs[multi] = json.loads(res.out)
        if multi == "1":  # each module compiled once, all in `ocloc multi` processes
            assert counted.read_text().split().count("plain") == len(paths)
            assert counted.read_text().split().count("process") == docs[multi]["stats"]["multi_batches"] == 4
        counted.unlink()
    one, many = docs["0"], docs["1"]
    assert many["stats"]["multi_batches"] > 0 and one["stats"]["multi_batches"] == 0
    assert many["reports"] == one["reports"]
    assert exits(tmp_path / "cache-1") == exits(tmp_path / "cache-0") and 245 in exits(tmp_path / "cache-0").values()
    [over] = [r for r in many["reports"] if r["status"] != "ok"]
    assert over["kernel"] == "ptss_live_set" and over["status"] == "scratch_overflow"
    assert over["needed_scratch_bytes"] > over["scratch_limit_bytes"] and over["log"]


def test_a_fat_build_that_stops_at_a_failing_device_gives_that_failure_once(cli, sid_compiler, tmp_path):
    """ocloc builds a fat build's devices in turn and stops at the first that fails, writing
    nothing: the failing device's report is what its compile alone gives, and it is not compiled
    again; the others are built alone.  Xe2 refuses a required sub-group size of 8 (IGC 2.x), a
    quick failure between two targets that build it."""
    from counting import counting_ocloc
    from sycl_builds import spirv_of

    source = tmp_path / "sg8.cl"
    source.write_text("__attribute__((intel_reqd_sub_group_size(8)))\n"
                      "__kernel void sg8(__global float* x) { x[get_global_id(0)] *= 2.0f; }\n")
    module = tmp_path / "sg8.spv"
    module.write_bytes(spirv_of(sid_compiler, source, tmp_path, device="tgllp"))
    targets = ["tgllp", "bmg-g21", "dg2-g10"]
    counted = tmp_path / "compiles.txt"
    counting = counting_ocloc(sid_compiler, tmp_path / "counting", counted)
    docs = {}
    for batch in ("0", "1"):  # one ocloc process per target; one fat build for all three (one worker)
        res = cli("inspect", module, "-t", ",".join(targets), "-j", "1", "--json", "-q", "--compiler", sid_compiler.id,
                  env={"ZEINSPECT_CACHE_DIR": str(tmp_path / f"cache-{batch}"), "ZEINSPECT_BATCH": batch,
                       "ZEINSPECT_MULTI": "0", "ZEINSPECT_OCLOC": str(counting)})
        assert res.code == 1, res  # a kernel did not build
        docs[batch] = json.loads(res.out)
        compiles = counted.read_text().split().count("plain")
        counted.unlink()
    # The fat build, then the two devices it did not write, alone: bmg-g21 once, in the fat build.
    assert compiles == len(targets)
    assert docs["1"]["reports"] == docs["0"]["reports"]
    assert exits(tmp_path / "cache-1") == exits(tmp_path / "cache-0") and 245 in exits(tmp_path / "cache-0").values()
    status = {r["target"]: r["status"] for r in docs["1"]["reports"]}
    assert status["tgllp"] == status["dg2-g10"] == "ok" and status["bmg-g21"] != "ok"
    [failed] = [r for r in docs["1"]["reports"] if r["target"] == "bmg-g21"]
    assert any("required subgroup size 8" in line for line in failed["log"]), failed
