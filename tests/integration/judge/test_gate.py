"""The scratch gate: every verdict from real compiles and real build logs, JUnit read back,
interrupted updates, the gate configuration and the pytest plugin in a sample project."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from conftest import KERNELS, ROOT

SG32 = KERNELS / "sg32_accumulate.cl"


def verdicts(doc) -> dict:
    out = {}
    for v in doc["verdicts"]:
        key = (v["report"]["kernel"], v["report"]["target"]) if v["report"] else ("line", v["entry_line"])
        out[key] = v["verdict"]
    return out


def audit_json(cli, *args):
    res = cli("audit", *args, "--format", "json")
    assert res.code in (0, 1), res
    return res.code, json.loads(res.out)


def measured(cli, compiler, source, target):
    _, doc = audit_json(cli, source, "-t", target, "--compiler", compiler.id, "--ratchet", os.devnull)
    report = next(v["report"] for v in doc["verdicts"] if v["report"] and v["report"]["target"] == target)
    return report["audited_private_bytes"] if "audited_private_bytes" in report else report["private_bytes"], \
        report["spill_bytes"]


def test_verdicts_from_real_compiles(cli, compiler, tmp_path):
    """NEW, GREW, LISTED, IMPROVED and STALE from one real spilling kernel, on both compiler generations."""
    private, spill = measured(cli, compiler, SG32, "tgllp")
    assert spill > 0
    ratchet = tmp_path / "r.txt"
    base = (SG32, KERNELS / "clean.cl", "-t", "tgllp", "--compiler", compiler.id, "--ratchet", ratchet)

    ratchet.write_text("# nothing listed\n")
    code, doc = audit_json(cli, *base)
    assert code == 1 and verdicts(doc)[("sg32_accumulate", "tgllp")] == "NEW"
    assert verdicts(doc)[("saxpy", "tgllp")] == "CLEAN"
    assert doc["summary"]["text"] == "audited 2 kernels on 1 targets: 1 use scratch memory, 0 listed in the ratchet"

    ratchet.write_text(f"sg32_accumulate xe-lp {private} {spill - 1}  # one byte short\n")
    code, doc = audit_json(cli, *base)
    assert code == 1 and verdicts(doc)[("sg32_accumulate", "tgllp")] == "GREW"

    ratchet.write_text(f"sg32_accumulate tgllp {private} {spill}\n")
    code, doc = audit_json(cli, *base)
    assert code == 0 and verdicts(doc)[("sg32_accumulate", "tgllp")] == "LISTED"
    assert doc["summary"]["listed_kernels"] == 1

    ratchet.write_text(f"sg32_accumulate * {private} {spill + 64}\nsaxpy * 0 16\nno_such_kernel * 0 8\n")
    code, doc = audit_json(cli, *base)
    assert code == 0  # notes only
    v = verdicts(doc)
    assert (v[("line", 1)], v[("line", 2)], v[("line", 3)]) == ("IMPROVED", "STALE", "STALE")
    assert cli("audit", *base, "--strict").code == 1
    text = cli("audit", *base).out
    assert f"tighten it to `{private} {spill}`" in text and "remove this line" in text


def test_overflow_fails_whatever_the_ratchet_says(cli, sid_compiler, tmp_path):
    ratchet = tmp_path / "r.txt"
    ratchet.write_text("ptss_live_set * 10000000 10000000  # allowing everything does not help\n")
    code, doc = audit_json(cli, KERNELS / "ptss_overflow.cl", "-t", "bmg-g21", "--compiler", sid_compiler.id,
                           "--ratchet", ratchet)
    assert code == 1
    assert verdicts(doc)[("ptss_live_set", "bmg-g21")] == "OVERFLOW"


def test_a_kernel_that_does_not_build_is_a_failed_finding(cli, debian_compiler, tmp_path):
    broken = tmp_path / "broken.cl"
    broken.write_text("__kernel void broken(__global float* x) { x[0] = undeclared_symbol; }\n")
    code, doc = audit_json(cli, broken, "-t", "tgllp", "--compiler", debian_compiler.id, "--ratchet", os.devnull)
    assert code == 1
    (v,) = doc["verdicts"]
    # A build failure fails the gate, under its own word: it is not a scratch overflow.
    assert v["verdict"] == "FAILED" and v["fails"] and v["report"]["status"] == "build_failed"
    assert "undeclared_symbol" in v["report"]["reason"]


@pytest.fixture(scope="module")
def real_logs(sid_compiler, debian_compiler, tmp_path_factory):
    """Build logs as the compilers print them: fat builds of both generations, one with a PTSS error."""
    tmp = tmp_path_factory.mktemp("logs")

    def fat(compiler, source, devices):
        argv = [compiler.path, "compile", "-file", str(source), "-device", devices, "-out_dir", str(tmp)]
        if not compiler.zebin_by_default:
            argv += ["-internal_options", "-cl-intel-allow-zebin"]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
        return proc.stdout + proc.stderr

    return {
        "old": fat(debian_compiler, SG32, "tgllp,dg2-g10"),
        "new": fat(sid_compiler, SG32, "tgllp,lnl-m"),
        "ptss": fat(sid_compiler, KERNELS / "ptss_overflow.cl", "dg2-g10,bmg-g21"),
    }


def test_log_gate_both_generations(cli, real_logs, tmp_path):
    old, new = tmp_path / "old.log", tmp_path / "new.log"
    old.write_text(real_logs["old"])
    new.write_text(real_logs["new"])
    assert "warning: kernel sg32_accumulate  compiled SIMD32" in real_logs["old"]
    assert "warning: in kernel 'sg32_accumulate': compiled SIMD32" in real_logs["new"]
    code, doc = audit_json(cli, "--log", old, "--log", new, "--ratchet", os.devnull)
    assert code == 1
    v = {(k, t, d["report"]["input"]): d for d in doc["verdicts"] if d["report"]
         for k, t in [(d["report"]["kernel"], d["report"]["target"])]}
    old_tgl = v[("sg32_accumulate", "tgllp", str(old))]
    assert old_tgl["verdict"] == "NEW" and old_tgl["report"]["source"] == "log"
    regs = int(real_logs["old"].split("spilled around ")[1].split()[0])
    assert old_tgl["report"]["log_spilled_regs"] == regs
    assert old_tgl["report"]["spill_bytes"] == regs * 32
    assert ("sg32_accumulate", "dg2-g10", str(old)) in v
    assert v[("sg32_accumulate", "tgllp", str(new))]["verdict"] == "NEW"
    assert ("sg32_accumulate", "lnl-m", str(new)) not in v  # no spill line for Xe2


def test_log_gate_prefixed_lines_and_ptss(cli, real_logs, tmp_path):
    # icpx (and NEO >= 26.31) put the device in front of every line.
    prefixed = tmp_path / "icpx.log"
    lines = real_logs["ptss"].splitlines()
    prefixed.write_text("\n".join(f"[bmg-g21] {line}" if "ptss_live_set" in line else line for line in lines) + "\n")
    plain = tmp_path / "ocloc.log"
    plain.write_text(real_logs["ptss"])
    for log in (prefixed, plain):
        code, doc = audit_json(cli, "--log", log, "--ratchet", os.devnull)
        assert code == 1
        overflow = [d for d in doc["verdicts"] if d["verdict"] == "OVERFLOW"]
        assert [(d["report"]["kernel"], d["report"]["target"]) for d in overflow] == [("ptss_live_set", "bmg-g21")]
        needed = int(real_logs["ptss"].split("limit: ")[1].split()[0])
        assert overflow[0]["report"]["needed_scratch_bytes"] == needed
        assert overflow[0]["report"]["scratch_limit_bytes"] == 262144


def test_log_line_without_figure_is_still_a_finding(cli, tmp_path):
    log = tmp_path / "b.log"
    log.write_text("[arl-s] warning: in kernel 'k': we couldn't compile without exceeding max permitted PTSS, drop SIMD\n"
                   "Build succeeded for : arl-s.\n")
    code, doc = audit_json(cli, "--log", log, "--ratchet", os.devnull)
    assert code == 1
    (v,) = doc["verdicts"]
    assert v["verdict"] == "NEW" and v["report"]["scratch_unknown"] is True
    assert "unknown size" in v["message"]


def test_junit_and_github_formats(cli, sid_compiler, tmp_path):
    junit = tmp_path / "out" / "audit.xml"
    junit.parent.mkdir()
    args = (SG32, KERNELS / "clean.cl", "-t", "tgllp,lnl-m", "--compiler", sid_compiler.id, "--ratchet", os.devnull)
    res = cli("audit", *args, "--junit", junit)
    assert res.code == 1
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("tests")) == len(cases) == 4
    assert int(suite.get("failures")) == len(failed) == 1
    assert failed[0].get("name") == "sg32_accumulate [tgllp]"
    assert failed[0].find("failure").get("type") == "NEW"
    gh = cli("audit", *args, "--format", "github").out.splitlines()
    assert gh[0].startswith(f"::error file={SG32},title=zeinspect NEW::sg32_accumulate on tgllp")
    assert gh[-1].startswith("audited 2 kernels on 2 targets")


def test_update_tightens_and_refuses_to_grow(cli, sid_compiler, tmp_path):
    private, spill = measured(cli, sid_compiler, SG32, "tgllp")
    ratchet = tmp_path / "r.txt"
    original = f"# keep me\nsg32_accumulate   tgllp   {private}   {spill + 100}   # why\nsaxpy * 0 0\n"
    ratchet.write_text(original)
    args = (SG32, KERNELS / "clean.cl", "-t", "tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet)
    res = cli("ratchet", "update", *args)
    assert res.code == 0, res
    assert ratchet.read_text() == f"# keep me\nsg32_accumulate   tgllp   {private}   {spill}   # why\n"
    ratchet.write_text(f"sg32_accumulate tgllp {private} {spill - 8}\n")
    res = cli("ratchet", "update", *args)
    assert res.code == 1 and "would grow" in res.out
    assert ratchet.read_text() == f"sg32_accumulate tgllp {private} {spill - 8}\n"
    res = cli("ratchet", "update", *args, "--allow-grow")
    assert res.code == 0 and "grew" in res.out
    assert ratchet.read_text() == f"sg32_accumulate tgllp {private} {spill}\n"
    assert cli("audit", *args, "--strict").code == 0


def test_update_keeps_the_tab_dialect(cli, sid_compiler, tmp_path):
    ratchet = tmp_path / "r.tsv"
    ratchet.write_text("# group\tprivate\tspill\tkernel-id\n")
    args = (SG32, "-t", "tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet)
    assert cli("ratchet", "update", *args, "--allow-grow").code == 0
    lines = ratchet.read_text().splitlines()
    group, private, spill, kernel = lines[1].split("\t")
    assert (group, kernel) == ("sg32_accumulate", "sg32_accumulate") and int(spill) > 0
    ratchet.write_text("# group\tprivate\tspill\tkernel-id\n" + "\t".join([group, private, spill, kernel]).replace(
        "\t" + spill + "\t", "\t9999999\t") + "\n")
    assert cli("ratchet", "update", *args).code == 0
    assert ratchet.read_text().splitlines()[1] == lines[1]


def test_interrupted_update_leaves_the_old_file(cli, sid_compiler, tmp_path):
    """Kill `ratchet update` at many moments: the file is always the old or the new one."""
    private, spill = measured(cli, sid_compiler, SG32, "tgllp")
    ratchet = tmp_path / "r.txt"
    old = f"# header\nsg32_accumulate tgllp {private} {spill + 512}\n"
    new = f"# header\nsg32_accumulate tgllp {private} {spill}\n"
    args = ["ratchet", "update", SG32, "-t", "tgllp", "--compiler", sid_compiler.id, "--ratchet", ratchet]
    env = dict(cli.env)
    seen = set()
    for delay in [0.04 * i for i in range(1, 16)]:
        ratchet.write_text(old)
        proc = subprocess.Popen([sys.executable, "-m", "zeinspect", *map(str, args)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        content = ratchet.read_text()
        assert content in (old, new)
        seen.add(content)
    assert old in seen  # some kills landed before the write
    # A disk that refuses the write: the old file stays, the error is one line.
    ratchet.write_text(old)
    os.chmod(tmp_path, 0o500)
    try:
        res = cli(*args)
    finally:
        os.chmod(tmp_path, 0o700)
    if os.geteuid() != 0:  # root ignores directory permissions
        assert res.code == 2 and ratchet.read_text() == old


def test_gate_configuration(cli, sid_compiler, tmp_path):
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "gate").mkdir()
    shutil.copy(KERNELS / "clean.cl", project / "kernels")
    (project / "scratch_ratchet.txt").write_text("")
    (project / "gate" / "gate.yaml").write_text(
        "targets: [tgllp, lnl-m]\nratchet: ../scratch_ratchet.txt\ninputs: [../kernels]\n"
        f"compiler: {sid_compiler.id}\n")
    res = cli("audit", "--config", "gate/gate.yaml", cwd=project)
    assert res.code == 0, res
    assert "audited 1 kernels on 2 targets: 0 use scratch memory, 0 listed in the ratchet" in res.out
    # The same project after a change that makes a kernel spill: NEW fails the gate.
    shutil.copy(SG32, project / "kernels" / "clean.cl")
    res = cli("audit", "--config", "gate/gate.yaml", cwd=project)
    assert res.code == 1 and "FAIL: NEW: sg32_accumulate on tgllp" in res.out
    (project / "gate" / "bad.yaml").write_text("targets: default\ninptus: [../kernels]\n")
    res = cli("audit", "--config", "gate/bad.yaml", cwd=project)
    assert res.code == 2 and "gate/bad.yaml: unknown setting 'inptus'" in res.err


def test_pytest_plugin_in_a_sample_project(cli, sid_compiler, tmp_path):
    sample = tmp_path / "sample"
    shutil.copytree(ROOT / "tests" / "sample_project", sample)
    # The sample project's kernels are the corpus's own (one copy of each kernel in the repository).
    (sample / "kernels").mkdir()
    for name in ("clean.cl", "sg32_accumulate.cl"):
        shutil.copy(KERNELS / name, sample / "kernels" / name)
    env = dict(cli.env, ZEINSPECT_OCLOC=sid_compiler.path)

    def pytest_run(*extra):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=sample,
                              capture_output=True, text=True, env=env)
        return proc.returncode, proc.stdout

    code, out = pytest_run()
    assert code == 1 and "1 failed, 4 passed" in out, out
    assert "NEW: sg32_accumulate on tgllp" in out
    # The fixture's result carries the audit's summary line (formats.audit.summary's, the same as
    # the command line's first line) for the assertion's message.
    (sample / "test_summary.py").write_text(
        "def test_summary(zeinspect_audit):\n"
        "    result = zeinspect_audit(['kernels/sg32_accumulate.cl'], targets=['tgllp'])\n"
        "    assert result.passed(strict=False), result.summary\n")
    code, out = pytest_run("test_summary.py")
    (sample / "nothing.txt").write_text("# nothing listed\n")
    audited = cli("audit", "kernels/sg32_accumulate.cl", "-t", "tgllp", "--ratchet", "nothing.txt", cwd=sample,
                  env={"ZEINSPECT_OCLOC": sid_compiler.path})
    first_line = (audited.out.splitlines() or [audited.err])[0]
    assert first_line.startswith("audited 1 kernels on 1 targets: 1 use scratch memory"), first_line
    assert code == 1 and f"AssertionError: {first_line}" in out, out
    (sample / "test_summary.py").unlink()
    # List the kernel as measured: every case passes.
    assert cli("ratchet", "update", "kernels/", "-t", "tgllp,lnl-m", "--ratchet", "scratch_ratchet.txt",
               "--allow-grow", cwd=sample, env={"ZEINSPECT_OCLOC": sid_compiler.path}).code == 0
    code, out = pytest_run()
    assert code == 0 and "5 passed" in out, out
    # The command-line options override the test's own choices.
    code, out = pytest_run("--zeinspect-targets", "tgllp")
    assert code == 0 and "3 passed" in out, out
    # Any setting in its text form, as --zeinspect-set gives it (a number, a switch).
    code, out = pytest_run("--zeinspect-set", "jobs=4", "--zeinspect-set", "strict=true")
    assert code == 0 and "5 passed" in out, out
    # No compiler: the audit skips with the reason instead of failing.
    env["ZEINSPECT_OCLOC"] = str(tmp_path / "missing-ocloc")
    code, out = pytest_run("-rs")
    assert code == 0 and "skipped" in out and "no usable Intel GPU compiler" in out, out


def test_the_projects_own_gate(cli, sid_compiler):
    """The main job (`make audit`): every corpus kernel, the Triton cliff included, in the shape
    `ratchet/shapes.yaml` records.  The kernels that use scratch are exactly those whose
    recorded decision says no shape cleans them, and the ratchet lists exactly those."""
    import yaml

    res = cli("audit", "--config", ROOT / "ratchet" / "gate.yaml", "--strict", "--format", "json", cwd=ROOT)
    assert res.code == 0, res
    doc = json.loads(res.out)
    shapes = yaml.safe_load((ROOT / "ratchet" / "shapes.yaml").read_text())
    cleans = {kernel: d["cleans"] for entry in shapes["modules"].values() for kernel, d in entry["kernels"].items()}
    cleans |= {label.rpartition(":")[2]: d["cleans"] for label, d in shapes.get("triton", {}).items()}
    reports = [v["report"] for v in doc["verdicts"] if v.get("report")]
    assert {r["kernel"] for r in reports} >= set(cleans)
    using = {r["kernel"] for r in reports if r["status"] != "ok" or r["scratch_bytes"] is None or r["scratch_bytes"] > 0}
    assert using == {k for k, c in cleans.items() if not c}
    listed = {line.split()[0] for line in (ROOT / "scratch_ratchet.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert listed == using
