"""The ledger of a run's collection (judge.coverage), with the request that shaped it."""

from __future__ import annotations

from ..judge.coverage import Accepts, Coverage, account
from ..probes.results import Collection
from ..settings import Settings


def ledger_of(got: Collection, config: Settings, accepts: Accepts | None = None) -> Coverage:
    """Every kernel the inputs declare, against the reports: the targets built for (the plan),
    native images narrowed to them when targets were named, the `--kernel` filter."""
    targets = [(t.name, t.ip) for t in got.plan.targets] if got.plan is not None else None
    return account(got.parts, got.reports, targets=targets, narrowed=config.targets_given, kernels=config.kernels,
                   accepts=accepts, stopped=bool(got.stopped))
