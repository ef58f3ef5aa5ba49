"""Triton's front end for many IR kernels (a cache's TTIR) in worker processes.

Why: screening a cache spends about a third of its CPU time in Triton's front end (TTIR to
TTGIR, LLVM IR and SPIR-V; over half of it Triton linking Intel's libdevice, which it parses
anew for every kernel), and in one process that runs on one thread (one MLIR context,
backend.TRITON_LOCK) while the other cores wait for SPIR-V to give ocloc.  In workers the front
end runs on every core beside ocloc.  The workers also hold what Triton's native code keeps
(LLVM's heap grows by about 0.2 MB a compile and is not given back): each worker is replaced
after RECYCLE compiles, so the screening process stays as small as its reports, however many
entries the cache has.

What a worker returns is what `backend.compile_kernel` returns in the screening process: it is
the same call, on the same request, capabilities and target name (the request and the result
cross by pickle).  An error is raised where the build asks for that kernel's result.  Workers
ignore SIGINT: Ctrl-C (sent to the whole process group) and SIGTERM stop the screening process,
which cancels what the workers have not started (`close`).  A worker that dies (a crash in
Triton's native code) breaks the pool: every kernel it had not returned is then compiled in the
screening process, as without workers.  The front ends a warm screen finds it needs again
(Rerun) go to one pool of their own, started afresh after a worker dies.

Only IR kernels go to workers: a source kernel needs its Python module loaded, which each
worker would do again (importing the user's library and torch per worker), and its warm cache
(triton.build.warm) already spares most of those compiles.
"""

from __future__ import annotations

import signal
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from ...cache import BuildCache
from ...errors import ZeinspectError
from ...malloc import limit_arenas
from ...toolchain.run import SLOTS
from ...toolchain.targets import TargetPlan
from ..model.kernel import IR_SUFFIX, TritonKernel
from .backend import compile_kernel, target_groups

RECYCLE = 64
"""Compiles a worker makes before it is replaced (FrontEnds: by generations of pools): its native
heap is given back with it, and a worker's start (a quarter of a second: Python and Triton's
import) is paid once per 64 compiles."""
AUTOMATIC_FROM = 12
"""Front ends a screen needs before workers start by themselves (`triton_workers` unset): below
it the workers' start costs more than the compiles it would spread."""


def _worker_start() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the screening process decides when to stop
    limit_arenas()  # zeinspect.malloc: MLIR's threads would otherwise keep freed memory in arenas of their own


def worker_count(setting: int | None, compiles: int) -> int:
    """How many workers: `setting` when given (0: none), else one per compile slot (the
    process-wide bound, toolchain.run.SLOTS: `-j`, or one per core) once there are
    AUTOMATIC_FROM compiles; never more than the compiles."""
    if setting is None:
        if compiles < AUTOMATIC_FROM:
            return 0
        setting = SLOTS.limit
    return min(setting, compiles)


class FrontEnds:
    """The front ends of many kernels, started in workers, taken one by one by the builds
    (`compile`, a backend.FrontEnd) in the order they were given.

    The workers come in generations: each pool of `workers` processes takes RECYCLE compiles per
    worker and is shut down once its last result is taken (its native heap goes with it); the
    next starts while the last `workers` results of the one before are still running, so no
    core waits.  (Python 3.11's own `max_tasks_per_child` hangs when every task was submitted
    before a worker's replacement is due.)"""

    def __init__(self, todo: list[tuple[TritonKernel, dict, str]], workers: int | None, *,
                 recycle: int = RECYCLE) -> None:
        """`todo`: the front ends (kernel, capabilities, target name) in the order the builds will
        ask for them; `workers`: the setting (worker_count)."""
        self.todo = _for_workers(todo)
        self.places = {(id(k), name): place for place, (k, _, name) in enumerate(self.todo)}
        self.workers = worker_count(workers, len(self.todo))
        self.size = self.workers * recycle
        self.from_workers = 0
        """Results a worker gave (the rest were compiled in this process)."""
        self.pools: dict[int, ProcessPoolExecutor] = {}
        self.started: set[int] = set()
        self.futures: dict[int, Future] = {}
        """Place in the order given -> its worker's future (started generations only)."""
        self.again = Rerun(workers, recycle)
        """The front ends the builds find they need again (Rerun)."""
        if self.workers:
            self._start(0)

    @classmethod
    def planned(cls, kernels: list[TritonKernel], plan: TargetPlan, workers: int | None, *,
                cache: BuildCache | None = None, files: bool = False, recycle: int = RECYCLE) -> FrontEnds:
        """The front ends a screen of `kernels` on `plan` will ask for: each kernel's once per group
        of targets, but for those the build cache holds (triton.build.warm), which are not compiled
        again.  A build that finds its compile gone has its front end run again (`again`)."""
        try:
            groups = target_groups(plan)
        except ZeinspectError:
            return cls([], 0)  # each build meets the error itself, as its kernel's
        return cls([(k, g.caps, g.targets[0]) for k in kernels if k.file.endswith(IR_SUFFIX) for g in groups
                    if not _kept(cache, k, g.caps, g.targets[0], files)], workers, recycle=recycle)

    def _start(self, generation: int) -> None:
        self.started.add(generation)
        first = generation * self.size
        pool = _pool(self.workers)
        if pool is None:  # no process could start (limits): built here
            return
        self.pools[generation] = pool
        try:
            for place, (kernel, caps, name) in enumerate(self.todo[first:first + self.size], first):
                self.futures[place] = pool.submit(compile_kernel, kernel, caps, name)
        except (OSError, RuntimeError):  # a worker could not start, or one died: the rest built here
            pass

    def compile(self, kernel: TritonKernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
        place = self.places.pop((id(kernel), target_name), None) if self.workers else None
        if place is None:
            return compile_kernel(kernel, caps, target_name)
        generation, end = place // self.size, min(len(self.todo), (place // self.size + 1) * self.size)
        for older in [g for g in self.pools if g < generation]:  # what they still hold, no build asked for
            self.pools.pop(older).shutdown(wait=False, cancel_futures=True)
        for skipped in [q for q in self.futures if q < generation * self.size]:
            del self.futures[skipped]
        if generation not in self.started:  # the builds before skipped the place that starts it
            self._start(generation)
        if place >= end - self.workers and end < len(self.todo) and generation + 1 not in self.started:
            self._start(generation + 1)
        # None where its generation was let go before a build came back for it, or a worker died.
        got = _taken(self.futures.pop(place, None))
        if place == end - 1 and generation in self.pools:
            self.pools.pop(generation).shutdown(wait=False)
        if got is None:
            return compile_kernel(kernel, caps, target_name)
        self.from_workers += 1
        return got

    def close(self) -> None:
        """Cancel what no worker has started; the workers end after their current compile."""
        try:
            for pool in self.pools.values():
                pool.shutdown(wait=False, cancel_futures=True)
            self.pools.clear()
            self.futures.clear()
        finally:  # a second stop in the loop above still lets the re-runs go
            self.again.close()

    def __enter__(self) -> FrontEnds:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Rerun:
    """Front ends run again though the build cache holds their result, batch by batch: a warm
    build whose SPIR-V is needed and kept nowhere (a compile the cache lost, a target added to a
    group, a scratch user's files wanted by a first `--cost`; triton.probes.audit._made_again).
    A warm max-autotune cache screened on one more target of a group needs a thousand of them:
    in the screening process they ran one after another, and it grew to a front end's size.

    Each batch's are submitted at once (`submit`), then taken by its builds (`compile`).  One
    pool serves the batches of a screen (a pool's start, Python's and Triton's import, is paid
    once, not per batch of 16), started once the screen has asked for as many as FrontEnds'
    workers need (worker_count, counted over the screen, not per batch), replaced once it has
    been given `recycle` compiles per worker (checked between batches), let go when a batch needs
    none (idle workers hold their native heaps), and started afresh after a worker dies.  While a
    cold screen's FrontEnds generation still runs (new kernels beside lost compiles), both pools
    run: up to twice `triton_workers` front ends at once, for that overlap only."""

    def __init__(self, setting: int | None, recycle: int = RECYCLE) -> None:
        self.setting, self.recycle = setting, recycle
        self.pool: ProcessPoolExecutor | None = None
        self.workers = self.given = self.asked = self.from_workers = 0
        self.futures: dict[tuple[int, str], tuple[TritonKernel, Future]] = {}
        """(id(kernel), target name) -> the kernel (alive while its id is a key) and its future."""

    def submit(self, todo: list[tuple[TritonKernel, dict, str]]) -> None:
        self._drop_unclaimed()  # a batch before this one asks for none of its own any more
        todo = _for_workers(todo)
        self.asked += len(todo)
        if self.pool is not None and (not todo or self.given >= self.workers * self.recycle):
            self._let_go()
        pool = self.pool if self.pool is not None or not todo else self._start()
        if pool is None:
            return
        for kernel, caps, name in todo:
            try:
                self.futures[id(kernel), name] = (kernel, pool.submit(compile_kernel, kernel, caps, name))
            except (OSError, RuntimeError):  # a worker could not start, or one died: the rest built here
                self._let_go()
                return
            self.given += 1

    def _start(self) -> ProcessPoolExecutor | None:
        if not worker_count(self.setting, self.asked):
            return None
        self.workers = worker_count(self.setting, max(self.asked, AUTOMATIC_FROM))
        self.pool, self.given = _pool(self.workers), 0
        return self.pool

    def compile(self, kernel: TritonKernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
        _, future = self.futures.pop((id(kernel), target_name), (None, None))
        got = _taken(future)
        if got is not None:
            self.from_workers += 1
            return got
        if future is not None and self.pool is not None:  # a worker died: the next batch starts a new pool
            self._let_go()
        return compile_kernel(kernel, caps, target_name)

    def _drop_unclaimed(self) -> None:
        for _, future in self.futures.values():
            future.cancel()
        self.futures.clear()

    def _let_go(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None

    def close(self) -> None:
        try:
            self._drop_unclaimed()
        finally:
            self._let_go()


def _for_workers(todo: list[tuple[TritonKernel, dict, str]]) -> list[tuple[TritonKernel, dict, str]]:
    """The front ends a worker can run: IR kernels' (the module docstring says why)."""
    return [(k, caps, name) for k, caps, name in todo if k.file.endswith(IR_SUFFIX)]


def _pool(workers: int) -> ProcessPoolExecutor | None:
    """A pool of front-end workers (spawned: Triton's native state is not forked), or None where
    none can start (limits): the front ends then run in the screening process."""
    try:
        return ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_worker_start)
    except (OSError, RuntimeError):
        return None


def _taken(future: Future | None) -> tuple[str, bytes, dict] | None:
    """A worker's result, or None where there is none to take (no future; a worker died, or its
    pool was let go): the caller compiles it in the screening process."""
    if future is None:
        return None
    try:
        return future.result()
    except (BrokenProcessPool, CancelledError):
        return None


def _kept(cache: BuildCache | None, kernel: TritonKernel, caps: dict, target_name: str, files: bool) -> bool:
    """Whether the build cache holds the front end's result, and its SPIR-V's file where every
    build's files are asked for (`files`: without it, backend.build runs the front end)."""
    from . import warm
    from .backend import artifact_paths, artifacts_home

    got = warm.get(cache, warm.key(kernel, caps, target_name)) if cache is not None else None
    return got is not None and (not files or artifact_paths(kernel, target_name, False, got.spirv_sha256,
                                                            artifacts_home().resolve())[1].is_file())
