"""Choosing a shape when none removes the scratch (judge.shapes): the least scratch traffic in
loops first, then the fewest targets and bytes; the reason names both figures."""

from __future__ import annotations

from zeinspect.judge.shapes import Row, Search, cell_of
from zeinspect.levers import Shape

from ..fakes import report


def _cost(per_iteration: int) -> dict:
    return {"per_iteration_bytes": per_iteration, "loop_depth": 1 if per_iteration else 0,
            "bytes_by_depth": {}, "messages": {}, "in_loops": bool(per_iteration)}


def _row(shape: Shape, spill: int, traffic: int | None, written: Shape) -> Row:
    row = Row(shape=shape, written=written, cells=[cell_of("dg2-g10", report(spill=spill), shape)])
    row.costs = {"dg2-g10": None if traffic is None else _cost(traffic)}
    return row


def _search(*rows: Row) -> Search:
    return Search(input="k.cl", kernel="k", written=Shape(), depends=[], rows=list(rows))


def test_the_least_traffic_in_loops_wins_over_fewer_bytes() -> None:
    written = Shape()
    few_bytes_in_a_loop = _row(Shape(grf="256"), 1024, 512, written)
    more_bytes_outside = _row(Shape(sub_group=16), 4096, 0, written)
    search = _search(few_bytes_in_a_loop, more_bytes_outside)
    assert search.winner is more_bytes_outside
    why = search.why()
    assert "4096 bytes in all" in why and "no scratch inside loops" in why
    assert "moves 512 bytes of scratch per loop iteration" in why and "1024 bytes of scratch in all" in why


def test_equal_traffic_falls_back_to_bytes_and_unmeasured_ranks_last() -> None:
    written = Shape()
    small, large = _row(Shape(grf="256"), 1024, 64, written), _row(Shape(sub_group=16), 4096, 64, written)
    unknown = _row(Shape(sub_group=32), 16, None, written)
    search = _search(unknown, large, small)
    assert [r is x for r, x in zip(search.candidates, (small, large, unknown))] == [True] * 3
    assert unknown.loop_traffic is None and small.loop_traffic == 64


def test_without_measured_costs_the_order_is_as_before() -> None:
    """A search that measured nothing (some shape cleans) ranks by targets and bytes alone."""
    written = Shape()
    clean = Row(shape=Shape(grf="256"), written=written, cells=[cell_of("dg2-g10", report(), Shape(grf="256"))])
    spilling = Row(shape=Shape(), written=written, cells=[cell_of("dg2-g10", report(spill=64), Shape())])
    search = _search(spilling, clean)
    assert search.winner is clean and search.cleans
    assert "uses no scratch memory anywhere" in search.why()
