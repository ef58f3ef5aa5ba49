"""Shapes for Triton kernels: the staging pass, register file, threads per warp and warps per
program (triton.model.levers.TRITON_LEVERS), searched in the same order as OpenCL
kernels (judge.shapes); the choice is triton.judge's.
"""

from __future__ import annotations

from ...judge.shapes import Cell, CellState, cell_of
from ...levers.base import How, grid
from ...model import WHOLE_MODULE
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ..judge import TritonRow, TritonSearch
from ..model.kernel import TritonKernel
from ..model.levers import TRITON_LEVERS, TritonShape
from ..model.part import triton_part
from ..probes.audit import probe_triton


def written_shape(kernel: TritonKernel) -> TritonShape:
    """The shape a kernel is built in as launched: each launch-option lever's value, no staging."""
    return TritonShape(**{lv.name: kernel.option(lv.name, lv.default) for lv in TRITON_LEVERS.of(How.TRITON_OPTION)})


def one_lever_at_a_time(written: TritonShape) -> list[TritonShape]:
    """Each lever alone, in registry order (the staging pass, the register file, threads per warp,
    warps), each of its settings the kernel is not launched with: the fix loop's first round on
    many specializations, where the first of these that cleans is the change to make."""
    return [written.replace(**{lv.name: value}) for lv in TRITON_LEVERS
            for value in lv.settings(getattr(written, lv.name)) if value != getattr(written, lv.name)]


def add_row(search: TritonSearch, shape: TritonShape, got: Collection | str) -> None:
    """A shape's build (its reports on every target, or why it did not build) as a row of `search`."""
    written = written_shape(search.kernel)
    row = TritonRow(shape=shape, as_written=shape == written, written=written)
    if isinstance(got, str):
        row.cells = [Cell(target, CellState.FAILED, None, got) for target in search.targets]
    else:
        row.cells = [cell_of(r.target, r, shape, TRITON_LEVERS) for r in got.reports if r.kernel != WHOLE_MODULE] or \
            [Cell(r.target, CellState.FAILED, r, r.reason or "") for r in got.reports]
        for r in got.reports:
            part = triton_part(r)
            if part is not None and part.staging:
                search.staging[shape.describe()] = part.staging
        search.compiler_ids += [c.id for c in got.compilers if c.id not in search.compiler_ids]
    search.rows.append(row)


def search_triton(kernel: TritonKernel, config: Settings, session: Session, *,
                  progress: Progress | None = None) -> TritonSearch:
    """Every shape of the levers, built one after another (a kernel named as FILE.py:KERNEL)."""
    result = TritonSearch(kernel=kernel, targets=tuple(config.targets))
    for shape in grid(TRITON_LEVERS, TritonShape, written_shape(kernel)):
        # Every launch-option lever sets the request's own field; the staging pass runs in the probe.
        add_row(result, shape, probe_triton(kernel.with_options(shape.launch()), config, session, stage=shape.stage,
                                            progress=progress))
    return result
