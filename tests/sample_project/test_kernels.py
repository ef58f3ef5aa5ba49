# A project's whole scratch audit: one test case per (kernel, target).
from zeinspect.pytest_plugin import audit_test

test_kernel_scratch = audit_test("kernels/", targets=["tgllp", "lnl-m"], ratchet="scratch_ratchet.txt")


def test_with_the_fixture(zeinspect_audit):
    result = zeinspect_audit(["kernels/clean.cl"], targets=["tgllp"])
    assert result.passed(strict=False), result.summary
