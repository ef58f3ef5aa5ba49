"""formats.text at library scale: a kernel found in several places is one row and one count."""

from __future__ import annotations

from zeinspect.formats import text
from zeinspect.model import InputId

from ..fakes import report

PKG = "pkg-1.0.whl"


def _in(file: str, kernel: str = "fill<int>", *, spill: int = 0, target: str = "bmg-g21", image: str = ".tgtimg[0]"):
    where = f"{PKG}!{file}"
    return report(kernel, target, spill=spill, input=f"{where}[{image}]",
                  origin=InputId(where, image=image, package="pkg 1.0"))


def test_one_kernel_in_several_files_of_a_package_is_one_row_and_one_count():
    reports = [_in("a.so"), _in("b.so"), _in("c.so"), _in("a.so", "other")]
    out = text.table(reports)
    assert out.splitlines()[0].startswith("2 kernels on 1 targets")
    rows = [line for line in out.splitlines() if "fill<int>" in line and "(+2 more)" in line]
    assert len(rows) == 1 and rows[0].startswith("a.so[.tgtimg[0]]:")
    assert "  fill<int>: also in b.so[.tgtimg[0]], c.so[.tgtimg[0]]" in out


def test_the_same_kernel_with_other_figures_stays_a_row_of_its_own():
    reports = [_in("a.so", spill=64), _in("b.so")]
    out = text.table(reports)
    assert out.splitlines()[0].startswith("1 kernels on 1 targets: 1 use scratch")
    assert sum("fill<int>" in line for line in out.splitlines()) == 2 and "more)" not in out


def test_kernels_of_the_same_name_in_two_inputs_given_apart_are_two():
    reports = [report("k", input="a.cl"), report("k", input="b.cl")]
    assert text.summary(reports).startswith("2 kernels")
