"""`zeinspect triton --from-cache DIR`: a Triton cache folder, written by Triton compiling the
real tutorials (../shared/realworld/triton-tutorials/, unedited), re-screened from its TTIR
and metadata gives the figures that screening the tutorials directly gave; bad entries are
named one by one and the rest screened.

The cache is the one Triton itself wrote while zeinspect screened the tutorials (Triton writes
every compile's folder under $TRITON_CACHE_DIR; zeinspect's process has one of its own, removed at
its end, which these screens point at a folder the test keeps): the same files a user's run of
the tutorials leaves behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import oracle
import pytest
from conftest import ROOT, realworld

pytest.importorskip("triton.backends.intel.compiler")

TUTORIALS = realworld() / "triton-tutorials"
TARGETS = "arl-s,bmg-g21"  # an FMA target and a DPAS one: two Triton compiles per kernel
KERNELS = [("01-vector-add.py:add_kernel", "*fp32"), ("02-fused-softmax.py:softmax_kernel", "*fp32"),
           ("05-layer-norm.py:_layer_norm_fwd_fused", "*fp16")]
FIGURES = ("status", "simd", "grf", "spill_bytes", "private_bytes", "scratch_space_bytes")

pytestmark = pytest.mark.skipif(not TUTORIALS.is_dir(), reason="no ../shared/realworld (set $ZEINSPECT_REALWORLD)")


# zeinspect, its process's Triton cache kept in $KEEP_TRITON_CACHE (triton.build.context).
KEEPING = ("import os, sys\nfrom zeinspect.triton.build import context\n"
           "context._process_triton_cache = lambda: os.environ['KEEP_TRITON_CACHE']\n"
           "from zeinspect.cli import main\nmain(sys.argv[1:])\n")


def _zeinspect(cache, *args, keep_triton_cache=False, **environ):
    """zeinspect with `cache` as its build cache; `keep_triton_cache`: the Triton cache its
    compiles write kept in `cache`/triton."""
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **environ)
    command = [sys.executable, "-m", "zeinspect"]
    if keep_triton_cache:
        env["KEEP_TRITON_CACHE"] = str(Path(cache) / "triton")
        command = [sys.executable, "-c", KEEPING]
    return subprocess.run([*command, "triton", *map(str, args), "-q"], capture_output=True, text=True, env=env,
                          timeout=900)


@pytest.fixture(scope="module")
def screened(tmp_path_factory, sid_compiler):
    """The tutorials' kernels screened directly; the cache folder Triton wrote meanwhile."""
    cache = tmp_path_factory.mktemp("zeinspect-cache")
    direct = []
    for spec, pointer in KERNELS:
        proc = _zeinspect(cache, TUTORIALS / spec, "--signature", pointer, "-t", TARGETS, "--compiler",
                          sid_compiler.id, "--json", keep_triton_cache=True)
        assert proc.returncode in (0, 1), proc.stderr
        direct += json.loads(proc.stdout)["reports"]
    return cache, direct


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_cache_the_tutorials_wrote_gives_the_figures_of_screening_them_directly(screened, sid_compiler, workers,
                                                                                  tmp_path):
    """In the screening process (0) and in Triton front-end workers (2, triton.build.front_ends) alike;
    each with a build cache of its own, so every front end and compile runs."""
    cache, direct = screened
    proc = _zeinspect(tmp_path, "--from-cache", cache / "triton", "-t", TARGETS, "--compiler", sid_compiler.id,
                      "--json", ZEINSPECT_TRITON_WORKERS=workers)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["cache"]["triton_versions"] and not doc["cache"]["problems"]
    rows: dict[tuple[str, str], list[dict]] = {}
    for r in doc["reports"]:
        rows.setdefault((r["kernel"].split("[")[0], r["target"]), []).append(r)
    for d in direct:
        got = rows.get((d["kernel"], d["target"]))
        assert got, f"{d['kernel']} on {d['target']}: not in the cache's screen"
        for r in got:  # every entry of the kernel (one per capability group Triton compiled for)
            assert {k: r[k] for k in FIGURES} == {k: d[k] for k in FIGURES}, (d["kernel"], d["target"])
        # The row names the kernel's own Python file, as its TTIR's first location gives it.
        assert {os.path.realpath(r["input"]) for r in got} == {os.path.realpath(d["input"].rsplit(":", 1)[0])}


def test_front_end_workers_return_what_triton_builds_here_across_generations(screened, sid_compiler):
    """triton.build.front_ends with one compile per worker (a generation per two compiles): every
    result is the SPIR-V and metadata Triton gives in this process, whether the builds ask in
    order, skip a place (a kernel whose first group failed) or come back to it."""
    from zeinspect.app.gate import settings
    from zeinspect.app.session import open_session
    from zeinspect.triton.build.backend import compile_kernel, target_groups
    from zeinspect.triton.build.front_ends import FrontEnds
    from zeinspect.triton.sources.cache import read_cache

    cache, _ = screened
    config = settings({"targets": tuple(TARGETS.split(",")), "compiler": sid_compiler.id})
    plan = open_session(config).plan(config.targets)
    kernels = [s.kernel for s in read_cache(cache / "triton").specializations][:3]
    groups = target_groups(plan)
    asked = [(k, g) for k in kernels for g in groups]
    assert len(asked) >= 5
    order = asked[:1] + asked[2:] + asked[1:2]  # the second skipped, then asked for last
    with FrontEnds.planned(kernels, plan, 2, recycle=1) as front:
        assert front.workers == 2
        got = [front.compile(k, g.caps, g.targets[0]) for k, g in order]
        assert len(front.pools) <= 2  # the generations before were let go
    assert front.from_workers == len(order) - 1  # all but the one whose generation had gone
    for (k, g), (ttgir, spirv, meta) in zip(order, got):
        here = compile_kernel(k, g.caps, g.targets[0])
        assert (ttgir, spirv) == here[:2], k.kernel
        assert {n: v for n, v in meta.items() if n != "notes"} == {n: v for n, v in here[2].items() if n != "notes"}


def test_a_clean_build_s_spirv_is_kept_nowhere_and_made_again_only_where_a_compile_is_gone(screened, sid_compiler,
                                                                                           tmp_path, monkeypatch):
    """A screen of many keeps no build's SPIR-V unless asked (triton.probes.audit.files_wanted: the
    cache no larger than its input, issue 62).  Warm, the screen runs no Triton front end and gives
    the same figures, every compile taken from the cache by the SPIR-V's digest; once the compiles
    are gone, each build's front end runs again, once, and the figures are the same again."""
    import hashlib

    from zeinspect.app.gate import settings
    from zeinspect.app.session import open_session
    from zeinspect.cache import BuildCache
    from zeinspect.triton.app.library import screen_cache
    from zeinspect.triton.build import backend, front_ends

    cache, _ = screened
    proc = _zeinspect(tmp_path, "--from-cache", cache / "triton", "-t", TARGETS, "--compiler", sid_compiler.id,
                      "--json", ZEINSPECT_TRITON_WORKERS="0")
    assert proc.returncode in (0, 1), proc.stderr
    cold = json.loads(proc.stdout)["reports"]
    assert cold and all(not r["extra"]["triton"]["artifacts"] for r in cold)
    gone = {re.search(r"SPIR-V SHA-256 ([0-9a-f]{64})", " ".join(r["notes"])).group(1) for r in cold}
    held = {hashlib.sha256(f.read_bytes()).hexdigest() for f in tmp_path.rglob("*") if f.is_file()}
    held |= {hashlib.sha256(d[1]).hexdigest() for f in tmp_path.rglob("*.entry")
             if (d := BuildCache._decode(f.read_bytes())) is not None}
    assert not gone & held  # no file and no entry holds a build's SPIR-V

    monkeypatch.setenv("ZEINSPECT_CACHE_DIR", str(tmp_path))
    config = settings({"targets": tuple(TARGETS.split(",")), "compiler": sid_compiler.id, "triton_workers": 0})
    made = []

    def front_end(kernel, caps, name):
        made.append((kernel.kernel, name))
        return real(kernel, caps, name)

    real = backend.compile_kernel
    monkeypatch.setattr(backend, "compile_kernel", front_end)
    monkeypatch.setattr(front_ends, "compile_kernel", front_end)

    def figures(workers: int = 0) -> dict:
        asked = dataclasses.replace(config, triton_workers=workers)
        got = screen_cache(str(cache / "triton"), asked, open_session(asked)).collection.reports
        return {(r.kernel, r.target): {k: getattr(r, k) for k in FIGURES} for r in got}

    def lose_compiles() -> None:
        for f in tmp_path.rglob("*.entry"):  # every compile's entry goes, the front ends' stay
            d = BuildCache._decode(f.read_bytes())
            if d is not None and "spirv_sha256" not in d[0]:
                f.unlink()

    want = {(r["kernel"], r["target"]): {k: r[k] for k in FIGURES} for r in cold}
    assert figures() == want and not made
    # The front ends made again run in workers, as a cold screen's, and give the same figures
    # (the workers are handed Triton's own compile: a stand-in defined here cannot cross to them,
    # so where each came from is counted instead).
    lose_compiles()
    taken: list[int] = []
    rerun_compile = front_ends.Rerun.compile

    def counted(self, kernel, caps, name):
        before = self.from_workers
        got = rerun_compile(self, kernel, caps, name)
        taken.append(self.from_workers - before)
        return got

    with monkeypatch.context() as workers_step:
        workers_step.setattr(backend, "compile_kernel", real)
        workers_step.setattr(front_ends, "compile_kernel", real)
        workers_step.setattr(front_ends.Rerun, "compile", counted)
        assert figures(workers=2) == want
    assert len(taken) == len(want) and all(taken)  # each build's, and each from a worker
    lose_compiles()
    assert figures() == want
    # One front end per build (each target here is a group of its own), no other.
    assert len(made) == len(set(made)) and set(made) == {(r["kernel"].split("[")[0], r["target"]) for r in cold}


def test_bad_entries_are_named_one_by_one_and_the_rest_screened(screened, sid_compiler, tmp_path):
    cache, _ = screened
    copy = tmp_path / "triton"
    shutil.copytree(cache / "triton", copy)
    every = sorted(p for p in copy.rglob("*.json") if not p.name.startswith("__grp__"))
    # Entries Triton compiled from an IR file (`@NAME`: the re-screen above wrote some, from each
    # entry's TTIR) keep no TTIR: counted, not problems. The others came from the Python kernels.
    from_ir = [p for p in every if p.name.startswith("@")]
    metas = [p for p in every if not p.name.startswith("@")]
    assert len(metas) >= 3 and all(p.with_suffix(".ttir").is_file() for p in metas)
    metas[0].write_text(metas[0].read_text()[:40])  # cut short
    metas[1].with_suffix(".ttir").unlink()  # no TTIR beside it
    metas[2].with_suffix(".ttir").write_text("module { this is not Triton IR }")
    (copy / "notes.json").write_text('{"foreign": true}')  # not a kernel's metadata: not a kernel
    proc = _zeinspect(tmp_path, "--from-cache", copy, "-t", "bmg-g21", "--compiler", sid_compiler.id, "--json")
    # Entries left unread are no notes: the run fails with them (exit 3), each named with why.
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    problems = doc["cache"]["problems"]
    assert any(str(metas[0].relative_to(copy)) in p and "not JSON" in p for p in problems), problems
    assert any(str(metas[1].relative_to(copy)) in p and "no " in p for p in problems), problems
    assert not any("notes.json" in p for p in problems)
    assert not any("@" in p for p in problems) and doc["cache"]["from_ir"] == len(from_ir)
    incidents = doc["incidents"]
    assert any(str(metas[0]) in i and "unread" in i and "not JSON" in i for i in incidents), incidents
    assert any(str(metas[1]) in i and "unread" in i and ".ttir" in i for i in incidents), incidents
    bad = metas[2].stem
    assert any(bad in i and "not screened" in i and "TTIR" in i for i in incidents), incidents
    assert doc["reports"], "the good entries are screened"
    assert all("\n" not in n for n in doc["notes"] + incidents)
    # The ledger accounts for every kernel metadata file the cache holds (counted by the test).
    parts = [p for i in doc["coverage"]["inputs"] for p in i["parts"]]
    assert sum(p["copies"] for p in parts) == len(every)
    total = doc["coverage"]["total"]
    unread = total["unread"] + total["unread_parts"]
    assert unread == 3 and total["excluded"].get("a Triton entry compiled from IR, with no TTIR to rebuild", 0) \
        == len({p.stem for p in from_ir})


def test_a_folder_that_is_not_a_cache_is_one_line_naming_it(tmp_path):
    proc = _zeinspect(tmp_path, "--from-cache", tmp_path / "missing")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert str(tmp_path / "missing") in line and "not a folder" in line
    (tmp_path / "empty").mkdir()
    proc = _zeinspect(tmp_path, "--from-cache", tmp_path / "empty")
    assert proc.returncode == 2 and "holds no Triton kernels" in proc.stderr


LONG_NAME = "triton_poi_fused_" + "_".join(["native_layer_norm_backward"] * 8) + "_6"
"""Inductor's names run past 200 characters (its fused ops, one after another)."""


def test_a_cache_with_a_name_over_200_characters_is_screened(tmp_path, sid_compiler):
    """Triton cuts the cache's file names; zeinspect's own files never grow with the name (a
    hash, the name in the metadata), and the kernel is reported under its whole name."""
    assert len(LONG_NAME) > 200
    module = tmp_path / "fused.py"
    module.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                      f"def {LONG_NAME}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)\n")
    written = tmp_path / "written"
    proc = _zeinspect(written, f"{module}:{LONG_NAME}", "--signature", "*fp32", "--constexprs", "BLOCK=128",
                      "-t", "bmg-g21", "--compiler", sid_compiler.id, keep_triton_cache=True)
    assert proc.returncode == 0, proc.stderr
    fresh = tmp_path / "fresh"
    proc = _zeinspect(fresh, "--from-cache", written / "triton", "-t", "bmg-g21", "--compiler", sid_compiler.id,
                      "--json", ZEINSPECT_TRITON_ARTIFACTS="1")  # its files kept, clean as it is: their names
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    [report] = json.loads(proc.stdout)["reports"]
    assert report["kernel"].startswith(LONG_NAME + "[") and report["status"] == "ok"
    assert all(len(p.name) < 255 for p in fresh.rglob("*"))
    assert all(len(p.name) <= 120 for p in (fresh / "triton-artifacts").iterdir())


INDUCTOR = realworld() / "inductor-gpt2" / "gpt2-step.tar.xz"


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory, sid_compiler):
    """The cache torch.compile wrote for a 4-layer GPT-2's training step on a CUDA GPU (42
    Triton kernels, 67 specializations) and the PyTorch profiler's trace of that step,
    screened on an FMA and a DPAS target with the trace joined (--profile)."""
    if not INDUCTOR.is_file():
        pytest.skip("no ../shared/realworld/inductor-gpt2")
    tmp = tmp_path_factory.mktemp("gpt2")
    subprocess.run(["tar", "xJf", INDUCTOR, "-C", tmp], check=True)
    proc = _zeinspect(tmp / "zc", "--from-cache", tmp / "ind_gpt2", "-t", TARGETS, "--compiler", sid_compiler.id,
                      "--profile", tmp / "trace_gpt2.json", "--cost", "--json")
    assert proc.returncode in (0, 1) and "internal error" not in proc.stderr, proc.stderr
    return tmp, proc, json.loads(proc.stdout)


@pytest.mark.slow
def test_the_inductor_cache_of_a_gpt2_training_step_is_screened_whole(gpt2):
    """Every entry screened on both targets (a specialization not screened would fail the run,
    exit 3); the ledger accounts for every kernel metadata file, counted here on its own."""
    tmp, _, doc = gpt2
    cache = tmp / "ind_gpt2" / "triton"
    metas = [p for p in cache.rglob("*.json") if not p.name.startswith("__grp__")
             and "num_warps" in json.loads(p.read_text())]
    entries = {p.parent.name for p in metas}
    sites = {os.path.basename(site) for s in doc["cache"]["specializations"] for site in s["entries"]}
    assert sites == entries  # every entry read
    screened = {r["kernel"] for r in doc["reports"]}
    for s in doc["cache"]["specializations"]:
        assert f"{s['kernel']}[{s['values']}]" in screened, s["kernel"]
    assert {r["target"] for r in doc["reports"]} == set(TARGETS.split(","))
    total = doc["coverage"]["total"]
    assert total["declared"] == total["reported"] == len(doc["cache"]["specializations"]) and total["unread"] == 0
    assert sum(p["copies"] for i in doc["coverage"]["inputs"] for p in i["parts"]) == len(metas)


@pytest.mark.slow
def test_only_the_rows_that_need_a_look_name_their_entries_and_the_clean_are_counted(gpt2):
    """A cache's text output names where a specialization came from for those with scratch or a
    failed build on some target; the others are one count, and the JSON keeps every entry."""
    _, _, doc = gpt2
    look: set[str] = set()
    for r in doc["reports"]:
        if r["status"] not in ("ok", "not_applicable") or r["scratch_bytes"] or r["scratch_space_bytes"] \
                or r["log_spilled_regs"]:
            look.add(r["kernel"])
    assert look and len(look) < len(doc["cache"]["specializations"])  # both kinds, or the test says nothing
    named = {n.split(": ")[0].rsplit(":", 1)[1] for n in doc["notes"] if " cache entr" in n and ":" in n}
    assert named == look
    [count] = [n for n in doc["notes"] if "clean on every target" in n]
    assert count.startswith(f"{len(doc['cache']['specializations']) - len(look)} specializations ")
    assert all(s["entries"] for s in doc["cache"]["specializations"])


@pytest.mark.slow
def test_a_screen_stopped_by_sigterm_keeps_the_reports_it_had_done(gpt2, sid_compiler):
    """A cache screened batch by batch (triton.app.library.SCREEN_BATCH), stopped by SIGTERM once
    Triton builds the batch after the ones ocloc audits at once (AUDITS_AT_ONCE: by then the first
    is audited and kept): exit 130, a line saying where it stopped, and a JSON document whose
    reports are those of the specializations done, with the figures the whole screen gave them."""
    from zeinspect.triton.probes.batches import AUDITS_AT_ONCE, SCREEN_BATCH

    tmp, _, whole = gpt2
    cache = tmp / "stopped"
    # Every build's files kept: their count says how far the screen got.
    env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), ZEINSPECT_TRITON_ARTIFACTS="1")
    proc = subprocess.Popen([sys.executable, "-m", "zeinspect", "triton", "--from-cache", str(tmp / "ind_gpt2"),
                             "-t", "bmg-g21", "--compiler", sid_compiler.id, "--json", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    built = cache / "triton-artifacts"
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline and \
            len(list(built.glob("*.spv")) if built.is_dir() else []) <= (AUDITS_AT_ONCE + 1) * SCREEN_BATCH:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 130, err
    [line] = [x for x in err.splitlines() if "stopped:" in x]
    done, total = map(int, re.search(r"after (\d+) of (\d+) specializations", line).groups())
    assert total == len(whole["cache"]["specializations"]) and SCREEN_BATCH <= done < total
    doc = json.loads(out)
    assert len({r["kernel"] for r in doc["reports"]}) == done
    figures = {(r["kernel"], r["target"]): {k: r[k] for k in FIGURES} for r in whole["reports"]}
    assert all({k: r[k] for k in FIGURES} == figures[r["kernel"], r["target"]] for r in doc["reports"])


@pytest.mark.slow
def test_cuda_s_libdevice_calls_are_read_as_intel_s(gpt2):
    """Written on a CUDA machine, the cache's TTIR calls CUDA's libdevice (`__nv_tanhf`); built
    as it is, that is an external stack call with a call stack of scratch no XPU build has.
    Each such kernel is built calling Intel's libdevice instead, says so, and makes no stack
    call."""
    tmp, _, doc = gpt2
    calling = {json.loads(p.with_suffix(".json").read_text())["name"] for p in (tmp / "ind_gpt2").rglob("*.ttir")
               if '"__nv_' in p.read_text()}
    assert calling
    for r in doc["reports"]:
        if r["kernel"].split("[", 1)[0] in calling and r["status"] == "ok":
            assert any("libdevice calls read as Triton-XPU's" in n for n in r["notes"]), r["kernel"]
            assert not r["stack_calls"], (r["kernel"], r["target"])


def _kernel_seconds(trace: dict) -> dict[str, float]:
    """Each kernel's GPU seconds, summed straight from the trace's JSON (not zeinspect's reader)."""
    times: dict[str, float] = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            times[e["name"]] = times.get(e["name"], 0.0) + e["dur"] / 1e6
    return times


@pytest.mark.slow
def test_the_step_s_profile_gives_every_triton_kernel_its_share_and_figures(gpt2, sid_compiler):
    """The trace's kernel events, summed by name straight from its JSON: each Triton kernel
    (Inductor's, as launched) is joined with its reports on both targets and its share; every
    other kernel (cuBLAS, cuDNN, PyTorch's own) is a "no report" row with its share; the
    shares add up to the trace's kernel time; the figures shown are the reports' own."""
    tmp, _, doc = gpt2
    trace = json.loads((tmp / "trace_gpt2.json").read_text())
    times = _kernel_seconds(trace)
    joined = doc["profile"]
    rows = {k["name"]: k for k in joined["kernels"]}
    assert set(rows) == set(times)
    assert joined["total_seconds"] == pytest.approx(sum(times.values()))
    assert sum(k["share"] for k in joined["kernels"]) == pytest.approx(1.0)
    reports = {}
    for r in doc["reports"]:
        reports.setdefault((r["kernel"].split("[", 1)[0], r["target"]), []).append(r)
    triton = {n for n in times if n.startswith("triton_")}
    assert triton and triton < set(times)
    for name in times:
        row = rows[name]
        assert row["share"] == pytest.approx(times[name] / sum(times.values()))
        if name not in triton:
            assert row["reports"] == [] and name in joined["no_report"]
            continue
        assert row["reports"], name
        for target in TARGETS.split(","):
            mine = [r for r in reports[(name, target)] if r["status"] == "ok"]
            shown = max((r["scratch_bytes"] or r["scratch_space_bytes"] or 0 for r in mine), default=0)
            assert row["targets"][target]["scratch_bytes"] == shown
    # Every microsecond: the trace's device events (kernels, Kineto's copies and fills), summed
    # here, are the four parts of the device time.
    device = sum(e["dur"] / 1e6 for e in trace["traceEvents"] if e.get("ph") == "X"
                 and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    split = joined["device_time"]
    assert split["total"] == pytest.approx(device)
    assert split["kernels_with_report"] + split["kernels_without_report"] + sum(split["not_kernels"].values()) \
        + split["unattributed"] == pytest.approx(device)
    assert split["kernels_with_report"] == pytest.approx(sum(t for n, t in times.items() if n in triton))
    # taken on an NVIDIA GPU: the shares are a proxy, and the report names the device
    assert trace["deviceProperties"][0]["name"] in joined["proxy"]
    # the text view: the headline per target, from the same join (a re-run reads the build cache)
    proc = _zeinspect(tmp / "zc", "--from-cache", tmp / "ind_gpt2", "-t", TARGETS, "--compiler", sid_compiler.id,
                      "--profile", tmp / "trace_gpt2.json", "--cost")
    for target in TARGETS.split(","):
        assert joined["headline"][target]["text"] in proc.stdout


@pytest.mark.slow
def test_the_step_s_scratch_traffic_in_loops_is_measured_and_weighs_in_the_headline(gpt2, sid_compiler):
    """With --cost every Triton scratch user of the step is measured from IGC's dump of its own
    build (the oracle reads the same dump of a plain build: checked on one with traffic inside a
    loop, where there is one, and one without), and each target's headline share "with scratch
    traffic inside loops" is the trace time of the kernels with such a report there."""
    tmp, _, doc = gpt2
    users = [r for r in doc["reports"] if r["status"] == "ok" and (r["scratch_bytes"] or r["scratch_space_bytes"])]
    assert users and all(r["cost"] is not None for r in users), [r["kernel"] for r in users if r["cost"] is None]
    assert all(r["cost"] is None for r in doc["reports"] if r not in users)
    looping = [r for r in users if r["cost"]["in_loops"]]
    outside = [r for r in users if not r["cost"]["in_loops"]]
    for r in looping[:1] + outside[:1]:
        oracle.check_triton_cost(r, sid_compiler, r["extra"]["triton"]["metadata"]["name"])
    trace = json.loads((tmp / "trace_gpt2.json").read_text())
    times = _kernel_seconds(trace)
    for target in TARGETS.split(","):
        in_loops = {r["kernel"].split("[", 1)[0] for r in looping if r["target"] == target}
        want = sum(times.get(n, 0.0) for n in in_loops) / sum(times.values())
        headline = doc["profile"]["headline"][target]
        assert headline["share_in_loops"] == pytest.approx(want)
        assert "with scratch traffic inside loops" in headline["text"]


@pytest.mark.slow  # the cliff's build on arl-s is a minute
def test_stage_on_a_cache_rebuilds_each_entry_staged_and_says_where_it_cannot(tmp_path, sid_compiler):
    """Seed 000's cliff as a cache holds it: the 64x128x128 f16 dot overflows the scratch cap on
    arl-s (FMA path) as compiled; `--stage` on `--from-cache` screens each entry again with the
    SLM staging pass (a row of its own), which builds; an entry with no dot to stage says so."""
    cache = tmp_path / "zc"
    for spec, extra in ((ROOT / "kernels" / "triton_dot.py:dot_kernel",
                         ("--signature", "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32", "--constexprs", "M=64,N=128,K=128")),
                        (TUTORIALS / "01-vector-add.py:add_kernel", ("--signature", "*fp32"))):
        proc = _zeinspect(cache, spec, *extra, "-t", "arl-s", "--compiler", sid_compiler.id, "--json",
                          keep_triton_cache=True)
        assert proc.returncode in (0, 1), proc.stderr
    plain = _zeinspect(tmp_path / "a", "--from-cache", cache / "triton", "-t", "arl-s", "--compiler", sid_compiler.id,
                       "--json")
    staged = _zeinspect(tmp_path / "b", "--from-cache", cache / "triton", "-t", "arl-s", "--compiler",
                        sid_compiler.id, "--stage", "--json")
    rows = {r["kernel"]: r for r in json.loads(plain.stdout)["reports"]}
    both = {r["kernel"]: r for r in json.loads(staged.stdout)["reports"]}
    [dot] = [r for k, r in rows.items() if k.startswith("dot_kernel[")]
    assert dot["status"] == "scratch_overflow"
    assert set(rows) < set(both)  # the same rows, and a staged one for each
    [dot_staged] = [r for k, r in both.items() if k.startswith("dot_kernel[") and "staged" in k]
    assert dot_staged["status"] == "ok" and dot_staged["extra"]["triton"]["staging"]["changed"]
    [add_staged] = [r for k, r in both.items() if k.startswith("add_kernel[") and "staged" in k]
    assert not add_staged["extra"]["triton"]["staging"]["changed"]
    assert any("staging pass" in n for n in add_staged["notes"]), add_staged["notes"]


@pytest.mark.slow  # the levers' search: dozens of builds of a spilling dot
def test_fix_on_a_cache_searches_each_spilling_entry_and_the_change_holds_when_applied(tmp_path, sid_compiler):
    """`--fix` on `--from-cache`: each entry with scratch is searched over the Triton levers from
    its own IR; the record's change, applied to the cache as launch options (`--num-warps`, ...),
    gives the record's figures, and is never worse than the entry as launched (that shape is
    among those searched)."""
    cache = tmp_path / "zc"
    proc = _zeinspect(cache, ROOT / "kernels" / "triton_dot.py:dot_kernel", "--signature",
                      "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32", "--constexprs", "M=32,N=64,K=64", "-t", "arl-s",
                      "--compiler", sid_compiler.id, "--json", keep_triton_cache=True)
    assert proc.returncode in (0, 1), proc.stderr
    entries = tmp_path / "entries"
    shutil.copytree(cache / "triton", entries)
    fixed = _zeinspect(tmp_path / "b", "--from-cache", entries, "-t", "arl-s", "--compiler", sid_compiler.id, "--fix",
                       "--json")
    doc = json.loads(fixed.stdout)
    [row] = doc["reports"]
    assert row["spill_bytes"] > 0  # the premise: the entry spills on arl-s as launched
    [fix] = doc["fixes"]["specializations"]
    [group] = doc["fixes"]["groups"]
    assert group["specializations"] == [fix["row"]] and group["change"] == fix["record"]["triton"]
    chosen, result = fix["record"]["shape"], fix["record"]["results"]["arl-s"]
    assert result["spill_bytes"] + result["private_bytes"] <= row["spill_bytes"] + row["private_bytes"]
    again = _zeinspect(tmp_path / "c", "--from-cache", entries, "-t", "arl-s", "--compiler", sid_compiler.id,
                       "--num-warps", chosen["num_warps"], "--threads-per-warp", chosen["threads_per_warp"],
                       "--grf-mode", chosen["grf_mode"], *(["--stage"] if chosen["stage"] else []), "--json")
    rows = json.loads(again.stdout)["reports"]
    [applied] = [r for r in rows if ("staged" in r["kernel"]) == bool(chosen["stage"])]
    assert (applied["grf"], applied["spill_bytes"], applied["private_bytes"]) == \
        (result["grf"], result["spill_bytes"], result["private_bytes"])
    text = _zeinspect(tmp_path / "b", "--from-cache", entries, "-t", "arl-s", "--compiler", sid_compiler.id, "--fix")
    assert "fix, per kernel" in text.stdout and group["change"] in text.stdout
    # The loop's records: written, then read back by a re-run (one build in the recorded shape,
    # not a search), and a ratchet line for what no lever cleans that matches its row alone.
    records, ratchet = tmp_path / "triton-fixes.yaml", tmp_path / "scratch_ratchet.txt"
    for n in (1, 2):
        again = _zeinspect(tmp_path / "b", "--from-cache", entries, "-t", "arl-s", "--compiler", sid_compiler.id,
                           "--fix", "--write", records, "--ratchet-lines", ratchet, "--json")
        [got] = json.loads(again.stdout)["fixes"]["specializations"]
        assert got["record"]["shape"] == chosen and got["record"]["results"]["arl-s"] == result
        assert bool(got["record"].get("read_back")) == (n == 2), got["record"]
    from zeinspect.judge import ratchet as ratchet_mod

    lines = ratchet_mod.parse(ratchet.read_text(), str(ratchet)).entries
    assert len(lines) == (0 if fix["record"]["cleans"] else 1)
    assert all(ratchet_mod.kernel_matches(line.kernel, row["kernel"]) for line in lines)
    assert not any(ratchet_mod.kernel_matches(line.kernel, row["kernel"] + "x") for line in lines)
    bad = _zeinspect(tmp_path / "b", "--from-cache", entries, "-t", "arl-s", "--write", records)
    assert bad.returncode == 2 and "give --fix" in bad.stderr


def test_what_cannot_apply_to_a_cache_is_one_line(tmp_path):
    proc = _zeinspect(tmp_path, "--from-cache", tmp_path, "--explain")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--explain apply to FILE.py:KERNEL" in proc.stderr and "--stage" in proc.stderr
