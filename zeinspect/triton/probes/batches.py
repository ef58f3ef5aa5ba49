"""Many specializations screened at once: Triton's front end for one batch while ocloc audits the
ones before, with the compiles of two batches in flight.  The one place a Triton screen runs
threads; the use cases call it with their session (triton.app.library.Screener).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from typing import Any

from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ...toolchain.run import stop_compilers
from ..model.kernel import IR_SUFFIX
from ..model.specialization import Specialization

SCREEN_BATCH = 16
"""Specializations per batch when many are screened at once: small enough that progress moves
and a stopped run keeps nearly all it did, large enough that each target group's SPIR-V still
fills several `ocloc multi` processes (probes.executor.pack)."""


AUDITS_AT_ONCE = 2
"""Batches whose compiles may run at once: a batch's last compiles (and the rebuilds Triton's
policy asks for once its first builds are read) leave cores idle that the next batch's first
compiles take.  The process-wide bound on compiles (toolchain.run.SLOTS) holds across them."""


def screen_all(done: dict[int, Collection | str], specs: list[Specialization], config: Settings,
               session: Session, progress: Progress | None) -> str:
    """Every specialization not screened yet, batch by batch (SCREEN_BATCH): Triton builds a
    batch on this thread while ocloc audits the one before on another (triton.probes.audit.build_many,
    audit_many), so the front end and the compiler overlap, and ocloc audits two batches at once
    (AUDITS_AT_ONCE).  Progress moves batch by batch, and a run stopped by Ctrl-C or SIGTERM
    keeps every batch done.  `done`: id(specialization) -> its collection, or why it was not
    screened, filled in place (what is in it already is not screened again); `session`: the
    command's build session.  Returns where the
    run was stopped, or "" when it ran to its end."""
    from concurrent.futures import Future, ThreadPoolExecutor
    from functools import partial

    from ..build.front_ends import FrontEnds
    from .audit import audit_many, build_many

    # The largest IR first: its compiles take longest, and the last batch's compiles are the run's
    # tail, on fewer cores than there are (the reports keep the order of `specs`).
    for spec in specs:
        if spec.problem is not None:  # its front end failed in the run: nothing to build
            done.setdefault(id(spec), spec.problem)
    todo = sorted((s for s in specs if id(s) not in done), key=_ir_size, reverse=True)
    if not todo:
        return ""
    batches = [todo[i:i + SCREEN_BATCH] for i in range(0, len(todo), SCREEN_BATCH)]
    count, stopped = 0, ""
    # Every front end a cache's TTIR needs, started at once in workers (triton.build.front_ends): the
    # batches below take them in order while ocloc audits the batch before.
    front_ends = FrontEnds.planned([s.kernel for s in todo], session.plan(config.targets), config.triton_workers,
                                   cache=session.cache, files=config.triton_artifacts)

    def keep(batch: list[Specialization], got: list[Collection | str]) -> None:
        nonlocal count
        for spec, result in zip(batch, got):
            done[id(spec)] = result
        count += len(batch)
        if progress:
            progress(count, len(todo))

    back = ThreadPoolExecutor(AUDITS_AT_ONCE, thread_name_prefix="zeinspect-triton-audit")
    pending: deque[tuple[list[Specialization], Future]] = deque()

    def take_oldest() -> None:
        batch, future = pending.popleft()
        keep(batch, _contained(batch, future.result))

    try:
        for batch in batches:
            built = _contained(batch, partial(build_many, [s.kernel for s in batch], config, session,
                                              front_ends, [s.staged for s in batch]))
            while pending and (len(pending) >= AUDITS_AT_ONCE or pending[0][1].done()):
                take_oldest()
            if isinstance(built, list):  # the batch's front end failed as a whole: its incidents
                keep(batch, built)
            else:
                pending.append((batch, back.submit(audit_many, built)))
        while pending:
            take_oldest()
    except KeyboardInterrupt:
        stop_compilers()  # the command's signal handler did it too; here also for a stop in-process
        for batch, future in pending:  # audited while Triton built the batches after them
            # A batch the stop cut short ended with the stop itself (toolchain.run.Stopped): not kept.
            if future.done() and not isinstance(future.exception(), KeyboardInterrupt):
                keep(batch, _contained(batch, future.result))
        stopped = (f"after {count} of {len(todo)} specializations (their reports are kept; a re-run "
                   "reads them back from the build cache)")
    finally:
        front_ends.close()
        back.shutdown(wait=stopped == "", cancel_futures=True)
    return stopped


def _ir_size(spec: Specialization) -> int:
    """The size of the specialization's IR file (a cache's TTIR); 0 for a source kernel."""
    if not spec.kernel.file.endswith(IR_SUFFIX):
        return 0
    try:
        return os.path.getsize(spec.kernel.file)
    except OSError:
        return 0  # its build says what is wrong with it


def _contained(batch: list[Specialization], work: Callable[[], Any]) -> Any:
    """`work()` for a batch, its results as Collections or one-line errors; an internal error is
    an incident of each specialization of the batch (a list of them), never the run's."""
    from ...errors import ZeinspectError, debugging, internal_incident

    try:
        got = work()
    except Exception as exc:  # noqa: BLE001 - the batch's internal error: each specialization's, one by one
        if debugging():
            raise
        return [Collection(incidents=[internal_incident(s.title, exc)]) for s in batch]
    if isinstance(got, list):
        return [r.one_line() if isinstance(r, ZeinspectError) else r for r in got]
    return got
