"""Shapes for Triton kernels: the staging pass, register file, threads per warp and warps per
program (triton.levers.TRITON_LEVERS), searched and chosen in the same order as OpenCL
kernels (judge.shapes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...judge.shapes import Cell, CellState, Row, Search, cell_of
from ...levers.base import How, LeverRegistry, grid, spell
from ...model import WHOLE_MODULE, KernelReport
from ...probes.results import Progress
from ...probes.session import Session
from ...settings import Settings
from ..model.kernel import TritonKernel
from ..model.levers import TRITON_LEVERS, TritonShape
from ..probes.audit import probe_triton, triton_part


@dataclass
class TritonRow(Row):
    levers: LeverRegistry = field(default=TRITON_LEVERS, repr=False)


@dataclass
class TritonSearch:
    kernel: TritonKernel
    rows: list[TritonRow] = field(default_factory=list)
    staging: dict = field(default_factory=dict)
    compiler_ids: list[str] = field(default_factory=list)

    @property
    def winner(self) -> TritonRow | None:
        ranked = sorted(self.rows, key=Row.key)
        return ranked[0] if ranked and ranked[0].builds_everywhere else None

    @property
    def runner_up(self) -> TritonRow | None:
        ranked = sorted(self.rows, key=Row.key)
        return ranked[1] if len(ranked) > 1 else None

    def why(self) -> str:
        fake = Search(input=self.kernel.label, kernel=self.kernel.kernel, written=TritonShape(), depends=[])
        fake.rows = list(self.rows)
        return fake.why()


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


def record(search: TritonSearch) -> dict:
    w = search.winner
    shape = w.shape if w is not None and isinstance(w.shape, TritonShape) else TritonShape(stage=True)
    cells = w.cells if w else []
    return {
        "shape": shape.to_json(),
        "found": w is not None,
        "cleans": w is not None and not w.scratch_targets,
        "why": search.why(),
        "triton": launch_spelling(shape),
        "compilers": search.compiler_ids,
        "results": {c.target: {"status": c.report.status.value if c.report else "failed",
                               "simd": c.report.simd if c.report else None, "grf": c.report.grf if c.report else None,
                               "spill_bytes": c.report.spill_bytes if c.report else None,
                               "private_bytes": c.report.private_bytes if c.report else None,
                               "staging": _staging_text(c.report)} for c in cells},
    }


def launch_spelling(shape: TritonShape) -> str:
    """The decision as a Triton author writes it at the launch (or in a triton.Config): the
    launch options, outermost first (num_warps, threads_per_warp, grf_mode), then any pass."""
    options = [lv for lv in TRITON_LEVERS if lv.how is How.TRITON_OPTION][::-1]
    passes = [lv for lv in TRITON_LEVERS if lv.how is not How.TRITON_OPTION]
    text = ", ".join(spell(tuple(options), shape, None))
    return text + "".join(f"; and {x}" for x in spell(tuple(passes), shape, None))


def _staging_text(report: KernelReport | None) -> str | None:
    part = triton_part(report) if report else None
    staging = part.staging if part is not None and part.staging else {}
    if not staging:
        return None
    parts = []
    for d in staging.get("dots", []):
        parts.append(f"staged, K_TILE {d['k_tile']}, {d['slm_bytes']} bytes of SLM" if d["applied"]
                     else f"declined by gate {d['gate']}: {d['reason']}")
    return "; ".join(parts)
