"""The gate: from an audit request to a judged result, and the ratchet update built on it.

Shared by `zeinspect audit`, `zeinspect ratchet update` and the pytest plugin.  A gate
configuration and the command line meet in one rule (`AuditRequest.from_gate`): what the
command line says wins, PATHs replace the configuration's inputs (the pre-commit hook's
changed files), and a scheduler from the command line or $ZEINSPECT_SCHEDULER comes before
the configuration's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import EXIT_FINDING, EXIT_OK, EXIT_TOOLCHAIN, UsageError
from ..fileio import atomic_write
from ..judge import ratchet as ratchet_mod
from ..judge.audit import AuditResult, audit
from ..judge.gate import GateConfig, TritonEntry
from ..judge.update import UpdatePlan, update
from ..probes.aot import AotConfig
from ..probes.collect import collect_reports
from ..probes.executor import Executor
from ..probes.logs import read_log, reports_from_log
from ..probes.results import Collection, Progress
from . import plugins
from .session import open_session

DEFAULT_RATCHET = "scratch_ratchet.txt"


@dataclass(frozen=True)
class AuditRequest:
    paths: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    ratchet: str | None = None
    targets: tuple[str, ...] = ()
    compiler: str | None = None
    options: str = ""
    modules: dict = field(default_factory=dict)
    shapes: str | None = None
    strict: bool = False
    jobs: int = 0
    use_cache: bool = True
    timeout: float | None = None
    runtime: bool = False
    """Build through Level Zero on the device instead of compiling with ocloc."""
    simulate: str | None = None
    scheduler: str | None = None
    """A Dask scheduler address (probes.dask_executor)."""
    cache_url: str | None = None
    """A shared build cache (zeinspect.shared_cache)."""
    cache_readonly: bool = False
    triton: tuple[TritonEntry, ...] = ()
    """Triton kernels from the gate configuration (judge.gate), audited by zeinspect.triton."""

    @classmethod
    def from_gate(cls, gate: GateConfig, **overrides: Any) -> AuditRequest:
        """The configuration, with every override that says something taking its place."""
        req = cls(paths=gate.inputs, logs=gate.logs, ratchet=gate.ratchet, targets=gate.targets,
                  compiler=gate.compiler, options=gate.options, modules=gate.modules, shapes=gate.shapes,
                  strict=gate.strict, triton=gate.triton, scheduler=gate.scheduler, cache_url=gate.cache_url)
        changes = {k: v for k, v in overrides.items() if v not in (None, (), "", False)}
        if changes.get("paths"):
            # PATHs on the command line (a pre-commit hook's changed files) are what is audited:
            # the configuration's Triton kernels only where their file is among them.
            given = {os.path.normpath(p) for p in changes["paths"]}
            changes["triton"] = tuple(e for e in gate.triton if os.path.normpath(e.kernel.file) in given)
        return replace(req, **changes)

    @property
    def config(self) -> AotConfig:
        return AotConfig(targets=self.targets or ("default",), compiler=self.compiler, options=self.options,
                         jobs=self.jobs, use_cache=self.use_cache, timeout=self.timeout,
                         per_module_options=dict(self.modules), scheduler=self.scheduler, cache_url=self.cache_url,
                         cache_readonly=self.cache_readonly)


def config_with_gate(config: AotConfig, gate: GateConfig, *, explicit_targets: bool) -> AotConfig:
    """A command's configuration with a gate configuration's settings wherever the command
    line says nothing (the rule `AuditRequest.from_gate` applies to an audit)."""
    return replace(config, targets=config.targets if explicit_targets else gate.targets,
                   compiler=config.compiler or gate.compiler, options=config.options or gate.options,
                   per_module_options={**gate.modules, **config.per_module_options},
                   scheduler=config.scheduler or gate.scheduler, cache_url=config.cache_url or gate.cache_url)


@dataclass
class AuditRun:
    result: AuditResult
    collection: Collection
    ratchet: ratchet_mod.Ratchet

    def exit_code(self, strict: bool) -> int:
        if self.collection.incidents:
            return EXIT_TOOLCHAIN
        return EXIT_OK if self.result.passed(strict) else EXIT_FINDING


def run(request: AuditRequest, *, progress: Progress | None = None,
        backend: Callable[[], Executor] | None = None) -> AuditRun:
    if not request.paths and not request.logs and not request.triton:
        raise UsageError("nothing to audit: give PATHs, --log files or --config")
    ratchet_path = request.ratchet or DEFAULT_RATCHET
    ratchet = ratchet_mod.load(ratchet_path, must_exist=request.ratchet is not None)
    config = request.config
    session = open_session(config, backend=backend)
    collection = Collection()
    if request.paths and (request.runtime or request.simulate):
        from ..inputs import collect
        from ..probes.runtime import DEFAULT_TIMEOUT, RuntimeConfig
        from ..probes.runtime import probe as runtime_probe

        got = runtime_probe([i for i in collect(list(request.paths)) if i.kind.loads_on_device],
                            RuntimeConfig(simulate=request.simulate, build_flags=request.options,
                                          timeout=request.timeout or DEFAULT_TIMEOUT))
        collection.reports += got.reports
        collection.incidents += got.incidents
    elif request.paths:
        if request.shapes:
            from ..judge.shapes_file import collect_in_chosen_shapes

            collection.extend(collect_in_chosen_shapes(list(request.paths), config, session, request.shapes,
                                                       explicit_targets=bool(request.targets), progress=progress))
        else:
            collection.extend(collect_reports(list(request.paths), config, session,
                                              explicit_targets=bool(request.targets), progress=progress))
    if request.triton:
        triton = plugins.source("triton")
        for entry in request.triton:
            collection.extend(triton.audit(entry, config, session, request.shapes, progress))
    compilers = collection.compilers
    if request.logs and not compilers:
        try:
            from ..toolchain.compilers import discover

            compilers = discover()
        except Exception:  # noqa: BLE001 - naming targets in logs works without a compiler too
            compilers = []
    for log in request.logs:
        collection.reports += reports_from_log(os.path.normpath(log), read_log(log), compilers=compilers)
    result = audit(collection.reports, ratchet, compilers)
    return AuditRun(result=result, collection=collection, ratchet=ratchet)


@dataclass
class RatchetUpdate:
    plan: UpdatePlan
    path: str
    wrote: bool


def update_ratchet(run_: AuditRun, *, allow_grow: bool) -> RatchetUpdate:
    """Rewrite the ratchet file to what the audit measured, atomically (the caller refuses to
    when compiles crashed: their kernels' figures are unknown)."""
    before = run_.ratchet.render()
    plan = update(run_.ratchet, run_.result, allow_grow=allow_grow)
    after = run_.ratchet.render()
    if after != before:
        atomic_write(run_.ratchet.path, after.encode("utf-8"))
    return RatchetUpdate(plan=plan, path=run_.ratchet.path, wrote=after != before)
