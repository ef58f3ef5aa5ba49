"""Shapes for Triton kernels: the staging pass as one more lever, with register file,
threads per warp and warps per program, searched and chosen in the same order as OpenCL
kernels (judge.shapes).

Warps per program (`num_warps`) is a lever because a Triton program computes a whole block
whatever its number of warps: more warps spread the block's accumulators over more lanes,
so each lane holds fewer (seed 000's 64x128 f32 accumulator tile is 128 values per lane at
4 warps of 16 and 32 at 16 warps).  Only counts at or above the written one are tried (fewer
warps can only add registers per lane), up to 32 (a work-group of 32 x 32 lanes, the largest
every target accepts).  Each doubling counts as one constraint when shapes tie.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..probes.triton import TritonKernel, probe_triton
from .shapes import Cell, Row, _cell

GRF_MODES = ("default", "large", "auto")
THREADS = (32, 16)
MAX_NUM_WARPS = 32


def warp_counts(written: int) -> tuple[int, ...]:
    """The written count, then each doubling up to MAX_NUM_WARPS."""
    counts = [written]
    while counts[-1] * 2 <= MAX_NUM_WARPS:
        counts.append(counts[-1] * 2)
    return tuple(counts)


@dataclass(frozen=True)
class TritonShape:
    stage: bool = False
    grf_mode: str = "default"
    threads_per_warp: int = 32
    num_warps: int = 4

    def describe(self) -> str:
        grf = {"default": "default registers", "large": "256 registers", "auto": "automatic register file"}[self.grf_mode]
        return (f"{'staged' if self.stage else 'not staged'}, {grf}, {self.num_warps} warps of "
                f"{self.threads_per_warp} threads")

    def to_json(self) -> dict:
        return {"stage": self.stage, "grf_mode": self.grf_mode, "threads_per_warp": self.threads_per_warp,
                "num_warps": self.num_warps}

    # Row.cell() compares against 256 when the register file is large.
    @property
    def grf(self) -> str:
        return "256" if self.grf_mode == "large" else self.grf_mode

    @property
    def sub_group(self):
        return None


@dataclass
class TritonRow(Row):
    written_num_warps: int = 4

    @property
    def constraints(self) -> tuple[int, int]:
        s = self.shape
        # Each doubling of the warps counts as one more change: fewer is the smaller departure.
        doublings = max(s.num_warps, 1).bit_length() - max(self.written_num_warps, 1).bit_length()
        changed = int(s.stage) + int(s.threads_per_warp != 32) + abs(doublings)
        return changed, {"default": 0, "auto": 1, "large": 2}[s.grf_mode]


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
        fake.rows = self.rows
        return fake.why()


def search_triton(kernel: TritonKernel, config, *, progress=None) -> TritonSearch:
    result = TritonSearch(kernel=kernel)
    written = TritonShape(grf_mode=kernel.grf_mode, threads_per_warp=kernel.threads_per_warp,
                          num_warps=kernel.num_warps)
    for stage in (False, True):
        for grf in GRF_MODES:
            for threads in THREADS:
                for warps in warp_counts(kernel.num_warps):
                    shape = TritonShape(stage=stage, grf_mode=grf, threads_per_warp=threads, num_warps=warps)
                    k = replace(kernel, grf_mode=grf, threads_per_warp=threads, num_warps=warps)
                    got = probe_triton(k, config, stage=stage, progress=progress)
                    row = TritonRow(shape=shape, as_written=shape == written, written_num_warps=kernel.num_warps)
                    row.cells = [_cell(r.target, r, shape) for r in got.reports if r.kernel != "*"] or \
                        [Cell(r.target, "failed", r, r.reason or "") for r in got.reports]
                    for r in got.reports:
                        staging = ((r.extra or {}).get("triton") or {}).get("staging")
                        if staging:
                            result.staging[shape.describe()] = staging
                    result.rows.append(row)
                    for c in got.compilers:
                        if c.id not in result.compiler_ids:
                            result.compiler_ids.append(c.id)
    return result


def record(search: TritonSearch) -> dict:
    w = search.winner
    shape = w.shape if w else TritonShape(stage=True)
    cells = w.cells if w else []
    return {
        "shape": shape.to_json(),
        "cleans": bool(w) and not w.scratch_targets,
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
    """The decision as a Triton author writes it at the launch (or in a triton.Config)."""
    text = f"num_warps={shape.num_warps}, threads_per_warp={shape.threads_per_warp}"
    if shape.grf_mode != "default":
        text += f", grf_mode={shape.grf_mode!r}"
    if shape.stage:
        text += "; and the SLM staging pass on the TTGIR (zeinspect.judge.staging)"
    return text


def _staging_text(report) -> str | None:
    staging = (((report.extra or {}).get("triton") or {}).get("staging") or {}) if report else {}
    if not staging:
        return None
    parts = []
    for d in staging.get("dots", []):
        parts.append(f"staged, K_TILE {d['k_tile']}, {d['slm_bytes']} bytes of SLM" if d["applied"]
                     else f"declined by gate {d['gate']}: {d['reason']}")
    return "; ".join(parts)
