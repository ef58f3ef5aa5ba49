"""The shape search as a use case: compile a scratch-using kernel in every shape on every target.

The grid, the cells and the choice are judge.shapes' (pure functions of reports); this fills
the grid with real builds, through the cache, and measures scratch traffic in loops where the
choice needs it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .. import names
from ..errors import UsageError
from ..inputs import Input
from ..inputs.kinds import InputKind
from ..judge.shapes import Cell, CellState, Row, Search, cell_of
from ..levers import MODULE_LEVERS, How, Shape, module_rewrites
from ..levers.sub_group import sub_group_dependence
from ..model import WHOLE_MODULE, GrfMode, KernelReport, Remarks, Status
from ..probes.aot import probe, probe_each
from ..probes.explain import dump_builds, scratch_costs_each
from ..probes.modules import written
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from ..toolchain.targets import TargetPlan

# -- a whole module at once: what a library's search costs -------------------------------------

@dataclass
class ModuleShape:
    """One shape of a whole module: the register file for every kernel (a module-wide option),
    the sub-group size for every scratch user it applies to (one SPIR-V rewrite)."""

    shape: Shape
    targets: tuple[str, ...] = ()
    """The planned targets it is compiled for (those it can change)."""
    why_not: dict[str, str] = field(default_factory=dict)
    """Target -> why the shape is not tried there (every target: the shape is not tried)."""
    reports: dict[tuple[str, str], KernelReport] = field(default_factory=dict)
    """(kernel, target) -> the report of its build."""
    rewritten: frozenset[str] = frozenset()
    """The kernels whose sub-group size this shape rewrites."""
    same_as: dict[str, Shape] = field(default_factory=dict)
    """Target -> the shape whose build this one is there (a register file the target lacks
    builds as the default one: its cells are that build's, marked ignored)."""


@dataclass
class ModuleSearch(Remarks):
    """Every module shape of one image on the planned targets, each one compile of the module
    (for the targets it can change), every scratch user's row read from those builds."""

    input: str
    searches: list[Search] = field(default_factory=list)
    """One per kernel that uses scratch (or does not build) somewhere as written."""
    clean: list[str] = field(default_factory=list)
    shapes: list[ModuleShape] = field(default_factory=list)
    compiles: int = 0
    """Module builds made for the search (shape x target group), the as-written one included."""
    as_written: dict[tuple[str, str], KernelReport] = field(default_factory=dict)
    compiler_ids: list[str] = field(default_factory=list)
    spirv: bytes = field(default=b"", repr=False)
    """The module as its builds were made from (what its kernels' private arrays and calls are read from)."""

    @property
    def not_tried(self) -> list[tuple[Shape, str]]:
        """Shapes compiled for no target, and why."""
        return [(m.shape, "; ".join(sorted(set(m.why_not.values())))) for m in self.shapes if not m.targets]


def module_shapes(written: dict[str, Shape], users: list[str], depends: dict[str, list[str]], plan: TargetPlan,
                  allow_subgroup_change: bool) -> list[ModuleShape]:
    """The module shapes worth a compile, and for each target where one cannot change a kernel,
    why (a sub-group size a target does not offer, a register file it lacks, a size every user
    already requires, a size only kernels whose code depends on it could take)."""
    from ..hardware import has_large_register_file, sub_group_sizes

    out = []
    # Each lever's settings, the sub-group size also "as written" (None: each kernel keeps its own).
    settings = [[None, *lv.settings(None)] if lv.how is How.SPIRV_REWRITE else list(lv.settings(None))
                for lv in MODULE_LEVERS]
    for values in itertools.product(*settings):
        shape = Shape(**{lv.name: v for lv, v in zip(MODULE_LEVERS, values)})
        rewritten = frozenset(k for k in users if shape.sub_group is not None
                              and shape.sub_group != (written[k].sub_group or 0)
                              and (allow_subgroup_change or not depends[k]))
        entry = ModuleShape(shape, rewritten=rewritten)
        if shape.sub_group is not None and not rewritten:
            why = (f"changes no scratch user: every one requires sub-group size {shape.sub_group} already, or "
                   "its code depends on its sub-group size" if shape.sub_group else
                   "equals the module as written: no scratch user requires a sub-group size it could leave")
            entry.why_not = {t.name: why for t in plan.targets}
        else:
            for t in plan.targets:
                if shape.sub_group and shape.sub_group not in sub_group_sizes(t.ip):
                    entry.why_not[t.name] = f"{t.name} has no sub-group size {shape.sub_group}"
                elif shape.grf in (GrfMode.LARGE, GrfMode.AUTO) and not has_large_register_file(t.ip):
                    entry.why_not[t.name] = f"{t.name} has no large register file: built with default registers"
                    entry.same_as[t.name] = shape.replace(grf=GrfMode.DEFAULT)
        entry.targets = tuple(t.name for t in plan.targets if t.name not in entry.why_not)
        out.append(entry)
    return out


@dataclass(frozen=True)
class Scope:
    """What a module's shape search covers beside its shapes."""

    allow_subgroup_change: bool = False
    """Sub-group sizes other than the kernels' own (a change of the kernel's semantics to review)."""
    kernels: tuple[str, ...] = ()
    """Search these (used or not) instead of the scratch users."""
    measure: bool = False
    """Where no shape removes a kernel's scratch, each shape's scratch traffic in loops, measured."""
    cost: bool = False
    """Every scratch user's traffic measured, cleaned or not."""
    dump_first: bool = False
    """The module shapes of a SPIR-V input built as dumping compiles from the start, when the
    search will most likely read their ISA (`shapes`: the traffic of every user no shape
    cleans, on a library image most of them); `cost` implies it.  A module's `fix` does not:
    a shape usually cleans its few kernels, and a dump no one reads costs up to 1.45x."""


def search_module(inp: Input, base: Settings, session: Session, plan: TargetPlan, *, scope: Scope = Scope(),
                  progress: Progress | None = None) -> ModuleSearch:
    """Every module shape of `inp`, each compiled once for the targets it can change (through
    the cache, shapes in parallel as the audit's builds are), and each scratch user's shape
    table read from those builds: the cost of a library's search is about (shapes x targets)
    compiles, not (shapes x kernels x targets).  `scope.kernels`: search these (used or not)
    instead of the scratch users.  `scope.measure`: where no shape removes a kernel's scratch (or
    `scope.cost`), each shape's scratch traffic in loops is measured, from IGC's ISA of its build (dumping
    compiles per kernel: what a module's own fix affords, a library's does not)."""
    out = ModuleSearch(input=inp.path)
    wanted = scope.kernels
    module = written(inp, base, session, plan)
    out.spirv = module.spirv
    plain = probe([inp], replace(base, shape=Shape(), rewrites=()), session, plan=plan)
    out.compiles += 1
    _keep_compilers(out, plain)
    out.as_written = {(r.kernel, r.target): r for r in plain.reports}
    built = list(dict.fromkeys(r.kernel for r in plain.reports if r.kernel != WHOLE_MODULE))
    users = [k for k in built if any(r.kernel == k and (r.uses_scratch or r.status is not Status.OK)
                                     and r.applicable for r in plain.reports)]
    if wanted:
        users = [k for k in module.shapes if any(names.matches(p, k) for p in wanted)]
        if not users:
            raise UsageError(f"no kernel {', '.join(wanted)} in {inp.path}")
    out.clean = [k for k in built if k not in users]
    users = [k for k in users if k in module.shapes]
    if not users:
        return out
    depends = sub_group_dependence(module.spirv, users)
    shapes = module_shapes(module.shapes, users, depends, plan, scope.allow_subgroup_change)
    out.shapes = shapes
    todo = [m for m in shapes if m.targets and m.shape != Shape()]
    for m in shapes:
        if m.shape == Shape():  # every kernel as written, default registers: the audit's own build
            m.reports = dict(out.as_written)
    done = 0

    def config_of(m: ModuleShape) -> Settings:
        rewrites = tuple(rw for k in sorted(m.rewritten) for rw in module_rewrites(k, m.shape, module.shapes[k]))
        # The build-option levers' values build the module; the rewrite levers' are its rewrites.
        options = Shape(**{lv.name: getattr(m.shape, lv.name) for lv in MODULE_LEVERS.of(How.BUILD_OPTION)})
        return replace(base, shape=options, rewrites=rewrites, kernels=()).with_targets(m.targets)

    if (scope.dump_first or scope.cost) and inp.kind == InputKind.SPIRV:
        # A search that reads the ISA of its builds (`shapes`, `--cost`) makes each SPIR-V
        # module shape once, as the dumping compile, and the plain build is answered from it
        # (probes.dumps), instead of a plain compile and a dumping one.  A shape whose ISA is
        # not read after all (it cleans every user) cost the dump's extra, 1.05-1.45x a plain
        # compile, against a second compile saved on every other (issue 62).  The as-written
        # build came first, plain: it finds whether there is anything to search, and where the
        # module applies (a target whose device lacks what it requires gets no dump either).
        applies = {r.target for r in plain.reports if r.applicable}
        dump_builds([([inp], config_of(m).with_targets(where)) for m in todo
                     if (where := [t for t in m.targets if t in applies])], session)
    # The module shapes build in parallel (probes.aot.probe_each), as the audit's builds do.
    for m, got in zip(todo, probe_each(inp, [config_of(m) for m in todo], session)):
        done += 1
        out.compiles += 1
        if isinstance(got, str):
            m.why_not.update({t: got for t in m.targets})
            m.targets = ()
        else:
            _keep_compilers(out, got)
            m.reports = {(r.kernel, r.target): r for r in got.reports}
        if progress:
            progress(done, len(todo))
    read_from: dict[int, ModuleShape] = {}
    out.searches = [_kernel_search(out, k, module.shapes[k], depends[k], plan, base, read_from) for k in users]
    measured = [s for s in out.searches if scope.cost or (scope.measure and not any(
        r.builds_everywhere and not r.scratch_targets for r in s.candidates))]
    _measure_module_traffic(inp, measured, read_from, config_of, session)
    return out


def _measure_module_traffic(inp: Input, searches: list[Search], read_from: dict[int, ModuleShape],
                            config_of: Callable[[ModuleShape], Settings], session: Session) -> None:
    """The scratch traffic of every candidate of `searches` that builds everywhere with scratch,
    read from one dumping compile per module shape and target (the build its cells came from),
    every kernel's from the same dump: a library image's 54 scratch users cost one dump per
    shape, not 54."""
    wanted: dict[int, tuple[ModuleShape, set[str], set[str]]] = {}
    rows: list[tuple[Search, Row, ModuleShape]] = []
    for search in searches:
        for row in search.candidates:
            if not row.builds_everywhere or not row.scratch_targets:
                continue
            m = read_from[id(row)]
            _, kernels, targets = wanted.setdefault(id(m), (m, set(), set()))
            kernels.add(search.kernel)
            targets.update(c.target for c in row.scratch_targets)
            rows.append((search, row, m))
    asked = [([inp], replace(config_of(m), kernels=tuple(sorted(kernels))).with_targets(sorted(targets)))
             for m, kernels, targets in wanted.values()]
    # The module shapes' dumping compiles run at once, `jobs` at a time (probes.explain).
    got = dict(zip(wanted, scratch_costs_each(asked, session)))
    found = {key: costs for key, (costs, _) in got.items()}
    said = {key: problems for key, (_, problems) in got.items()}
    for search, row, m in rows:
        search.notes += [f"{row.shape.describe()}: {p}" for p in said[id(m)]]
        row.costs = {c.target: found[id(m)].get((inp.path, search.kernel, c.target)) for c in row.scratch_targets}


def _keep_compilers(out: ModuleSearch, got: Any) -> None:
    for c in got.compilers:
        if c.id not in out.compiler_ids:
            out.compiler_ids.append(c.id)


def _kernel_search(out: ModuleSearch, kernel: str, written_shape: Shape, depends: list[str], plan: TargetPlan,
                   base: Settings, read_from: dict[int, ModuleShape]) -> Search:
    """One kernel's shape table, its rows read from the module's builds: a module shape that
    leaves this kernel's sub-group size as written is the kernel's shape with it as written.
    `read_from`: filled with id(row) -> the module shape whose build the row's cells are."""
    result = Search(input=out.input, kernel=kernel, written=written_shape, depends=depends,
                    compiler_ids=list(out.compiler_ids))
    shapes = out.shapes
    seen: set = set()
    by_shape = {m.shape: m for m in shapes}

    def cell(m: ModuleShape, target: str, shape: Shape) -> Cell:
        if target in m.targets or m.shape == Shape():
            return cell_of(target, m.reports.get((kernel, target)) or m.reports.get((WHOLE_MODULE, target)), shape)
        other = by_shape.get(m.same_as.get(target))  # type: ignore[arg-type]
        if other is not None and (target in other.targets or other.shape == Shape()):
            found = cell_of(target, other.reports.get((kernel, target)), shape)
            if found.state in (CellState.CLEAN, CellState.SCRATCH):
                return Cell(target, CellState.IGNORED, found.report, m.why_not[target])
            return found
        return Cell(target, CellState.NOT_AVAILABLE, None, m.why_not.get(target, "not tried"))

    for m in shapes:
        changes = kernel in m.rewritten
        risky = (m.shape.sub_group is not None and m.shape.sub_group != (written_shape.sub_group or 0)
                 and bool(depends) and not changes)
        shape = m.shape if changes or risky else m.shape.replace(sub_group=written_shape.sub_group)
        if shape in seen:
            continue
        seen.add(shape)
        row = Row(shape=shape, changes_semantics=risky, as_written=shape == written_shape, written=written_shape)
        row.config = replace(base, shape=shape, kernels=(kernel,), rewrites=module_rewrites(kernel, shape, written_shape))
        read_from[id(row)] = m
        if risky:
            row.cells = [Cell(t.name, CellState.SKIPPED, None, "changes semantics") for t in plan.targets]
        else:
            row.cells = [cell(m, t.name, shape) for t in plan.targets]
        result.rows.append(row)
    return result
