"""Bad input and broken toolchains: one line naming the file and the problem, the documented
exit code, never a traceback; compiler crashes and hangs are contained and reported."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import KERNELS


def one_line_error(res, *needles):
    lines = [line for line in res.err.splitlines() if line.strip()]
    assert lines, res
    assert "Traceback" not in res.err
    error_lines = [line for line in lines if line.startswith("zeinspect: error:")]
    assert len(error_lines) == 1, res.err
    for needle in needles:
        assert needle in error_lines[0], (needle, error_lines[0])


@pytest.fixture
def spirv(sid_compiler, tmp_path):
    subprocess.run([sid_compiler.path, "compile", "-file", str(KERNELS / "clean.cl"), "-device", "tgllp",
                    "-spv_only", "-out_dir", str(tmp_path), "-output", "clean"], check=True, capture_output=True,
                   cwd=tmp_path)
    return next(tmp_path.glob("*.spv")).read_bytes()


@pytest.fixture
def zebin(sid_compiler, tmp_path):
    out = tmp_path / "zb"
    subprocess.run([sid_compiler.path, "compile", "-file", str(KERNELS / "clean.cl"), "-device", "dg2-g10",
                    "-out_dir", str(out), "-output", "clean"], check=True, capture_output=True, cwd=tmp_path)
    return next(out.glob("*.bin")).read_bytes()


def test_nonexistent_file(cli, tmp_path):
    res = cli("inspect", tmp_path / "missing.spv")
    assert res.code == 2
    one_line_error(res, "missing.spv", "no such file")


def test_empty_file(cli, tmp_path):
    (tmp_path / "empty.spv").write_bytes(b"")
    res = cli("kernel", tmp_path / "empty.spv")
    assert res.code == 2
    one_line_error(res, "empty.spv", "empty")


def test_garbage(cli, tmp_path):
    (tmp_path / "noise.spv").write_bytes(os.urandom(4096))
    res = cli("inspect", tmp_path / "noise.spv")
    assert res.code == 2
    one_line_error(res, "noise.spv", "not a SPIR-V module")


def test_truncated_spirv(cli, tmp_path, spirv):
    (tmp_path / "cut.spv").write_bytes(spirv[: len(spirv) // 2 + 2])
    res = cli("inspect", tmp_path / "cut.spv")
    assert res.code == 2
    one_line_error(res, "cut.spv", "SPIR-V")


def test_truncated_and_garbled_zebin(cli, tmp_path, zebin):
    (tmp_path / "cut.bin").write_bytes(zebin[:700])
    res = cli("inspect", tmp_path / "cut.bin")
    assert res.code == 2
    one_line_error(res, "cut.bin", "ELF")
    garbled = bytearray(zebin)
    garbled[0x28:0x30] = b"\xff" * 8  # e_shoff far past the end
    (tmp_path / "garbled.bin").write_bytes(bytes(garbled))
    res = cli("inspect", tmp_path / "garbled.bin")
    assert res.code == 2
    one_line_error(res, "garbled.bin")


def test_truncated_archive(cli, tmp_path, zebin):
    member = b"64.12.55.8/".ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
    member += str(len(zebin)).encode().ljust(10) + b"`\n"
    archive = b"!<arch>\n" + member + zebin
    (tmp_path / "whole.ar").write_bytes(archive)
    assert cli("inspect", tmp_path / "whole.ar").code == 0
    (tmp_path / "cut.ar").write_bytes(archive[:-200])
    res = cli("inspect", tmp_path / "cut.ar")
    assert res.code == 2
    one_line_error(res, "cut.ar", "past the end")


def test_unknown_target_suggests(cli, sid_compiler):
    res = cli("inspect", KERNELS / "clean.cl", "-t", "bmg-g12")
    assert res.code == 2
    one_line_error(res, "unknown target 'bmg-g12'", "did you mean", "bmg-g21")


def test_no_compiler(cli, tmp_path):
    res = cli("inspect", KERNELS / "clean.cl", env={"ZEINSPECT_OCLOC": str(tmp_path / "no-ocloc")})
    assert res.code == 3
    one_line_error(res, "no usable Intel GPU compiler", "no-ocloc")


def _wrapper(tmp_path: Path, real: str, body: str) -> str:
    """An ocloc that answers identity questions for real but misbehaves on `compile`."""
    path = tmp_path / "ocloc-faulty"
    path.write_text(f"#!/bin/sh\ncase \"$*\" in *' -file '*) {body} ;; esac\nexec '{real}' \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_compiler_crash_is_a_finding(cli, sid_compiler, tmp_path):
    faulty = _wrapper(tmp_path, sid_compiler.path, "kill -SEGV $$")
    res = cli("inspect", KERNELS / "sg32_accumulate.cl", "-t", "tgllp", "--json", "--no-cache",
              env={"ZEINSPECT_OCLOC": faulty})
    assert res.code == 3
    one_line_error(res, "sg32_accumulate.cl", "compiler crashed: signal 11")
    import json

    doc = json.loads(res.out)
    assert doc["reports"][0]["status"] == "build_failed"
    assert "signal 11" in doc["reports"][0]["reason"]


def test_compiler_hang_times_out(cli, sid_compiler, tmp_path):
    faulty = _wrapper(tmp_path, sid_compiler.path, "sleep 327")
    start = time.monotonic()
    res = cli("inspect", KERNELS / "clean.cl", "-t", "tgllp", "--timeout", "2", "--no-cache",
              env={"ZEINSPECT_OCLOC": faulty})
    assert time.monotonic() - start < 60
    assert res.code == 3
    one_line_error(res, "clean.cl", "timed out after 2 s")
    # The whole process group died with it: no sleeping child is left behind.
    leftover = subprocess.run(["pgrep", "-f", "sleep 327"], capture_output=True, text=True).stdout.strip()
    assert not leftover


@pytest.mark.parametrize("body, code, said", [("sleep 331", 3, "timed out after 2 s"),
                                               ("kill -SEGV $$", 3, "compiler crashed: signal 11")])
def test_explain_contains_a_hanging_or_crashing_compiler(cli, sid_compiler, tmp_path, body, code, said):
    """explain's dumping compile: bounded by --timeout, a crash contained, one line, the dump's
    temporary folder removed, nothing cached (the next run compiles again).  The run gets a
    temporary folder of its own: the other suite workers' dumps live in the shared one."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    faulty = _wrapper(tmp_path, sid_compiler.path, body)
    for _ in range(2):
        start = time.monotonic()
        res = cli("explain", KERNELS / "clean.cl", "-t", "tgllp", "--timeout", "2",
                  env={"ZEINSPECT_OCLOC": faulty, "TMPDIR": str(tmp)})
        assert time.monotonic() - start < 60
        assert res.code == code
        one_line_error(res, "clean.cl", said)
    assert not list(tmp.iterdir())  # the dump's temporary folder is gone
    assert not subprocess.run(["pgrep", "-f", "sleep 331"], capture_output=True, text=True).stdout.strip()
    # The same compiler identity, working: the failure was not cached under its key.
    res = cli("explain", KERNELS / "clean.cl", "-t", "tgllp", "--compiler", sid_compiler.id)
    assert res.code == 0 and "no spill" in res.out, res


def test_a_stop_ends_the_compiles_running_instead_of_waiting_for_them(sid_compiler, tmp_path):
    """SIGTERM while a compile runs that would take minutes (a cliff kernel's can): the run ends
    at once, exit 130, the compile's process group gone, and the compile it killed is no
    finding (no crash reported: what it would have built is what was left)."""
    import json
    import signal
    import sys

    from conftest import ROOT, _clean_environ

    marker = f"sleep 337.{os.getpid()}"  # this run's own, whatever else runs on the machine
    slow = _wrapper(tmp_path, sid_compiler.path, marker)
    env = {**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT),
           "ZEINSPECT_OCLOC": slow}
    # --cost: a stopped run does not go on to its costs' dumping compiles (they would hang too).
    proc = subprocess.Popen([sys.executable, "-m", "zeinspect", "inspect", str(KERNELS / "clean.cl"), "-t", "tgllp",
                             "--json", "-q", "--cost"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        deadline = time.monotonic() + 120
        running = b""
        while proc.poll() is None and time.monotonic() < deadline and not running:
            running = subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout.strip()
            time.sleep(0.05)
        assert running and proc.poll() is None, proc.communicate()  # the premise: stopped while it compiles
        proc.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        subprocess.run(["pkill", "-f", marker])
    assert time.monotonic() - stopped < 30  # not the 337 s the compile would have taken
    assert proc.returncode == 130, err
    assert not subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.strip()
    assert "signal" not in err
    doc = json.loads(out)
    assert not any("signal" in str(r.get("reason")) for r in doc["reports"])
    assert not any("signal" in i for i in doc["incidents"])
    assert any(n.startswith("--cost: not measured: the run was stopped") for n in doc["notes"])


@pytest.mark.parametrize("timeout, env", [(["--timeout", "2"], {}), ([], {"ZEINSPECT_TIMEOUT": "2"})])
def test_a_hanging_version_query_is_bounded_by_the_timeout(cli, tmp_path, timeout, env):
    """The compiler's own version probe gets no more than --timeout (or $ZEINSPECT_TIMEOUT)."""
    hanging = tmp_path / "ocloc-mute"
    hanging.write_text("#!/bin/sh\nsleep 329\n")
    hanging.chmod(hanging.stat().st_mode | stat.S_IXUSR)
    start = time.monotonic()
    res = cli("inspect", KERNELS / "clean.cl", "-t", "tgllp", *timeout, env={"ZEINSPECT_OCLOC": str(hanging), **env})
    assert time.monotonic() - start < 30  # the minute the query would get otherwise
    assert res.code == 3
    one_line_error(res, "ocloc-mute", "did not report its version within 2 s")
    assert not subprocess.run(["pgrep", "-f", "sleep 329"], capture_output=True, text=True).stdout.strip()


def test_kernel_filter_names_the_kernels_that_exist(cli, sid_compiler):
    res = cli("kernel", KERNELS / "fma_tile.cl", "-t", "tgllp", "-k", "nope", "--compiler", sid_compiler.id)
    assert res.code == 2
    one_line_error(res, "nope", "fma_tile")


def test_inspect_stopped_by_sigterm_keeps_what_it_built(tmp_path, sid_compiler):
    """Stopped by SIGTERM (a CI job's time limit) once some compiles are done: exit 130, a line
    saying where it stopped, and the document of the reports built so far, each whole."""
    import json
    import signal
    import subprocess
    import sys
    import time

    from conftest import KERNELS, ROOT, _clean_environ

    cache = tmp_path / "cache"
    env = {**_clean_environ(), "ZEINSPECT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "zeinspect", "inspect", str(KERNELS), "-t", "default",
                             "--compiler", sid_compiler.id, "--json", "-q", "--jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and len(list(cache.rglob("*.entry"))) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 130, err
    [line] = [x for x in err.splitlines() if "stopped:" in x]
    assert "compiles" in line
    doc = json.loads(out)
    assert doc["reports"] and all(r["status"] for r in doc["reports"])
    assert not any("declared kernel unread" in i for i in doc["incidents"])  # said once, in the stop's line
