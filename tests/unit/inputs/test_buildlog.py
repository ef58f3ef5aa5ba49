"""Build-log lines of both compiler generations, with and without the `[device] ` prefix."""

from __future__ import annotations

import pytest

from zeinspect.inputs.buildlog import build_verdict, parse_log

OLD = "warning: kernel _Z3fooPf  compiled SIMD16 allocated 128 regs and spilled around 1043"
NEW = "warning: in kernel 'foo': compiled SIMD32 allocated 256 regs and spilled around 1420"
PTSS = ("error: in kernel 'bar': total scratch space exceeds HW supported limit: 300000 bytes "
        "(max permitted PTSS 262144 bytes)")


@pytest.mark.parametrize("line, want", [
    ("Build succeeded for : dg2-g10.", ("succeeded", "dg2-g10")),
    ("[12.55.8] Build failed for : 12.55.8 with error code: -11", ("failed", "12.55.8")),
    ("Build succeeded.", None), (OLD, None),
])
def test_build_verdict(line, want):
    assert build_verdict(line) == want


def test_spills_and_overflows_of_both_generations():
    events = parse_log("\n".join([OLD, "[dg2-g10] " + NEW, PTSS, "Build failed for : dg2-g10 with error code: -11"]))
    spill_old, spill_new, ptss, failed = events
    assert (spill_old.kind, spill_old.kernel, spill_old.simd, spill_old.spilled_regs) == ("spill", "_Z3fooPf", 16, 1043)
    assert (spill_new.kernel, spill_new.regs, spill_new.target) == ("foo", 256, "dg2-g10")
    assert (ptss.kind, ptss.kernel, ptss.needed_bytes, ptss.limit_bytes) == ("scratch_overflow", "bar", 300000, 262144)
    assert (failed.kind, failed.code) == ("build_failed", -11)


def test_a_failures_exit_is_its_verdicts_code_where_the_compiler_says_why():
    """A fat build's device and a build of an `ocloc multi` list end with their verdict: its
    code's low byte is the exit of the same compile alone (-11 exits 245), where an error line
    or a scratch overflow says why; output that does not end with the verdict is none."""
    from zeinspect.inputs.buildlog import failure_exit

    fat = "\n" + PTSS + "\nerror: backend compiler failed build.\n\nBuild failed for : bmg-g21 with error code: -11\n"
    assert failure_exit(fat) == 245
    assert failure_exit(fat.replace("for : bmg-g21 ", "")) == 245
    assert failure_exit(fat + "Build failed for : lnl-m with error code: -11\nnot a verdict\n") is None
    assert failure_exit("Build failed for : bmg-g21 with error code: -11\n") is None  # no reason given
    assert failure_exit(fat.replace("-11", "0")) is None
