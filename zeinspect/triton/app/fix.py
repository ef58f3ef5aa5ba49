"""Shapes for Triton kernels: the staging pass, register file, threads per warp and warps per
program (triton.model.levers.TRITON_LEVERS), searched in the same order as OpenCL
kernels (judge.shapes); the choice is triton.judge's.
"""

from __future__ import annotations

from ...judge.shapes import Cell, CellState, cell_of
from ...levers.base import How, grid
from ...model import WHOLE_MODULE
from ...probes.results import Progress
from ...probes.session import Session
from ...settings import Settings
from ..judge import TritonRow, TritonSearch
from ..model.kernel import TritonKernel
from ..model.levers import TRITON_LEVERS, TritonShape
from ..model.part import triton_part
from ..probes.audit import probe_triton


def search_triton(kernel: TritonKernel, config: Settings, session: Session, *,
                  progress: Progress | None = None) -> TritonSearch:
    result = TritonSearch(kernel=kernel)
    written = TritonShape(**{lv.name: kernel.option(lv.name, lv.default)
                             for lv in TRITON_LEVERS.of(How.TRITON_OPTION)})
    for shape in grid(TRITON_LEVERS, TritonShape, written):
        # Every launch-option lever sets the request's own field; the staging pass runs in the probe.
        k = kernel.with_options(shape.launch())
        got = probe_triton(k, config, session, stage=shape.stage, progress=progress)
        row = TritonRow(shape=shape, as_written=shape == written, written=written)
        row.cells = [cell_of(r.target, r, shape, TRITON_LEVERS) for r in got.reports if r.kernel != WHOLE_MODULE] or \
            [Cell(r.target, CellState.FAILED, r, r.reason or "") for r in got.reports]
        for r in got.reports:
            part = triton_part(r)
            if part is not None and part.staging:
                result.staging[shape.describe()] = part.staging
        result.rows.append(row)
        result.compiler_ids += [c.id for c in got.compilers if c.id not in result.compiler_ids]
    return result


