"""The shape search's judgement: the grid of shapes by targets, each cell's state, and the choice.

The compiles that fill the grid are app.search's; this module is pure functions of reports.

Shapes are (sub-group size: as written / compiler's choice / 8 / 16 / 32) x (register
file: default / 256 / auto).  Per target a shape either builds (with or without scratch),
fails to build, is not available (the compiler refuses the size: Xe2 has no SIMD8; the
compiler has no spelling for the mode) or is ignored (asked for 256 registers, got 128:
Xe-LP has no large register file).  A kernel that depends on its sub-group size is never
given another one unless asked: those shapes are marked "changes semantics" and skipped.

Choosing, in this order (docs/guides/why-it-spills.md, "How zeinspect chooses a shape"):
  1. builds on every target (not available counts as not building);
  2. when no shape removes the scratch: least scratch traffic in loops (bytes moved per
     iteration of the innermost loop with any, summed over targets; from IGC's ISA of each
     shape's build, inputs.isa.ScratchCost): a spill paid once in a prologue costs nothing
     next to one paid on every iteration;
  3. fewest targets with scratch;
  4. least total scratch (bytes per thread, summed over targets);
  5. fewest constraints: the compiler's choice before a fixed sub-group size, the default
     register file before automatic before 256.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

from ..levers import MODULE_LEVERS
from ..levers.base import LeverRegistry, ShapeBase, ignored, rank, unsupported
from ..model import KernelReport, Remarks, Status


class CellState(enum.StrEnum):
    """What one shape did on one target."""

    CLEAN = "clean"
    SCRATCH = "scratch"
    FAILED = "failed"
    NOT_AVAILABLE = "n/a"
    """The compiler refused the setting (Xe2 has no sub-group size 8), or has no spelling for it."""
    IGNORED = "ignored"
    """Built without honouring the setting (Xe-LP has no 256-register mode)."""
    SKIPPED = "skipped"
    """Not tried: it could change what the kernel computes."""
    NOT_APPLICABLE = "not applicable"
    """The image has a device requirement the target does not meet (the runtime never selects it
    there): no shape is judged on it."""


@dataclass(frozen=True)
class Cell:
    """One shape on one target."""

    target: str
    state: CellState
    report: KernelReport | None = None
    why: str = ""

    @property
    def scratch(self) -> int:
        if self.report is None:
            return 0
        return self.report.shown_scratch_bytes


@dataclass
class Row:
    shape: Any
    """A ShapeBase of `levers`."""
    cells: list[Cell] = field(default_factory=list)
    changes_semantics: bool = False
    as_written: bool = False
    costs: dict[str, dict | None] = field(default_factory=dict)
    """Target -> the ScratchCost JSON of this shape's build where it uses scratch (None: the
    dumping compile gave none); measured when no shape removes the scratch, or when asked."""
    config: Any = field(default=None, repr=False)
    """The settings this shape was built with (its levers and rewrites)."""

    @property
    def builds_everywhere(self) -> bool:
        return all(c.state in (CellState.CLEAN, CellState.SCRATCH, CellState.IGNORED, CellState.NOT_APPLICABLE)
                   for c in self.cells)

    @property
    def scratch_targets(self) -> list[Cell]:
        return [c for c in self.cells if c.state is CellState.SCRATCH or (c.state is CellState.IGNORED and c.scratch)]

    @property
    def total_scratch(self) -> int:
        return sum(c.scratch for c in self.cells if c.state in (CellState.SCRATCH, CellState.IGNORED))

    levers: LeverRegistry = field(default=MODULE_LEVERS, repr=False)
    written: object = None
    """The shape the kernel is written in (what each lever's cost is measured from)."""

    @property
    def constraints(self) -> tuple[int, int]:
        return rank(self.levers, self.shape, self.written)

    @property
    def threads_per_eu(self) -> int:
        """Hardware threads per EU, summed over the targets (zeinspect.occupancy): a register file
        that removes a spill but halves the threads costs occupancy."""
        from ..occupancy import of

        return sum(o.threads_per_eu for c in self.cells if c.report is not None and (o := of(c.report)) is not None)

    @property
    def loop_traffic(self) -> int | None:
        """Scratch bytes moved per iteration of the innermost loop with any, summed over the
        targets with scratch; None where not measured (or not on every such target)."""
        if not self.costs or any(c is None for c in self.costs.values()):
            return None
        return sum(c["per_iteration_bytes"] for c in self.costs.values() if c is not None)

    def key(self) -> tuple:
        # Among shapes that clear the scratch alike, the one that keeps more threads per EU first.
        occupancy = -self.threads_per_eu if not self.scratch_targets else 0
        # A shape whose traffic was to be measured and was not ranks after those measured.
        traffic = self.loop_traffic
        loops = traffic if traffic is not None else (math.inf if self.costs else 0)
        return (not self.builds_everywhere, loops, len(self.scratch_targets), self.total_scratch, occupancy,
                self.constraints)


@dataclass
class Search(Remarks):
    input: str
    kernel: str
    written: ShapeBase
    """The shape the kernel is written in (each lever's written value)."""
    depends: list[str]
    rows: list[Row] = field(default_factory=list)
    compiler_ids: list[str] = field(default_factory=list)

    @property
    def written_sub_group(self) -> int | None:
        """The required sub-group size as written (None: none)."""
        return getattr(self.written, "sub_group", None) or None

    @property
    def candidates(self) -> list[Row]:
        return sorted((r for r in self.rows if not r.changes_semantics), key=Row.key)

    @property
    def winner(self) -> Row | None:
        c = self.candidates
        return c[0] if c and c[0].builds_everywhere else None

    @property
    def runner_up(self) -> Row | None:
        c = self.candidates
        return c[1] if len(c) > 1 else None

    @property
    def cleans(self) -> bool:
        w = self.winner
        return w is not None and not w.scratch_targets

    def why(self) -> str:
        w = self.winner
        if w is None:
            return "no shape builds on every target"
        parts = [f"{w.shape.describe()} builds on every target"]
        if not w.scratch_targets:
            parts.append("and uses no scratch memory anywhere")
        elif w.loop_traffic is not None:
            parts.append(f"with scratch on {len(w.scratch_targets)} target(s), {w.total_scratch} bytes in all, and "
                         f"{_traffic(w.loop_traffic)}: no shape moves less scratch in loops")
        else:
            parts.append(f"with scratch on {len(w.scratch_targets)} target(s), {w.total_scratch} bytes in all, "
                         "the fewest of any shape")
        r = self.runner_up
        if r is not None:
            if not r.builds_everywhere:
                cost = ("does not build on " + ", ".join(
                    c.target for c in r.cells if c.state in (CellState.FAILED, CellState.NOT_AVAILABLE)))
            elif r.loop_traffic != w.loop_traffic and w.scratch_targets:
                cost = (f"moves {_traffic(r.loop_traffic)}, with {r.total_scratch} bytes of scratch in all"
                        if r.loop_traffic is not None else "could not be measured for its scratch traffic in loops")
            elif len(r.scratch_targets) != len(w.scratch_targets):
                cost = f"leaves scratch on {len(r.scratch_targets)} target(s)"
            elif r.total_scratch != w.total_scratch:
                cost = f"uses {r.total_scratch} bytes of scratch in all"
            elif r.threads_per_eu != w.threads_per_eu and not w.scratch_targets:
                cost = (f"runs fewer hardware threads per EU ({r.threads_per_eu} against {w.threads_per_eu}, summed "
                        "over the targets)")
            else:
                cost = "is as good but constrains the kernel more"
            parts.append(f"; the runner-up, {r.shape.describe()}, {cost}")
        return " ".join(parts[:2]) + "".join(parts[2:])


def _traffic(per_iteration: int) -> str:
    return (f"{per_iteration} bytes of scratch per loop iteration (innermost loops, summed over targets)"
            if per_iteration else "no scratch inside loops")


def cell_of(target: str, report: KernelReport | None, shape: Any, levers: LeverRegistry = MODULE_LEVERS) -> Cell:
    if report is None:
        return Cell(target, CellState.FAILED, None, "no report")
    if report.status is Status.NOT_APPLICABLE:
        return Cell(target, CellState.NOT_APPLICABLE, report, report.reason or "not applicable")
    if report.status is not Status.OK:
        refused = unsupported(levers, shape, report)
        if refused is not None:
            return Cell(target, CellState.NOT_AVAILABLE, report, refused)
        return Cell(target, CellState.FAILED, report, report.reason or report.status.value)
    why = ignored(levers, shape, report)
    if why is not None:
        return Cell(target, CellState.IGNORED, report, why)
    return Cell(target, CellState.SCRATCH if report.uses_scratch else CellState.CLEAN, report)
