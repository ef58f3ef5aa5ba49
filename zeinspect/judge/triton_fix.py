"""Shapes for Triton kernels: the staging pass, register file, threads per warp and warps per
program (levers.TRITON_LEVERS), searched and chosen in the same order as OpenCL kernels
(judge.shapes).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..levers import TRITON_LEVERS
from ..levers.base import grid, spell
from ..levers.triton_launch import TritonShape
from ..probes.triton import TritonKernel, probe_triton
from .shapes import Cell, Row, _cell


@dataclass
class TritonRow(Row):
    levers: tuple = field(default=TRITON_LEVERS, repr=False)


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
        from .shapes import Search

        fake = Search(input=self.kernel.label, kernel=self.kernel.kernel, written_sub_group=None, depends=[])
        fake.rows = list(self.rows)
        return fake.why()


def search_triton(kernel: TritonKernel, config, *, progress=None) -> TritonSearch:
    result = TritonSearch(kernel=kernel)
    written = TritonShape(grf_mode=kernel.grf_mode, threads_per_warp=kernel.threads_per_warp,
                          num_warps=kernel.num_warps)
    for shape in grid(TRITON_LEVERS, TritonShape, written):
        # Every lever but the staging pass is a launch option of the kernel itself.
        k = replace(kernel, **{lv.name: getattr(shape, lv.name) for lv in TRITON_LEVERS if lv.how == "Triton option"})
        got = probe_triton(k, config, stage=shape.stage, progress=progress)
        row = TritonRow(shape=shape, as_written=shape == written, written=written)
        row.cells = [_cell(r.target, r, shape, TRITON_LEVERS) for r in got.reports if r.kernel != "*"] or \
            [Cell(r.target, "failed", r, r.reason or "") for r in got.reports]
        for r in got.reports:
            staging = ((r.extra or {}).get("triton") or {}).get("staging")
            if staging:
                result.staging[shape.describe()] = staging
        result.rows.append(row)
        result.compiler_ids += [c.id for c in got.compilers if c.id not in result.compiler_ids]
    return result


def record(search: TritonSearch) -> dict:
    w = search.winner
    shape = w.shape if w is not None and isinstance(w.shape, TritonShape) else TritonShape(stage=True)
    cells = w.cells if w else []
    return {
        "shape": shape.to_json(),
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
    options = [lv for lv in TRITON_LEVERS if lv.how == "Triton option"][::-1]
    passes = [lv for lv in TRITON_LEVERS if lv.how != "Triton option"]
    text = ", ".join(spell(tuple(options), shape, None))
    return text + "".join(f"; and {x}" for x in spell(tuple(passes), shape, None))


def _staging_text(report) -> str | None:
    staging = (((report.extra or {}).get("triton") or {}).get("staging") or {}) if report else {}
    if not staging:
        return None
    parts = []
    for d in staging.get("dots", []):
        parts.append(f"staged, K_TILE {d['k_tile']}, {d['slm_bytes']} bytes of SLM" if d["applied"]
                     else f"declined by gate {d['gate']}: {d['reason']}")
    return "; ".join(parts)
