"""Triton's levers: the SLM staging pass, and the launch options register file, threads per
warp and warps per program.

Warps per program (`num_warps`) is a lever because a Triton program computes a whole block
whatever its number of warps: more warps spread the block's accumulators over more lanes,
so each lane holds fewer (seed 000's 64x128 f32 accumulator tile is 128 values per lane at
4 warps of 16 and 32 at 16 warps).  Only counts at or above the written one are tried (fewer
warps can only add registers per lane), up to 32 (a work-group of 32 x 32 lanes, the largest
every target accepts).  Each doubling counts as one departure when shapes tie.

A launch-option lever sets the field of the same name of a TritonKernel request; the
staging lever runs triton.build.staging between Triton's TTGIR and its lowering.
"""

from __future__ import annotations

from typing import Any

from ...levers.base import CliOption, How, Lever, LeverRegistry, ShapeBase
from ...levers.register_file import large_mode_ignored
from ...model import GrfMode

MAX_NUM_WARPS = 32
_GRF_COST = {GrfMode.DEFAULT: 0, GrfMode.SMALL: 0, GrfMode.AUTO: 1, GrfMode.LARGE: 2}


def warp_counts(written: int) -> tuple[int, ...]:
    """The written count, then each doubling up to MAX_NUM_WARPS."""
    counts = [written]
    while counts[-1] * 2 <= MAX_NUM_WARPS:
        counts.append(counts[-1] * 2)
    return tuple(counts)


def _doublings(value: int, written: int | None) -> int:
    return abs(max(value, 1).bit_length() - max(written or 4, 1).bit_length())


def _grf(value: Any) -> GrfMode:
    """Triton's word (`large`) or the mode itself."""
    return value if isinstance(value, GrfMode) else GrfMode.from_triton(str(value))


def _whole(value: Any) -> int:
    """A whole number, or its text as a command line gives it."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected a whole number, not {value!r}")
    return value


STAGE = Lever(
    name="stage", how=How.TTGIR_PASS, default=False, settings=lambda written: (False, True),
    cost=lambda value, written: int(bool(value)), describe=lambda value: "staged" if value else "not staged",
    spelling=lambda value, written: "the SLM staging pass on the TTGIR (zeinspect.triton.build.staging)" if value else None,
    parse=bool, cli=CliOption("--stage", (), "Apply the SLM staging pass to large FMA dots.", switch=True),
)
GRF_MODE = Lever(
    name="grf_mode", how=How.TRITON_OPTION, default=GrfMode.DEFAULT,
    settings=lambda written: (GrfMode.DEFAULT, GrfMode.LARGE, GrfMode.AUTO),
    cost=lambda value, written: _GRF_COST[value], tie_break_last=True, describe=lambda value: value.describe(),
    spelling=lambda value, written: f"grf_mode={value.triton!r}" if value != GrfMode.DEFAULT else None,
    ignored_by=lambda value, report: large_mode_ignored(report) if value == GrfMode.LARGE else None,
    parse=_grf, dump=lambda value: value.triton,
    cli=CliOption("--grf-mode", tuple(mode.triton for mode in GrfMode),
                  "Triton-XPU's register file mode (default: as the module launches the kernel, else default)."),
)
THREADS_PER_WARP = Lever(
    name="threads_per_warp", how=How.TRITON_OPTION, default=32, settings=lambda written: (32, 16),
    cost=lambda value, written: int(value != 32), describe=lambda value: f"{value} threads per warp",
    spelling=lambda value, written: f"threads_per_warp={value}", parse=_whole,
    cli=CliOption("--threads-per-warp", ("16", "32"),
                  "Threads per warp (default: as the module launches the kernel, else 32)."),
)
NUM_WARPS = Lever(
    name="num_warps", how=How.TRITON_OPTION, default=4, settings=warp_counts, cost=_doublings,
    describe=lambda value: f"{value} warps", spelling=lambda value, written: f"num_warps={value}", parse=_whole,
    cli=CliOption("--num-warps", tuple(str(1 << n) for n in range(7)),
                  "Warps per program (default: as the module launches the kernel, else 4)."),
)

BUILT_IN = (STAGE, GRF_MODE, THREADS_PER_WARP, NUM_WARPS)
"""The levers zeinspect ships; one registered later (tests/integration/triton/test_new_triton_lever.py)
is searched, recorded, spelt, read back from a gate and passed to Triton's options the same way."""
TRITON_LEVERS = LeverRegistry()
for _lever in BUILT_IN:
    TRITON_LEVERS.register(_lever)


def added_levers() -> tuple[Lever, ...]:
    """The Triton levers registered beside the built-in ones."""
    return tuple(lv for lv in TRITON_LEVERS if lv.name not in {b.name for b in BUILT_IN})


class TritonShape(ShapeBase):
    """How a Triton kernel is built: a value for each of TRITON_LEVERS."""

    levers = TRITON_LEVERS
    __slots__ = ()

    def describe(self) -> str:
        others = "".join(f", {lv.describe(getattr(self, lv.name))}" for lv in added_levers())
        return (f"{STAGE.describe(self.stage)}, {GRF_MODE.describe(self.grf_mode)}, {self.num_warps} warps of "
                f"{self.threads_per_warp} threads{others}")

    def launch(self) -> dict[str, Any]:
        """The TritonKernel fields its launch-option levers set (Triton's own spelling)."""
        return {lv.name: lv.dump(getattr(self, lv.name)) for lv in TRITON_LEVERS.of(How.TRITON_OPTION)}
