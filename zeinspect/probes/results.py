"""What every probe hands back: reports plus what it took to make them.

One type for the AOT probe, the binary and log readers and their combinations (a gate run,
a Triton kernel over target groups, a module in its recorded shapes), so merging is one
method: `Collection.extend`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from ..ledger import Part
from ..model import Compiler, KernelReport, Remarks
from ..toolchain.targets import TargetPlan

Progress = Callable[[int, int], None]
"""A progress callback: (done, total)."""


@dataclass
class CompileStats:
    """The executor's counters: part of its interface, printed in every JSON document."""

    compiles: int = 0
    cache_hits: int = 0
    front_ends: int = 0
    """OpenCL C front-end runs shared by several targets (toolchain.front_end)."""
    shared: int = 0
    """Compiles answered by an identical compile of the same run (the same image twice)."""
    multi_batches: int = 0
    """`ocloc multi` processes that built several modules (probes.executor.compile_multi)."""
    remote_hits: int = 0
    """Entries the shared build cache answered (zeinspect.shared_cache)."""
    remote_misses: int = 0
    remote_errors: int = 0
    """Failed requests to the shared cache, and damaged or foreign entries it held."""
    remote_bytes: int = 0
    """Bytes read from and written to the shared cache."""

    def __add__(self, other: CompileStats) -> CompileStats:
        return CompileStats(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Collection(Remarks):
    reports: list[KernelReport] = field(default_factory=list)
    compilers: list[Compiler] = field(default_factory=list)
    stats: CompileStats = field(default_factory=CompileStats)
    plan: TargetPlan | None = None
    internal_kernels: set[str] = field(default_factory=set)
    """Inputs whose zebins held IGC-internal kernels (not user kernels, not reported)."""
    parts: list[Part] = field(default_factory=list)
    """What each part of the inputs declares (the ledger: judge.coverage accounts for it)."""
    stopped: str = ""
    """Where a run stopped by Ctrl-C or SIGTERM stopped ("" when it ran to its end): what was done
    before is kept."""

    def extend(self, other: Collection, reports: list[KernelReport] | None = None) -> None:
        """Add `other` (with `reports` in place of its own, when given: relabelled, filtered)."""
        self.reports += other.reports if reports is None else reports
        self.compilers += [c for c in other.compilers if c not in self.compilers]
        self.notes += other.notes
        self.incidents += other.incidents
        self.stats = self.stats + other.stats
        self.internal_kernels |= other.internal_kernels
        self.parts += other.parts
        self.stopped = self.stopped or other.stopped
        self.plan = self.plan or other.plan


STOPPED_COST = "--cost: not measured: the run was stopped (each cost is a dumping compile of its own)"
"""The note of a stopped run asked for costs: it ends at once instead (app, triton.app)."""
