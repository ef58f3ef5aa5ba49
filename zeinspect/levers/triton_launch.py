"""Triton's launch options as levers: register file mode, threads per warp, warps per program.

Warps per program (`num_warps`) is a lever because a Triton program computes a whole block
whatever its number of warps: more warps spread the block's accumulators over more lanes,
so each lane holds fewer (seed 000's 64x128 f32 accumulator tile is 128 values per lane at
4 warps of 16 and 32 at 16 warps).  Only counts at or above the written one are tried (fewer
warps can only add registers per lane), up to 32 (a work-group of 32 x 32 lanes, the largest
every target accepts).  Each doubling counts as one departure when shapes tie.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Lever
from .register_file import large_mode_ignored

MAX_NUM_WARPS = 32
_GRF_COST = {"default": 0, "small": 0, "auto": 1, "large": 2}


@dataclass(frozen=True)
class TritonShape:
    """How a Triton kernel is built: the staging pass and its launch options."""

    stage: bool = False
    grf_mode: str = "default"
    threads_per_warp: int = 32
    num_warps: int = 4

    def describe(self) -> str:
        grf = {"default": "default registers", "large": "256 registers", "auto": "automatic register file",
               "small": "128 registers"}[self.grf_mode]
        return (f"{'staged' if self.stage else 'not staged'}, {grf}, {self.num_warps} warps of "
                f"{self.threads_per_warp} threads")

    def to_json(self) -> dict:
        return {"stage": self.stage, "grf_mode": self.grf_mode, "threads_per_warp": self.threads_per_warp,
                "num_warps": self.num_warps}


def warp_counts(written: int) -> tuple[int, ...]:
    """The written count, then each doubling up to MAX_NUM_WARPS."""
    counts = [written]
    while counts[-1] * 2 <= MAX_NUM_WARPS:
        counts.append(counts[-1] * 2)
    return tuple(counts)


def _doublings(value: int, written: int | None) -> int:
    return abs(max(value, 1).bit_length() - max(written or 4, 1).bit_length())


GRF_MODE = Lever(
    name="grf_mode", how="Triton option", settings=lambda written: ("default", "large", "auto"),
    cost=lambda value, written: _GRF_COST[value], tie_break_last=True,
    spelling=lambda value, written: f"grf_mode={value!r}" if value != "default" else None,
    ignored_by=lambda value, report: large_mode_ignored(report) if value == "large" else None,
)
THREADS_PER_WARP = Lever(
    name="threads_per_warp", how="Triton option", settings=lambda written: (32, 16),
    cost=lambda value, written: int(value != 32), spelling=lambda value, written: f"threads_per_warp={value}",
)
NUM_WARPS = Lever(
    name="num_warps", how="Triton option", settings=warp_counts, cost=_doublings,
    spelling=lambda value, written: f"num_warps={value}",
)
