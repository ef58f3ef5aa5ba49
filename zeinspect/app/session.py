"""Opening a command's session: its compilers, its cache, and the executor it compiles on.

The one place that chooses an executor backend: the local pool, or a Dask cluster when the
command names a scheduler (probes.dask_executor).  Tests inject a backend of their own.
"""

from __future__ import annotations

from collections.abc import Callable

from ..cache import BuildCache
from ..model import Compiler
from ..paths import build_cache_dir
from ..probes.executor import Executor, LocalExecutor
from ..probes.session import Session
from ..settings import Settings
from ..toolchain.compilers import resolve
from ..toolchain.run import SLOTS


def open_session(config: Settings, *, backend: Callable[[], Executor] | None = None,
                 compilers: list[Compiler] | None = None) -> Session:
    """A session for `config`: the build cache unless `use_cache` is off, the compilers
    `config.compiler` selects (found on first use) or `compilers`, and `backend` or the
    executor the configuration asks for."""
    SLOTS.bound(config.jobs)  # the process-wide bound on compilers running at once (toolchain.run)
    store = None
    if config.use_cache and config.cache_url:
        from ..shared_cache import SharedStore

        store = SharedStore(config.cache_url, readonly=config.cache_readonly)
    cache = BuildCache(build_cache_dir() if config.use_cache else None, store)
    from .cache import bounded_at_exit

    bounded_at_exit(cache)  # the cache stays in its bound (ZEINSPECT_CACHE_MAX_SIZE) when the command ends
    found = (lambda: list(compilers)) if compilers is not None else (lambda: resolve(config.compiler, config.timeout))
    return Session(config=config, cache=cache, backend=backend or backend_for(config), resolve=found)


def backend_for(config: Settings) -> Callable[[], Executor]:
    """Where uncached compiles run: this machine's pool, or the Dask cluster at `config.scheduler`."""
    if config.scheduler:
        scheduler = config.scheduler

        def dask() -> Executor:
            from ..probes.dask_executor import DaskExecutor

            return DaskExecutor(scheduler, config.timeout, cache_url=config.cache_url if config.use_cache else None,
                                cache_readonly=config.cache_readonly)

        return dask
    return lambda: LocalExecutor(timeout=config.timeout, workers=config.jobs, batch=config.batch, multi=config.multi,
                                 share_front_end=config.share_front_end)
