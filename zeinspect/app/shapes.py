"""`shapes` and `fix`: every shape of each scratch-using kernel, and the decisions recorded.

`fix` also searches the Triton kernels of a gate configuration through zeinspect.triton
(app.plugins) and writes every decision, with the remedied modules, where it is asked to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import EXIT_FINDING, EXIT_OK, InputError, UsageError
from ..inputs import collect
from ..judge import fix as fix_mod
from ..judge.gate import GateConfig
from ..judge.shapes import Search, search
from ..probes.aot import AotConfig
from ..probes.executor import Executor
from ..probes.results import Progress
from . import plugins
from .session import open_session


def shapes(paths: list[str], config: AotConfig, *, kernels: tuple[str, ...] = (), allow_subgroup_change: bool = False,
           progress: Progress | None = None, backend: Callable[[], Executor] | None = None) -> list[Search]:
    """The shape table of every scratch-using kernel (or of `kernels`) of each input."""
    session = open_session(config, backend=backend)
    plan = session.plan()
    searches = []
    for inp in collect(list(paths)):
        if not inp.compilable:
            raise InputError(f"shapes need a source or SPIR-V module, not a {inp.kind}", path=inp.path)
        names = list(kernels) or fix_mod.scratch_users(inp, config, session, plan)[0]
        for name in names:
            searches.append(search(inp, name, config, session, plan, allow_subgroup_change=allow_subgroup_change,
                                   progress=progress))
    return searches


@dataclass
class FixOutcome:
    result: fix_mod.FixResult
    triton: dict = field(default_factory=dict)
    """`FILE.py:KERNEL` -> the decision record of a gate configuration's Triton kernel."""
    written: list[str] = field(default_factory=list)

    @property
    def differ(self) -> list[fix_mod.Decision]:
        """Decisions whose remedied kernel computes different results (never written silently)."""
        return [d for d in self.result.decisions if d.equivalence is not None and d.equivalence.differs]

    @property
    def exit_code(self) -> int:
        return EXIT_FINDING if self.differ else EXIT_OK


def fix(paths: tuple[str, ...], config: AotConfig, *, gate: GateConfig | None = None, write_to: str | None = None,
        allow_subgroup_change: bool = False, progress: Progress | None = None,
        backend: Callable[[], Executor] | None = None) -> FixOutcome:
    """Search a shape for every scratch-using kernel of `paths` (and of the gate's inputs and
    Triton kernels), verify each module in its chosen shapes, and write the decisions."""
    if gate is not None:
        paths = tuple(paths) + gate.inputs
    if not paths and not (gate and gate.triton):
        raise UsageError("nothing to fix: give PATHs or --config")
    session = open_session(config, backend=backend)
    out = FixOutcome(fix_mod.FixResult())
    plan = None
    if paths:
        plan = session.plan()
        out.result = fix_mod.fix(collect(list(paths)), config, session, plan,
                                 allow_subgroup_change=allow_subgroup_change, progress=progress)
    if gate is not None and gate.triton:
        triton = plugins.source("triton")
        out.triton = {entry.kernel.label: triton.fix(entry, config, session, progress) for entry in gate.triton}
    if write_to:
        out.written = fix_mod.write(out.result, write_to, plan, config if paths else None,
                                    session if paths else None, triton=out.triton)
    return out
