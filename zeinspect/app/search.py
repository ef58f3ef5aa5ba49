"""The shape search as a use case: compile a scratch-using kernel in every shape on every target.

The grid, the cells and the choice are judge.shapes' (pure functions of reports); this fills
the grid with real builds, through the cache, and measures scratch traffic in loops where the
choice needs it.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import UsageError
from ..inputs import Input
from ..judge.shapes import Cell, CellState, Row, Search, cell_of
from ..levers import MODULE_LEVERS, Shape, module_rewrites
from ..levers.base import grid
from ..levers.sub_group import depends_on_sub_group
from ..model import WHOLE_MODULE, Status
from ..probes.aot import probe
from ..probes.explain import scratch_costs
from ..probes.modules import written
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from ..toolchain.targets import TargetPlan


def scratch_users(inp: Input, config: Settings, session: Session, plan: TargetPlan) -> tuple[list[str], list[str]]:
    """(kernels that use scratch or do not build on some planned target, the others), as written."""
    got = probe([inp], replace(config, shape=Shape()), session, plan=plan)
    names = list(dict.fromkeys(r.kernel for r in got.reports))
    users = [n for n in names if any(r.kernel == n and (r.uses_scratch or r.status is not Status.OK)
                                     for r in got.reports)]
    return users, [n for n in names if n not in users]


def search(inp: Input, kernel: str, base: Settings, session: Session, plan: TargetPlan, *,
           allow_subgroup_change: bool = False, progress: Progress | None = None, cost: bool = False) -> Search:
    """Compile every shape of `kernel` for every planned target (through the cache).  When no
    shape removes the scratch (or `cost`), each shape that builds everywhere with scratch gets
    its scratch traffic in loops measured, from IGC's ISA of its build (cached like it)."""
    module = written(inp, base, session, plan)
    if kernel not in module.shapes:
        raise UsageError(f"no kernel {kernel!r} in {inp.path}")
    as_written = module.shapes[kernel]
    result = Search(input=inp.path, kernel=kernel, written=as_written,
                    depends=depends_on_sub_group(module.spirv, kernel))
    shapes = grid(MODULE_LEVERS, Shape, as_written)
    for n, shape in enumerate(shapes):
        risky = any(lv.changes_semantics and getattr(shape, lv.name) != getattr(as_written, lv.name)
                    for lv in MODULE_LEVERS)
        row = Row(shape=shape, changes_semantics=risky and bool(result.depends) and not allow_subgroup_change,
                  as_written=shape == as_written, written=as_written)
        if row.changes_semantics:
            row.cells = [Cell(t.name, CellState.SKIPPED, None, "changes semantics") for t in plan.targets]
            result.rows.append(row)
            continue
        config = replace(base, shape=shape, kernels=(kernel,), rewrites=module_rewrites(kernel, shape, as_written))
        row.config = config
        try:
            got = probe([inp], config, session, plan=plan)
            by_target = {r.target: r for r in got.reports if r.kernel in (kernel, WHOLE_MODULE)}
            for c in got.compilers:
                if c.id not in result.compiler_ids:
                    result.compiler_ids.append(c.id)
            row.cells = [cell_of(t.name, by_target.get(t.name), shape) for t in plan.targets]
        except UsageError as exc:  # e.g. no spelling for this register-file mode
            row.cells = [Cell(t.name, CellState.NOT_AVAILABLE, None, str(exc)) for t in plan.targets]
        result.rows.append(row)
        if progress:
            progress(n + 1, len(shapes))
    if cost or not any(r.builds_everywhere and not r.scratch_targets for r in result.candidates):
        _measure_traffic(inp, kernel, result, session)
    return result


def _measure_traffic(inp: Input, kernel: str, result: Search, session: Session) -> None:
    """Each candidate that builds everywhere with scratch: its scratch cost per target."""
    for row in result.candidates:
        if not row.builds_everywhere or not row.scratch_targets:
            continue
        targets = [c.target for c in row.scratch_targets]
        costs, problems = scratch_costs([inp], row.config.with_targets(targets), session)
        result.notes += [f"{row.shape.describe()}: {p}" for p in problems]
        row.costs = {t: costs.get((inp.path, kernel, t)) for t in targets}
