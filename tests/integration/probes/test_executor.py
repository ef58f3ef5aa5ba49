"""Hostile input and faults: fuzzed readers, contained compilers, a cache that cannot lose."""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import KERNELS, ROOT

FUZZ_TARGETS = ["zebin", "zeinfo", "patchtokens", "fatbin", "offload", "spirv", "sycl_cache", "buildlog", "ratchet",
                "gate", "shapes", "package", "profile"]


def test_every_fuzz_target_is_run_and_has_seeds():
    """A reader's fuzz target that no test runs, or that starts from no seed, is not fuzzed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fuzz_targets", ROOT / "tests" / "fuzz" / "targets.py")
    assert spec is not None and spec.loader is not None
    targets = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(targets)
    assert sorted(FUZZ_TARGETS) == sorted(targets.TARGETS)
    for name in targets.TARGETS:
        assert any((ROOT / "tests" / "fuzz" / "corpus" / name).iterdir()), name


@pytest.mark.parametrize("target", FUZZ_TARGETS)
def test_fuzz_target_short_budget(target, tmp_path):
    """Each reader under atheris for a short budget (scripts/fuzz_all.sh runs them for 1,000,000)."""
    pytest.importorskip("atheris")
    (tmp_path / "work").mkdir()
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fuzz.py"), target, "-runs=4000",
                           "-max_total_time=25", "-timeout=20", "-rss_limit_mb=2048",
                           f"-artifact_prefix={tmp_path}/", str(tmp_path / "work"),
                           str(ROOT / "tests" / "fuzz" / "corpus" / target)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))


@pytest.mark.parametrize("doc", [
    b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nkernels: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
])
def test_billion_laughs_fails_fast(cli, tmp_path, doc):
    from zeinspect.errors import FormatError
    from zeinspect.inputs.strict_yaml import load_yaml_strictly

    start = time.monotonic()
    with pytest.raises(FormatError, match="aliases"):
        load_yaml_strictly(doc, ".ze_info")
    assert time.monotonic() - start < 1
    gate = tmp_path / "gate.yaml"
    gate.write_bytes(doc.replace(b"kernels", b"inputs"))
    res = cli("audit", "--config", gate)
    assert res.code == 2 and "uses YAML aliases" in res.err and "Traceback" not in res.err


@pytest.mark.parametrize("value", ["!!bool maybe", "!!int x", "!!timestamp x", "!!float ''"])
def test_a_value_its_tag_cannot_hold_is_a_one_line_error(cli, tmp_path, value):
    """PyYAML's safe constructors raise KeyError, ValueError or AttributeError on these (not a
    YAMLError): a gate configuration holding one is refused, one line naming the file, exit 2."""
    gate = tmp_path / "gate.yaml"
    gate.write_text(f"targets: [dg2-g10]\ninputs: [x.cl]\nstrict: {value}\n")
    res = cli("audit", "--config", gate)
    assert res.code == 2 and str(gate) in res.err and "cannot hold" in res.err, res
    assert "internal error" not in res.err and "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


def test_names_from_files_are_printed_safely(cli, tmp_path):
    log = tmp_path / "b.log"
    log.write_text("[dg2-g10] warning: in kernel 'evil\x1b]0;pwned\x07\x1b[2J': compiled SIMD32 allocated 128 regs "
                   "and spilled around 4\nBuild succeeded for : dg2-g10.\n")
    res = cli("audit", "--log", log, "--ratchet", os.devnull)
    assert res.code == 1
    assert "\x1b" not in res.out and "\x07" not in res.out
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J" in res.out


def _faulty(tmp_path: Path, real: str, device: str, action: str) -> str:
    """An ocloc that misbehaves only when the device list includes `device`."""
    path = tmp_path / f"ocloc-{action.split()[0]}"
    path.write_text("#!/bin/sh\n"
                    f"case \"$*\" in *' -device '*{device}*) {action} ;; esac\n"
                    f"exec '{real}' \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("action, words", [
    ("kill -KILL $$", "signal 9 (SIGKILL)"),
    ("kill -SEGV $$", "signal 11 (SIGSEGV)"),
    ("sleep 300", "timed out after 3 s"),
])
def test_one_target_fails_the_others_carry_on(cli, sid_compiler, tmp_path, action, words):
    faulty = _faulty(tmp_path, sid_compiler.path, "12.55.8", action)
    res = cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "tgllp,dg2-g10,lnl-m", "--json", "--no-cache",
              "--timeout", "3", env={"ZEINSPECT_OCLOC": faulty})
    assert res.code == 3, res
    doc = json.loads(res.out)
    by_target = {r["target"]: r for r in doc["reports"]}
    assert by_target["dg2-g10"]["status"] == "build_failed" and words in by_target["dg2-g10"]["reason"]
    assert by_target["tgllp"]["status"] == "ok" and by_target["tgllp"]["spill_bytes"] > 0
    assert by_target["lnl-m"]["status"] == "ok"
    assert len([line for line in res.err.splitlines() if line.startswith("zeinspect: error:")]) == 1


def test_full_disk_degrades_to_no_cache(cli, sid_compiler, tmp_path):
    """With writes over 256 bytes refused (RLIMIT_FSIZE) the cache cannot be written: one warning,
    correct results.  The compiler itself gets its limit back through a wrapper.  A build's entry
    holds its figures, log and command (about 500 bytes compressed: no zebin, executor._store);
    the kernel is one line, so that zeinspect's own copy of it for ocloc fits under the limit."""
    tiny = Path(__file__).parents[2] / "kernels" / "tiny_scale.cl"
    wrapper = tmp_path / "ocloc-unlimited"
    wrapper.write_text(f"#!/bin/sh\nulimit -f unlimited\nexec '{sid_compiler.path}' \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    reference = cli("inspect", tiny, "-t", "tgllp,dg2-g10", "--json", "--compiler", sid_compiler.id)
    env = dict(cli.env, ZEINSPECT_OCLOC=str(wrapper), ZEINSPECT_CACHE_DIR=str(tmp_path / "cache"))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (256, resource.RLIM_INFINITY))

    proc = subprocess.run([sys.executable, "-m", "zeinspect", "inspect", str(tiny), "-t",
                           "tgllp,dg2-g10", "--json"], capture_output=True, text=True, env=env, preexec_fn=limit,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning: build cache disabled") == 1
    # The wrapper hides IGC's version from the identity; everything the compiler decided must match.
    strip = lambda d: [{k: v for k, v in r.items() if k not in ("command", "compiler")}  # noqa: E731
                       for r in d["reports"]]
    assert strip(json.loads(proc.stdout)) == strip(json.loads(reference.out))


def test_concurrent_runs_share_one_cache(cli, sid_compiler, tmp_path):
    env = dict(cli.env, ZEINSPECT_CACHE_DIR=str(tmp_path / "shared"))
    # The corpus without its slowest kernel (ptss_overflow.cl): what is shared is the cache, not the work.
    light = [str(p) for p in sorted(KERNELS.glob("*.cl")) if p.name != "ptss_overflow.cl"]
    argv = [sys.executable, "-m", "zeinspect", "inspect", *light, "-t", "tgllp,dg2-g10,lnl-m", "--json",
            "--compiler", sid_compiler.id]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode in (0, 1) for p in procs), outs
    docs = [json.loads(o[0]) for o in outs]
    assert docs[0]["reports"] == docs[1]["reports"]
    res = cli("inspect", *light, "-t", "tgllp,dg2-g10,lnl-m", "--json", "--compiler", sid_compiler.id,
              env={"ZEINSPECT_CACHE_DIR": str(tmp_path / "shared")})
    third = json.loads(res.out)
    assert third["stats"]["compiles"] == 0 and third["reports"] == docs[0]["reports"]
    assert not list((tmp_path / "shared").rglob("*.tmp"))


def test_written_files_are_replaced_atomically(cli, sid_compiler, tmp_path):
    """A JUnit report that exists is replaced whole; a failed write leaves the old one."""
    junit = tmp_path / "a.xml"
    junit.write_text("old")
    res = cli("audit", KERNELS / "clean.cl", "-t", "tgllp", "--ratchet", os.devnull, "--junit", junit,
              "--compiler", sid_compiler.id)
    assert res.code == 0 and junit.read_text().startswith("<?xml")
    from zeinspect.fileio import atomic_write

    target = tmp_path / "b.txt"
    target.write_text("old")

    class Boom(Exception):
        pass

    import zeinspect.fileio as cache_mod

    real = cache_mod.os.replace

    def failing_replace(src, dst):
        raise Boom()

    cache_mod.os.replace = failing_replace
    try:
        with pytest.raises(Boom):
            atomic_write(target, b"new")
    finally:
        cache_mod.os.replace = real
    assert target.read_text() == "old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".b.txt")]
