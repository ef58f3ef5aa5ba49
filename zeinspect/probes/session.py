"""What one command compiles with: its compilers, its build cache and its executor.

A `Session` is made once per command by the use-case layer (`app.session.open`), which
also chooses the executor backend (this machine's pool or a Dask cluster) and injects it
here as a factory: no probe opens a cache, resolves compilers or picks an executor of its
own.  Probes take a session plus a per-call `AotConfig` (what to compile for: targets,
options, shape), since one command compiles in many shapes and target groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..cache import BuildCache
from ..levers import DEFAULT_SHAPE, Shape
from ..model import Compiler
from ..toolchain.targets import TargetPlan, plan_targets
from .executor import CachedExecutor, Executor


@dataclass(frozen=True)
class AotConfig:
    """What to compile for; probes take this record, never CLI options."""

    targets: tuple[str, ...] = ("default",)
    compiler: str | None = None
    options: str = ""
    shape: Shape = DEFAULT_SHAPE
    kernels: tuple[str, ...] = ()
    """Only report kernels whose name matches one of these (exact or glob)."""
    jobs: int = 0
    """Parallel compiles; 0 = the number of cores."""
    use_cache: bool = True
    timeout: float | None = None
    per_module_options: dict = field(default_factory=dict, compare=False, hash=False)
    """input path -> extra options (from a gate configuration)."""
    scheduler: str | None = None
    """A Dask scheduler address: compile on its cluster instead of this machine."""
    cache_url: str | None = None
    """A build cache many machines share, behind the local one (zeinspect.shared_cache)."""
    cache_readonly: bool = False
    """Read the shared cache, never write it (untrusted pull-request runs)."""
    rewrites: tuple[tuple[str, str, Any], ...] | None = None
    """(kernel, lever, value) SPIR-V rewrites to apply; None: the shape's rewrite levers for
    every kernel that `kernels` selects."""

    def options_for(self, path: str) -> str:
        """The user's options for one input: --options, then the gate configuration's for it.
        The front end gets them too (-D macros decide what an OpenCL C source is)."""
        return merge_options(self.options, self.per_module_options.get(path, ""))


def merge_options(*parts: str) -> str:
    return " ".join(p for p in parts if p and p.strip())


@dataclass
class Session:
    """The compilers, cache and executor of one command (see the module docstring)."""

    config: AotConfig
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
