"""The autotune screen: every `triton.Config` of a kernel's `@triton.autotune` on every target.

The module is loaded once per target with the offline driver answering for that target, so
a module that picks its configs by the device gets each device's; a config missing from a
target's list is not applicable there.  Configs run side by side: Triton's own compiles one
at a time (one MLIR context), their ocloc compiles in parallel through the cache, within the
process-wide bound on concurrent compiles (probes.executor: one per core).
"""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor

from ...errors import UsageError
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ...toolchain.targets import TargetPlan
from ..build.backend import TRITON_LOCK, capabilities
from ..build.modules import loaded_module
from ..model.kernel import AutotuneConfig, TritonKernel
from .audit import probe_triton

Screen = list[tuple[AutotuneConfig, Collection]]


def autotune_configs(kernel: TritonKernel, plan: TargetPlan) -> list[tuple[AutotuneConfig, tuple[str, ...]]]:
    """The configs of the kernel's `@triton.autotune` as the module builds them for each planned
    target, each with the targets whose list has it, in first-seen order."""
    found: dict[str, tuple[AutotuneConfig, list[str]]] = {}
    for target in plan.targets:
        caps = capabilities(plan.compiler_for_ip[target.ip], target.name)
        obj = loaded_module(kernel.file, caps, target.name, kernel.threads_per_warp).kernel(kernel.kernel)
        configs = getattr(obj, "configs", None)
        if not configs:
            raise UsageError(f"{kernel.label} has no @triton.autotune configs")
        for c in configs:
            tuned = AutotuneConfig.of(c)
            found.setdefault(json.dumps(tuned.to_json(), sort_keys=True, default=str), (tuned, []))[1].append(
                target.name)
    return [(tuned, tuple(targets)) for tuned, targets in found.values()]


def screen_autotune(kernel: TritonKernel, config: Settings, session: Session, *,
                    progress: Progress | None = None) -> Screen:
    """Every autotune config on every planned target whose config list has it, in the module's order."""
    plan = session.plan(config.targets)
    found = autotune_configs(kernel, plan)
    everywhere = tuple(t.name for t in plan.targets)
    return screen_configs(kernel, [c for c, _ in found], config, session, progress=progress,
                          targets=[None if ts == everywhere else ts for _, ts in found])


def screen_configs(kernel: TritonKernel, configs: list[AutotuneConfig], config: Settings, session: Session, *,
                   progress: Progress | None = None,
                   targets: list[tuple[str, ...] | None] | None = None) -> Screen:
    """The given configs on every planned target (or, per config, on `targets[i]`), side by side."""
    done: list[AutotuneConfig] = []
    only = targets or [None] * len(configs)

    def one(item: tuple[AutotuneConfig, tuple[str, ...] | None]) -> tuple[AutotuneConfig, Collection]:
        c, on = item
        if c.unusable is not None:  # nothing to build: the table shows it n/a, with why
            return c, Collection(notes=[f"not screened: {c.unusable}"])
        got = probe_triton(c.applied_to(kernel), dataclasses.replace(config, targets=on) if on else config, session,
                           stage=False, triton_lock=TRITON_LOCK)
        if on:
            got.notes.append(f"in the module's configs for {', '.join(on)} only")
        got.notes.extend(c.notes)
        done.append(c)
        if progress:
            progress(len(done), len(configs))
        return c, got

    with ThreadPoolExecutor(max_workers=max(1, len(configs))) as pool:
        return list(pool.map(one, zip(configs, only)))
