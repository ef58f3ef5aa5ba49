"""`shapes` and `fix`: every shape of each scratch-using kernel, and the decisions recorded.

`fix` also searches the Triton kernels of a gate configuration through zeinspect.triton
(app.plugins) and writes every decision, with the remedied modules, where it is asked to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import InputError, UsageError
from ..inputs import collect
from ..judge import fix as fix_mod
from ..judge.gate import GateConfig
from ..judge.shapes import Search, search
from ..probes.executor import Executor
from ..probes.results import Progress
from ..settings import Settings
from . import plugins
from .gate import gate_entries
from .outcome import Outcome
from .session import open_session


def shapes(paths: list[str], config: Settings, *, kernels: tuple[str, ...] = (), allow_subgroup_change: bool = False,
           progress: Progress | None = None, backend: Callable[[], Executor] | None = None,
           cost: bool = False) -> list[Search]:
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
                                   progress=progress, cost=cost))
    return searches


@dataclass
class FixOutcome:
    result: fix_mod.FixResult
    sources: dict[str, dict] = field(default_factory=dict)
    """Per gate source (Triton), each entry's label -> its decision record."""
    written: list[str] = field(default_factory=list)

    @property
    def differ(self) -> list[fix_mod.Decision]:
        """Decisions whose remedied kernel computes different results (never written silently)."""
        return [d for d in self.result.decisions if d.equivalence is not None and d.equivalence.differs]

    @property
    def exit_code(self) -> int:
        return Outcome.of(len(self.differ)).exit_code


def fix(paths: tuple[str, ...], config: Settings, *, gate: GateConfig | None = None, write_to: str | None = None,
        allow_subgroup_change: bool = False, progress: Progress | None = None,
        backend: Callable[[], Executor] | None = None) -> FixOutcome:
    """Search a shape for every scratch-using kernel of `paths` (and of the gate's inputs and
    Triton kernels), verify each module in its chosen shapes, and write the decisions."""
    entries = gate_entries(gate) if gate is not None else {}
    if gate is not None:
        paths = tuple(paths) + gate.inputs
    if not paths and not any(entries.values()):
        raise UsageError("nothing to fix: give PATHs or --config")
    session = open_session(config, backend=backend)
    out = FixOutcome(fix_mod.FixResult())
    plan = None
    if paths:
        plan = session.plan()
        out.result = fix_mod.fix(collect(list(paths)), config, session, plan,
                                 allow_subgroup_change=allow_subgroup_change, progress=progress)
    for name, listed in entries.items():
        source = plugins.source(name)
        out.sources[name] = {entry.label: source.fix(entry, config, session, progress) for entry in listed}
    if write_to:
        out.written = fix_mod.write(out.result, write_to, plan, config if paths else None,
                                    session if paths else None, sections=out.sources)
    return out
