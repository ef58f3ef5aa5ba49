"""Compiles on a Dask cluster (`--scheduler tcp://HOST:PORT`, $ZEINSPECT_SCHEDULER, or
`scheduler:` in the gate configuration): dask.distributed schedules, zeinspect only says
what a job is.

A job is a pure function of its inputs (the module's bytes, the compiler identity, the
options, the IP), and a task is a few jobs of one module: as on the local pool, the IPs of a
module are spread over the workers, and each worker compiles its share in one ocloc call
after one shared OpenCL C front end (probes.executor.LocalExecutor, run on the worker with
one thread); modules built alone go several to a task, built in one `ocloc multi` process.
A task is submitted under a key made of its jobs' cache keys, so a cluster
runs identical work once, whoever asks.  The worker compiles with its *own* compiler of the identity the client asked
for (found by `zeinspect toolchain list` rules on the worker: a fetched stack, Debian's, or
$ZEINSPECT_OCLOC); a worker without it refuses the job with an error naming the worker and
both identities, and the run stops with exit 3: compilers are never mixed silently.  A
compiler crash or hang on a worker comes back as the local one does (a finding for that
kernel and target).  A worker lost mid-run has its tasks retried elsewhere by the scheduler.
The cache stays on the client (probes.executor.CachedExecutor), so results land there and a
later run needs no cluster.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import envvars
from ..errors import ToolchainError
from ..model import Compiler
from .executor import CachedExecutor, Compiled, Job, LocalExecutor, isa_to_keep, pack, spread
from .results import CompileStats, Progress

# How long to wait for a scheduler to answer before exit 3 (seconds; $ZEINSPECT_SCHEDULER_TIMEOUT).
RETRIES = 2
"""Extra attempts of a job whose worker died (the scheduler moves it to another worker)."""


class WorkerIdentityError(RuntimeError):
    """A worker has no compiler of the identity a job asks for."""


@functools.lru_cache(maxsize=1)
def _worker_compilers() -> tuple[Compiler, ...]:
    from ..toolchain.compilers import discover

    return tuple(discover())


def compile_remotely(jobs: list[Job], timeout: float | None, cache_url: str | None = None,
                     cache_readonly: bool = False) -> list[Compiled]:
    """Runs on a worker: the jobs (of one module) with this worker's compiler of the same identity;
    with a shared build cache, what another machine already built is read from it, and what
    this worker builds is written to it."""
    wanted = jobs[0].compiler.id
    local = next((c for c in _worker_compilers() if c.id == wanted), None)
    if local is None:
        from distributed import get_worker

        held = ", ".join(c.id for c in _worker_compilers()) or "no compiler"
        raise WorkerIdentityError(f"worker {get_worker().address} has {held}; the job needs {wanted}")
    results: list[Compiled | None] = [None] * len(jobs)
    mine = [replace(j, compiler=local) for j in jobs]
    backend = LocalExecutor(timeout=timeout, workers=1)
    if cache_url:
        from ..cache import BuildCache
        from ..shared_cache import SharedStore

        CachedExecutor(backend, BuildCache(None, SharedStore(cache_url, readonly=cache_readonly))).run(
            mine, None, lambda i, compiled: results.__setitem__(i, compiled))
    else:
        backend.run(mine, None, lambda i, compiled: results.__setitem__(i, compiled))
    # A dumping compile's ISA goes back only where the costs may read it (executor._store).
    for n, c in enumerate(results):
        if c is not None and c.dumped is not None:
            results[n] = replace(c, dumped=isa_to_keep(c))
    return results  # type: ignore[return-value]


def tasks(jobs: list[Job], workers: int) -> list[list[int]]:
    """Jobs of one module, spread over the workers as LocalExecutor spreads them over threads;
    modules built alone packed several to a task, which the worker builds in one `ocloc multi`
    process (executor.pack), as the local pool does."""
    groups: dict[tuple, list[int]] = {}
    for i, job in enumerate(jobs):
        groups.setdefault(job.batch_key[1:], []).append(i)
    alone = [group[0] for group in groups.values() if len(group) == 1]
    return [task for group in groups.values() if len(group) > 1 for task in spread(group, workers)] + \
        pack(alone, jobs, workers)


def connect(address: str) -> Any:
    """A client of the scheduler at `address`; ToolchainError (exit 3) with the reason if none answers."""
    try:
        from distributed import Client
    except ImportError:
        raise ToolchainError(f"--scheduler {address}: Dask is not installed (pip install 'zeinspect[dask]')") from None
    try:
        return Client(address, timeout=envvars.value("ZEINSPECT_SCHEDULER_TIMEOUT"), set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or exc.__class__.__name__
        raise ToolchainError(f"no Dask cluster at {address}: {reason}") from None


@dataclass
class DaskExecutor:
    """An Executor whose jobs run on the workers of a Dask cluster."""

    address: str
    timeout: float | None = None
    cache_url: str | None = None
    cache_readonly: bool = False
    compiles: int = 0

    def stats(self) -> CompileStats:
        return CompileStats(compiles=self.compiles)

    def run(self, jobs: list[Job], progress: Progress | None, on_result: Callable[[int, Compiled], None]) -> None:
        from distributed import as_completed

        client = connect(self.address)
        try:
            workers = max(1, sum(client.nthreads().values()))
            futures = {}
            for task in tasks(jobs, workers):
                key = hashlib.sha256("".join(jobs[i].key for i in task).encode()).hexdigest()
                futures[client.submit(compile_remotely, [jobs[i] for i in task], self.timeout, self.cache_url,
                                      self.cache_readonly,
                                      key=f"zeinspect-compile-{key}", pure=False, retries=RETRIES)] = task
            done = 0
            for future in as_completed(futures, loop=client.loop):
                try:
                    compiled = future.result()
                except Exception as exc:  # noqa: BLE001 - a refused job, or one whose workers all died
                    client.cancel(list(futures))
                    why = str(exc) if isinstance(exc, WorkerIdentityError) else f"{exc.__class__.__name__}: {exc}"
                    raise ToolchainError(f"Dask cluster at {self.address}: {' '.join(why.split())}"[:600]) from None
                for i, one in zip(futures[future], compiled):
                    on_result(i, one)
                done += len(compiled)
                self.compiles += len(compiled)
                if progress:
                    progress(done, len(jobs))
        finally:
            client.close()
