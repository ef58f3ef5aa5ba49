"""`shapes`: every shape of each scratch-using kernel, searched module by module (app.search:
one compile of the module per shape) and tabled."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..inputs import collect
from ..judge.shapes import Search
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from .outcome import Outcome
from .search import Scope, search_module
from .session import open_session


@dataclass(frozen=True)
class Shapes:
    searches: list[Search]
    outcome: Outcome = Outcome(0)
    """The table is all a shape search says: it finds no fault of its own."""


def shapes(paths: list[str], config: Settings, *, kernels: tuple[str, ...] = (), allow_subgroup_change: bool = False,
           progress: Progress | None = None, session: Session | None = None,
           cost: bool = False) -> Shapes:
    """The shape table of every scratch-using kernel (or of `kernels`) of each input."""
    session = session or open_session(config)
    plan = session.plan()
    searches = []
    for inp in collect(list(paths)):
        if not inp.compilable:
            raise InputError(f"shapes need a source or SPIR-V module, not a {inp.kind}", path=inp.path)
        scope = Scope(allow_subgroup_change=allow_subgroup_change, kernels=kernels, measure=True, cost=cost,
                      dump_first=True)
        searches += search_module(inp, config, session, plan, scope=scope, progress=progress).searches
    return Shapes(searches)
