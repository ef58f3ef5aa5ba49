"""The Triton probe: compile a `@triton.jit` kernel offline for Intel targets, audit its SPIR-V.

Triton compiles once per group of targets with the same capabilities (triton.build.backend); the
SPIR-V is then audited like any other by the real ocloc with the build flags Triton chose
(its `grf_mode`), and built again where Triton-XPU's own build policy would (triton.model.policy):
the final build is reported, the first kept beside it.  With `stage=True` the SLM staging
pass rewrites the TTGIR between Triton's TTGIR and its lowering.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any

from ...errors import ZeinspectError
from ...hardware import slm_per_work_group
from ...model import InputId, KernelReport, Status
from ...occupancy import cannot_launch
from ...probes.aot import probe
from ...probes.executor import ModuleNeeded
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ...toolchain.targets import TargetPlan
from ..build.backend import TritonBuild, artifacts_home, as_input, build, keep_files
from ..build.front_ends import FrontEnds, Rerun
from ..model.kernel import TritonKernel
from ..model.part import TritonPart
from ..model.policy import LARGE_GRF_FLAG, BuildPolicy, policy_of, policy_rebuilds
from ..model.ttgir import loop_carried, pointer_note


@dataclass
class _Run:
    kernel: TritonKernel
    config: Settings
    session: Session
    plan: TargetPlan
    policy: BuildPolicy
    progress: Progress | None
    out: Collection = field(default_factory=Collection)


def probe_triton(kernel: TritonKernel, config: Settings, session: Session, *, stage: bool,
                 artifacts_dir: Path | None = None, progress: Progress | None = None,
                 triton_lock: threading.Lock | None = None) -> Collection:
    """Reports for a Triton kernel on the planned targets (see the module docstring)."""
    run = _Run(kernel, config, session, session.plan(config.targets), policy_of(config), progress)
    with triton_lock or contextlib.nullcontext():
        builds = build(kernel, run.plan, stage=stage, artifacts_dir=artifacts_dir or artifacts_home(),
                       cache=session.cache)
    for b in builds:
        _audit_build(run, b)
    return run.out


def _audit_build(run: _Run, b: TritonBuild) -> None:
    flags = _flags(run.config, b)
    got = probe([as_input(b)], dc_replace(run.config, options=flags), run.session, plan=run.plan.only(b.targets),
                progress=run.progress)
    rules = _rules(run, flags, got.reports)
    again = None
    if rules:
        again = probe([as_input(b)], dc_replace(run.config, options=f"{flags} {LARGE_GRF_FLAG}"), run.session,
                      plan=run.plan.only(rules), progress=run.progress)
    _assemble(run, b, got, rules, again)


def _flags(config: Settings, b: TritonBuild) -> str:
    """The build flags ocloc gets: the run's options and the ones Triton chose (its grf_mode)."""
    return " ".join(x for x in (config.options, b.metadata.get("build_flags") or "") if x)


def _rules(run: _Run, flags: str, reports: list[KernelReport]) -> dict[str, str]:
    """target -> why Triton-XPU's build policy builds the kernel again there (triton.model.policy)."""
    return {r.target: why for r in reports if (why := policy_rebuilds(run.policy, flags, r))}


@dataclass
class TritonBatch:
    """Kernels Triton has built (the front half of a batched probe), their SPIR-V not audited yet."""

    config: Settings
    session: Session
    plan: TargetPlan
    runs: list[_Run]
    built: list[tuple[int, TritonBuild]]
    """(index of the kernel, one of its builds): a build per group of targets Triton tells apart."""
    results: list[Collection | ZeinspectError]


def build_many(kernels: list[TritonKernel], config: Settings, session: Session,
               front_ends: FrontEnds | None = None, stages: list[bool] | None = None) -> TritonBatch:
    """Triton's front end for many kernels, as a cache or a capture holds them, on the calling
    thread (Triton's compile is not thread-safe), or taken from the workers that ran it
    (triton.build.front_ends).  A kernel whose build stops keeps its error.  `stages`: which kernels
    the SLM staging pass rewrites (`--stage`), by position.

    A build keeps its TTGIR and SPIR-V as files only where they are wanted (files_wanted): its
    SPIR-V is otherwise kept nowhere, so a warm build comes back from the cache without it, and is
    audited here, from its cached compiles alone (_warm_audits); where one of them is not there, or
    its files are wanted, its front end runs again."""
    plan, policy = session.plan(config.targets), policy_of(config)
    runs = [_Run(k, config, session, plan, policy, None) for k in kernels]
    batch = TritonBatch(config, session, plan, runs, [], [run.out for run in runs])
    artifacts_dir = artifacts_home()
    staged = [bool(s) for s in stages] if stages else [False] * len(kernels)
    built: dict[int, list[TritonBuild]] = {}
    for n, kernel in enumerate(kernels):
        try:
            built[n] = build(kernel, plan, stage=staged[n], artifacts_dir=artifacts_dir,
                             cache=session.cache, front_end=front_ends.compile if front_ends else None,
                             files=config.triton_artifacts)
        except ZeinspectError as exc:
            batch.results[n] = exc
    screened = _warm_audits(batch, [(n, b) for n, builds in built.items() for b in builds if b.spirv is None])
    again: list[tuple[int, int, TritonBuild]] = []
    for n, builds in built.items():
        for i, b in enumerate(builds):
            if b.spirv is None:
                b.screened = screened[id(b)]
                if b.screened is None:
                    again.append((n, i, b))
    made = _made_again(kernels, again, plan, staged, session, front_ends.again if front_ends else None,
                       artifacts_dir)
    for n, builds in built.items():
        failed = [made[n, i] for i in range(len(builds)) if isinstance(made.get((n, i)), ZeinspectError)]
        if failed:
            batch.results[n] = failed[0]  # all of a kernel's builds, or its error alone
            continue
        batch.built += [(n, made.get((n, i), b)) for i, b in enumerate(builds)]
    return batch


def _made_again(kernels: list[TritonKernel], again: list[tuple[int, int, TritonBuild]], plan: TargetPlan,
                staged: list[bool], session: Session, rerun: Rerun | None, artifacts_dir: Path
                ) -> dict[tuple[int, int], Any]:
    """(kernel's place, build's place) -> the build made again, or its kernel's error, for the
    builds whose SPIR-V is needed and kept nowhere (triton.build.front_ends.Rerun says when): their
    front ends run again in the screen's workers, all of the batch's submitted at once."""
    made: dict[tuple[int, int], Any] = {}
    if rerun is not None:
        rerun.submit([(kernels[n], b.caps, b.targets[0]) for n, _, b in again])  # none: its idle workers go
    for n, i, b in again:
        try:
            [made[n, i]] = build(kernels[n], plan.only(b.targets), stage=staged[n], artifacts_dir=artifacts_dir,
                                 cache=session.cache, front_end=rerun.compile if rerun else None, files=False,
                                 fresh=True)
        except ZeinspectError as exc:
            made[n, i] = exc
    return made


def _warm_audits(batch: TritonBatch, bodiless: list[tuple[int, TritonBuild]]) -> dict[int, Collection | None]:
    """id(build) -> the audit of a build whose SPIR-V is not at hand, from the cache alone: its
    reports, or None where a compile is not in the cache or its files are wanted (so its SPIR-V is
    made again).  All at once, batched as audit_many batches them; where one of them is not in the
    cache, build by build, to find which."""
    if not bodiless:
        return {}
    own = [dc_replace(batch.runs[n], out=Collection(), progress=None) for n, _ in bodiless]
    at_once = TritonBatch(batch.config, batch.session, batch.plan, own, [(i, b) for i, (_, b) in enumerate(bodiless)],
                          [run.out for run in own])
    try:
        audit_many(at_once)
    except ModuleNeeded:
        if len(bodiless) == 1:
            return {id(bodiless[0][1]): None}
        return {k: v for one in bodiless for k, v in _warm_audits(batch, [one]).items()}
    if any(run.out.stopped for run in own):  # a stop while the cache was read: the run's, not a partial audit
        raise KeyboardInterrupt
    return {id(b): None if files_wanted(batch.config, run.out.reports) else run.out
            for run, (_, b) in zip(own, bodiless)}


def files_wanted(config: Settings, reports: list[KernelReport]) -> bool:
    """Whether a build of a screen of many keeps its TTGIR and SPIR-V as files: when every build's
    are asked for (`triton_artifacts`), or when its scratch users' loop traffic is measured
    (`--cost`, the loop rule: their dumping compiles read the file, triton.probes.cost).  A finding
    alone does not: its report gives the SPIR-V's digest, and ZEINSPECT_TRITON_ARTIFACTS=1 writes
    the files.  Why (issue 62, the cache no larger than the Triton cache it screens): on a
    max-autotune capture half the builds spill on an FMA target, and their SPIR-V alone is seven
    times the capture's TTIR."""
    return config.triton_artifacts or (config.measures_cost and any(r.built and r.uses_scratch for r in reports))


def audit_many(batch: TritonBatch) -> list[Collection | ZeinspectError]:
    """The back half: ocloc builds every SPIR-V of a target group in one batch (several modules
    per process, as SYCL images are built), and again in one batch where Triton's build policy
    rebuilds.  One result per kernel, in order: its reports, or the error that stopped its build.
    Safe beside build_many on another thread: it runs compilers and reads text, not Triton."""
    config, session, plan = batch.config, batch.session, batch.plan
    built = [(n, b) for n, b in batch.built if b.screened is None]
    firsts = _batched(built, lambda b: (_flags(config, b), b.targets), config, session, plan)
    rules = {id(b): _rules(batch.runs[n], _flags(config, b), firsts[id(b)].reports) for n, b in built}
    agains = _batched([(n, b) for n, b in built if rules[id(b)]],
                      lambda b: (f"{_flags(config, b)} {LARGE_GRF_FLAG}", tuple(rules[id(b)])), config, session, plan)
    for n, b in batch.built:
        if b.screened is not None:  # audited from the cache as it was built (build_many)
            batch.runs[n].out.extend(b.screened)
        else:
            _assemble(batch.runs[n], b, firsts[id(b)], rules[id(b)], agains.get(id(b)))
    return batch.results


def _batched(builds: list[tuple[int, TritonBuild]], key: Any, config: Settings, session: Session,
             plan: TargetPlan) -> dict[int, Collection]:
    """id(build) -> its part of one probe per group of builds with the same flags and targets."""
    groups: dict[tuple[str, tuple[str, ...]], list[TritonBuild]] = {}
    for _, b in builds:
        flags, targets = key(b)
        groups.setdefault((flags, tuple(targets)), []).append(b)

    def one(flags: str, targets: tuple[str, ...], members: list[TritonBuild]) -> Collection:
        return probe([as_input(b) for b in members], dc_replace(config, options=flags), session,
                     plan=plan.only(targets))

    # The groups at once: each probe's tail (its last compiles) leaves cores idle that the next
    # group's first compiles take; the process-wide bound (toolchain.run.SLOTS) still holds.
    with ThreadPoolExecutor(max(1, len(groups))) as pool:
        done = [(members, pool.submit(one, flags, targets, members)) for (flags, targets), members in groups.items()]
    out: dict[int, Collection] = {}
    for members, future in done:
        got = future.result()
        by_input: dict[str, list[KernelReport]] = {}
        for r in got.reports:
            by_input.setdefault(r.input, []).append(r)
        for i, b in enumerate(members):
            part = Collection(reports=by_input.get(as_input(b).path, []), compilers=got.compilers, plan=got.plan)
            if i == 0:  # the batch's notes, incidents and statistics are kept once, with its first build
                part.notes, part.incidents, part.stats = got.notes, got.incidents, got.stats
            out[id(b)] = part
    return out


def _assemble(run: _Run, b: TritonBuild, got: Collection, rules: dict[str, str], again: Collection | None) -> None:
    """The build's reports: the final build's figures (the first kept beside them where Triton's
    policy rebuilt), what Triton launches it with, and the Triton part (TritonPart).  A build
    whose files are wanted (files_wanted) keeps its TTGIR and SPIR-V as files, which they name."""
    final = {(r.target, r.kernel): r for r in got.reports}
    first = dict(final)
    if again is not None:
        run.out.stats = run.out.stats + again.stats
        final.update({(r.target, r.kernel): r.replace(notes=r.notes + (rules[r.target],)) for r in again.reports})
    launched = {key: _with_launch_figures(r, b) for key, r in final.items()}
    if not b.written and files_wanted(run.config, list(launched.values())):
        keep_files(b, run.session.cache)
    path = "DPAS" if b.caps.get("has_subgroup_matrix_multiply_accumulate") else "FMA"
    kept = [f"TTGIR: {b.artifacts['ttgir']}", f"SPIR-V: {b.artifacts['spirv']}"] if b.written else \
        [f"TTGIR and SPIR-V not kept (ZEINSPECT_TRITON_ARTIFACTS=1 writes them, as the command below needs; "
         f"SPIR-V SHA-256 {b.spirv_digest})"]
    notes = [f"Triton {path} path, {b.metadata.get('num_warps')} warps x {b.metadata.get('threads_per_warp')} "
             f"threads, {b.metadata.get('shared')} bytes of shared memory, build flags "
             f"{b.metadata.get('build_flags') or '(none)'}", *kept, *b.notes]
    lanes = (b.metadata.get("num_warps") or 4) * (b.metadata.get("threads_per_warp") or 32)
    carried = loop_carried(b.ttgir, lanes)
    staging = None
    if b.staging is not None:
        notes.append(f"staging pass: {b.staging.describe()}")
        staging = {"changed": b.staging.changed, "form": b.staging.form, "dots": [d.__dict__ for d in b.staging.dots]}
    part = TritonPart(path=path, artifacts=b.artifacts if b.written else {}, metadata=b.metadata,
                      policy=run.policy.value, loop_carried=carried, staging=staging)
    reports = []
    for key, r in final.items():
        rebuilt = key[0] in rules
        own = part.with_build(r, first[key].to_json() if rebuilt else None, rules[key[0]] if rebuilt else None)
        said = pointer_note(carried) if r.uses_scratch or not r.built else None
        reports.append(launched[key].replace(input=run.kernel.label, origin=InputId(run.kernel.file),
                                             extra={"triton": own},
                                             notes=r.notes + tuple(notes) + ((said,) if said else ())))
    run.out.extend(got, reports=reports)


def _with_launch_figures(report: KernelReport, b: TritonBuild) -> KernelReport:
    """What Triton launches the kernel with: its shared memory (over the target's SLM it cannot
    launch) and a work-group of num_warps x threads_per_warp work-items (larger than the build's
    register file and SIMD width allow, it cannot launch: the check applies to the build Triton's
    own rule ends with, so a config the 256-register retry made unlaunchable is named as such)."""
    shared = b.metadata.get("shared")
    warps, lanes = b.metadata.get("num_warps"), b.metadata.get("threads_per_warp")
    work_group = warps * lanes if isinstance(warps, int) and isinstance(lanes, int) else None
    report = report.replace(work_group_size=work_group) if work_group else report
    if shared is None:
        return report
    limit = slm_per_work_group(report.ip)
    if report.status is Status.OK and shared > limit:
        return report.replace(slm_bytes=shared, status=Status.SLM_OVERFLOW,
                              reason=f"asks for {shared} bytes of shared local memory per work-group at launch, over "
                                     f"the {limit} bytes a work-group can have on {report.target}")
    if report.status is Status.OK and work_group and report.ip and report.grf and report.simd and \
            (why := cannot_launch(report.ip, report.grf, report.simd, work_group,
                                  f"launches {warps} warps x {lanes} threads =")) is not None:
        return report.replace(slm_bytes=shared, status=Status.WG_OVERFLOW, reason=why)
    return report.replace(slm_bytes=shared)
