"""From an audit request to a judged result: collect reports, read the ratchet, judge.

Shared by `zeinspect audit`, `zeinspect ratchet update` and the pytest plugin.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from ..errors import UsageError
from ..probes.aot import AotConfig
from ..probes.collect import collect_reports
from ..probes.logs import read_log, reports_from_log
from ..probes.results import Collection
from . import ratchet as ratchet_mod
from .audit import AuditResult, audit
from .gate import GateConfig, TritonEntry

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
    triton: tuple = ()
    """Triton kernels from the gate configuration (dicts, see judge.gate)."""

    @classmethod
    def from_gate(cls, gate: GateConfig, **overrides) -> AuditRequest:
        req = cls(paths=gate.inputs, logs=gate.logs, ratchet=gate.ratchet, targets=gate.targets,
                  compiler=gate.compiler, options=gate.options, modules=gate.modules, shapes=gate.shapes,
                  strict=gate.strict, triton=gate.triton, scheduler=gate.scheduler)
        changes = {k: v for k, v in overrides.items() if v not in (None, (), "", False)}
        if changes.get("paths"):
            # PATHs on the command line (a pre-commit hook's changed files) are what is audited:
            # the configuration's Triton kernels only where their file is among them.
            given = {os.path.normpath(p) for p in changes["paths"]}
            changes["triton"] = tuple(e for e in gate.triton if os.path.normpath(e.kernel.file) in given)
        return replace(req, **changes)


@dataclass
class AuditRun:
    result: AuditResult
    collection: Collection
    ratchet: ratchet_mod.Ratchet


def run(request: AuditRequest, *, progress=None) -> AuditRun:
    if not request.paths and not request.logs and not request.triton:
        raise UsageError("nothing to audit: give PATHs, --log files or --config")
    ratchet_path = request.ratchet or DEFAULT_RATCHET
    ratchet = ratchet_mod.load(ratchet_path, must_exist=request.ratchet is not None)
    config = AotConfig(targets=request.targets or ("default",), compiler=request.compiler, options=request.options,
                       jobs=request.jobs, use_cache=request.use_cache, timeout=request.timeout,
                       per_module_options=dict(request.modules), scheduler=request.scheduler)
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
            from .shapes_file import collect_in_chosen_shapes

            collection.extend(collect_in_chosen_shapes(list(request.paths), config, request.shapes,
                                                       explicit_targets=bool(request.targets), progress=progress))
        else:
            collection.extend(collect_reports(list(request.paths), config, explicit_targets=bool(request.targets),
                                              progress=progress))
    for entry in request.triton:
        collection.extend(_triton_reports(entry, config, request.shapes, progress))
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


def _triton_reports(entry: TritonEntry, config: AotConfig, shapes_path: str | None, progress) -> Collection:
    """A Triton kernel of the gate configuration, in its recorded shape when `fix` chose one."""
    from ..probes.triton import probe_triton

    kernel = entry.kernel
    stage = entry.stage
    if shapes_path:
        from .shapes_file import load_triton

        decided = load_triton(shapes_path).get(kernel.label)
        if decided:
            kernel = replace(kernel, grf_mode=decided["grf_mode"], threads_per_warp=decided["threads_per_warp"],
                             num_warps=decided["num_warps"] or kernel.num_warps)
            stage = decided["stage"]
    sub = replace(config, targets=entry.targets or config.targets)
    if entry.autotune:
        from ..probes.triton import screen_autotune

        out = Collection()
        for n, (tuned, got) in enumerate(screen_autotune(kernel, sub, progress=progress), start=1):
            label = f"{kernel.label}[config {n}: {tuned.describe()}]"
            out.extend(got, reports=[r.replace(input=label) for r in got.reports])
        return out
    return probe_triton(kernel, sub, stage=stage, progress=progress)
