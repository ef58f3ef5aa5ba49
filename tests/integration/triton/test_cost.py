"""`zeinspect triton --cost`: a Triton kernel's scratch traffic, from IGC's dump of the very
SPIR-V its report was built from, with the report's own options, on its target; checked against
the test oracle's independent reading of IGC's dump of a plain ocloc build of that SPIR-V
(tests/oracle.py: check_triton_cost).  The real cache's case, with traffic inside a loop
and a profile's headline, is in test_from_cache.py."""

from __future__ import annotations

import json

import oracle
from conftest import KERNELS
from counting import counting_ocloc


def test_a_triton_kernels_cost_is_what_igcs_dump_of_its_own_build_says(cli, sid_compiler):
    """The FMA dot of kernels/ at a size that spills on arl-s (and a little on bmg-g21) and builds."""
    res = cli("triton", f"{KERNELS / 'triton_dot.py'}:dot_kernel", "--signature", "*fp16",
              "--constexprs", "M=64,N=64,K=64", "-t", "arl-s,bmg-g21", "--compiler", sid_compiler.id, "--cost",
              "--json", "-q")
    reports = json.loads(res.out)["reports"]
    users = [r for r in reports if r["scratch_bytes"] or r["scratch_space_bytes"]]
    assert users, "the kernel no longer spills on these targets: the test says nothing"
    assert all(r["cost"] is None for r in reports if r not in users)
    for r in users:
        oracle.check_triton_cost(r, sid_compiler, "dot_kernel")
    text = cli("triton", f"{KERNELS / 'triton_dot.py'}:dot_kernel", "--signature", "*fp16",
               "--constexprs", "M=64,N=64,K=64", "-t", "arl-s,bmg-g21", "--compiler", sid_compiler.id, "--cost",
               "-q").out
    assert "scratch traffic" in text


def test_with_cost_each_build_is_compiled_once_and_its_cost_read_from_that_compile(cli, sid_compiler, tmp_path):
    """With --cost every build is made as a dumping compile, whose zebin and log are the plain
    compile's (probes.dumps): an ocloc that counts its compiles sees no plain compile and no more
    dumping compiles than the run says it made (a scratch user compiled again for its cost would
    be one more); the costs are still what IGC's dump of the build says (the oracle), and the
    figures are the plain screen's."""
    args = (f"{KERNELS / 'triton_dot.py'}:dot_kernel", "--signature", "*fp16", "--constexprs", "M=64,N=64,K=64",
            "-t", "arl-s,bmg-g21", "--json", "-q")
    counted = tmp_path / "compiles.txt"
    counting = counting_ocloc(sid_compiler, tmp_path / "counting", counted)
    doc = json.loads(cli("triton", *args, "--cost", env={"ZEINSPECT_OCLOC": str(counting),
                                                         "ZEINSPECT_CACHE_DIR": str(tmp_path / "c")}).out)
    plain, dumping = (counted.read_text().split().count(k) for k in ("plain", "1"))
    users = [r for r in doc["reports"] if r["scratch_bytes"] or r["scratch_space_bytes"]]
    assert users, "the kernel no longer spills on these targets: the test says nothing"
    assert plain == 0 and dumping == doc["stats"]["compiles"] > 0, (plain, dumping, doc["stats"])
    for r in users:
        oracle.check_triton_cost(r, sid_compiler, "dot_kernel")
    screened = json.loads(cli("triton", *args, "--compiler", sid_compiler.id,
                              env={"ZEINSPECT_CACHE_DIR": str(tmp_path / "plain")}).out)["reports"]
    figures = ("kernel", "target", "status", "spill_bytes", "private_bytes", "scratch_bytes", "grf", "simd")
    assert [[r[k] for k in figures] for r in doc["reports"]] == [[r[k] for k in figures] for r in screened]


def test_a_gate_s_triton_entry_is_judged_by_the_loop_rule(cli, sid_compiler, tmp_path):
    """A gate configuration's `triton:` entry under the loop rule (`loop_bound`): the kernel's
    cost is measured as the audit measures any scratch user's, so a spill touched outside loops
    only passes a bound of 0 bytes per iteration; unmeasured, it would fail as new scratch."""
    import yaml

    (tmp_path / "ratchet.txt").write_text("")
    (tmp_path / "gate.yaml").write_text(yaml.safe_dump({
        "targets": ["arl-s"], "ratchet": "ratchet.txt", "compiler": sid_compiler.id, "loop_bound": 0,
        "triton": [{"kernel": f"{KERNELS / 'triton_dot.py'}:dot_kernel", "signature": "*fp16",
                    "constexprs": "M=64,N=64,K=64"}]}))
    res = cli("audit", "--config", tmp_path / "gate.yaml", "--format", "json")
    [v] = json.loads(res.out)["verdicts"]
    report = v["report"]
    assert report["scratch_bytes"] and report["cost"] is not None
    oracle.check_triton_cost(report, sid_compiler, "dot_kernel")
    assert not report["cost"]["in_loops"], "the kernel now spills inside a loop: the test needs another kernel"
    assert res.code == 0 and v["verdict"] == "LISTED", res
