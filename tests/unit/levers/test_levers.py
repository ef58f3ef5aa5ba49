"""Levers: the grid a search walks, how shapes are ranked, how a decision is spelled."""

from __future__ import annotations

from zeinspect.judge.fix import sycl_spelling
from zeinspect.judge.shapes import Cell, CellState, Row
from zeinspect.levers import MODULE_LEVERS, Shape
from zeinspect.levers.base import grid, ignored
from zeinspect.triton.judge import TritonRow, launch_spelling
from zeinspect.triton.model.levers import TRITON_LEVERS, TritonShape, warp_counts

from ..fakes import report


def test_the_module_grid_is_every_sub_group_by_every_register_file():
    shapes = grid(MODULE_LEVERS, Shape, Shape(sub_group=0))
    assert len(shapes) == 4 * 3 == len(set(shapes))
    assert shapes[0] == Shape(sub_group=0, grf="default") and shapes[1] == Shape(sub_group=0, grf="256")


def test_the_triton_grid_only_adds_warps():
    shapes = grid(TRITON_LEVERS, TritonShape, TritonShape(num_warps=8))
    assert {s.num_warps for s in shapes} == set(warp_counts(8)) == {8, 16, 32}
    assert len(shapes) == 2 * 3 * 2 * 3


def test_ranking_prefers_clean_then_fewer_constraints():
    written = Shape(sub_group=0)
    clean_256 = Row(Shape(sub_group=0, grf="256"), [Cell("dg2-g10", CellState.CLEAN, report())], written=written)
    clean_sg16 = Row(Shape(sub_group=16), [Cell("dg2-g10", CellState.CLEAN, report())], written=written)
    spilling = Row(Shape(sub_group=0), [Cell("dg2-g10", CellState.SCRATCH, report(spill=64))], written=written)
    ranked = sorted([spilling, clean_sg16, clean_256], key=Row.key)
    # A fixed sub-group size is a bigger departure than the register file (docs/guides/why-it-spills.md, "How zeinspect
    # chooses a shape"), and any clean shape beats one with scratch.
    assert ranked == [clean_256, clean_sg16, spilling]


def test_a_triton_row_counts_doublings_of_warps_from_the_written_count():
    written = TritonShape(num_warps=4)
    assert TritonRow(TritonShape(num_warps=16), written=written).constraints == (2, 0)
    assert TritonRow(TritonShape(stage=True, grf_mode="large"), written=written).constraints == (1, 2)


def test_a_target_without_a_large_register_file_ignores_the_256_mode():
    assert ignored(MODULE_LEVERS, Shape(grf="256"), report(grf=128)) == "asked for 256 registers, got 128"
    assert ignored(MODULE_LEVERS, Shape(grf="256"), report(grf=256)) is None


def test_spellings_name_what_an_author_writes():
    assert sycl_spelling(Shape(sub_group=0, grf="256"), Shape(sub_group=32)) == (
        "no required size (drop [[sycl::reqd_sub_group_size(32)]]) with the grf_size<256> kernel property "
        "(sycl::ext::intel::experimental::grf_size<256>)")
    assert launch_spelling(TritonShape(stage=True, num_warps=8, grf_mode="large")) == (
        "num_warps=8, threads_per_warp=32, grf_mode='large'; and the SLM staging pass on the TTGIR "
        "(zeinspect.triton.build.staging)")
