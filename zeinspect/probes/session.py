"""What one command compiles with: its compilers, its build cache and its executor.

A `Session` is made once per command by the use-case layer (`app.session.open`), which
also chooses the executor backend (this machine's pool or a Dask cluster) and injects it
here as a factory: no probe opens a cache, resolves compilers or picks an executor of its
own.  Probes take a session plus a per-call `Settings` (what to compile for: targets,
options, shape), since one command compiles in many shapes and target groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..cache import BuildCache
from ..model import Compiler
from ..settings import Settings
from ..toolchain.targets import TargetPlan, plan_targets
from .executor import CachedExecutor, Executor


@dataclass
class Session:
    """The compilers, cache and executor of one command (see the module docstring)."""

    config: Settings
    cache: BuildCache
    backend: Callable[[], Executor]
    """Makes the executor a probe run sends its uncached jobs to (local pool, Dask, a fake)."""
    resolve: Callable[[], list[Compiler]]
    """Finds the compilers, once, when a probe first needs one (reading binaries needs none)."""
    _compilers: list[Compiler] | None = None
    _plans: dict[tuple[str, ...], TargetPlan] = field(default_factory=dict)

    @property
    def compilers(self) -> list[Compiler]:
        if self._compilers is None:
            self._compilers = self.resolve()
        return self._compilers

    def plan(self, targets: tuple[str, ...] | None = None) -> TargetPlan:
        """The targets planned on this session's compilers (the command's own by default)."""
        key = tuple(targets or self.config.targets)
        if key not in self._plans:
            self._plans[key] = plan_targets(key, self.compilers)
        return self._plans[key]

    def executor(self) -> CachedExecutor:
        """A fresh executor for one probe run (its counters are that run's), behind the cache."""
        return CachedExecutor(self.backend(), self.cache)

    def with_compilers(self, compilers: list[Compiler]) -> Session:
        """The same cache and backend with these compilers only (e.g. the driver's own build)."""
        return Session(config=self.config, cache=self.cache, backend=self.backend, resolve=lambda: list(compilers),
                       _compilers=list(compilers))
