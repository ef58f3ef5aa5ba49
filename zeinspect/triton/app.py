"""The Triton use cases: `zeinspect triton`, and a gate configuration's `triton:` entries.

`screen` builds one kernel as compiled (and staged, if asked) or every config of its
`@triton.autotune`, with the Triton levers searched for the configs with a finding and the
lines that spill explained, as asked.  `gate_reports` and `gate_fix` are what app.plugins
calls for a gate configuration's entries.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..app.outcome import exit_code
from ..app.session import open_session
from ..judge.shapes_file import load_section
from ..probes.executor import Executor
from ..probes.explain import ExplainResult
from ..probes.results import Collection, CompileStats, Progress
from ..probes.session import Session
from ..settings import Settings
from .fix import record, search_triton
from .gate import TritonEntry
from .kernel import TritonKernel
from .levers import TritonShape
from .policy import BuildPolicy
from .probe import probe_triton
from .screen import Screen, screen_autotune


@dataclass
class TritonResult:
    kernel: TritonKernel
    runs: list[tuple[str, Collection]] = field(default_factory=list)
    """(label, reports): as compiled, then staged; empty for an autotune screen."""
    screen: Screen = field(default_factory=list)
    remedies: dict[int, dict] = field(default_factory=dict)
    """config index -> what the Triton levers make of a config with a finding."""
    explained: ExplainResult | None = None
    explained_configs: dict[int, ExplainResult] = field(default_factory=dict)
    explain_asked: bool = False

    @property
    def collections(self) -> list[Collection]:
        return [got for _, got in self.screen] if self.screen else [self.runs[-1][1]]

    @property
    def stats(self) -> CompileStats:
        return sum((got.stats for got in self.collections), CompileStats())

    @property
    def exit_code(self) -> int:
        reports = [r for got in self.collections for r in got.reports]
        incidents = [i for got in self.collections for i in got.incidents]
        incidents += [i for e in [self.explained, *self.explained_configs.values()] if e for i in e.incidents]
        return exit_code(reports, incidents)


def screen(kernel: TritonKernel, config: Settings, *, autotune: bool = False, fix: bool = False,
           stage: bool = False, explain: bool = False, artifacts_dir: Path | None = None,
           policy: BuildPolicy | str = BuildPolicy.JIT, progress: Progress | None = None,
           backend: Callable[[], Executor] | None = None, session: Session | None = None) -> TritonResult:
    """`session`: one opened for the same config, shared by many screens (a library's)."""
    from .explain import explain_reports

    session = session or open_session(config, backend=backend)
    out = TritonResult(kernel, explain_asked=explain)
    if autotune:
        out.screen = screen_autotune(kernel, config, session, policy=policy, progress=progress)
        if fix:
            out.remedies = {n: record(search_triton(tuned.applied_to(kernel), config, session, progress=progress))
                            for n, (tuned, got) in enumerate(out.screen)
                            if any(r.applicable and (not r.built or r.uses_scratch) for r in got.reports)}
        if explain:
            out.explained_configs = {
                n: explain_reports(f"{kernel.label} config #{n + 1}", kernel.file, scratch, config, session)
                for n, (_, got) in enumerate(out.screen) if (scratch := [r for r in got.reports if r.scratch_bytes])}
        return out
    wanted = [("as compiled", False)] + ([("staged", True)] if stage else [])
    out.runs = [(label, probe_triton(kernel, config, session, stage=staged, artifacts_dir=artifacts_dir,
                                     progress=progress, policy=policy)) for label, staged in wanted]
    if explain:
        out.explained = explain_reports(kernel.label, kernel.file, out.runs[-1][1].reports, config, session)
    return out


def module_reports(spec: str, config: Settings, progress: Progress | None = None) -> Collection:
    """Every launched kernel of a module (FILE.py) or one of them (FILE.py:KERNEL), each config
    of its autotune, with the values it is launched with; a kernel that cannot be screened is
    a note (what `diff` compares)."""
    from ..errors import InputError
    from .package import screen_package

    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        path, name = spec, ""
    found = screen_package(path, TritonKernel(file=path, kernel="", signature={}, constexprs={}, options_given=frozenset()),
                           config, progress=progress)
    out = Collection()
    keep = [r for r in found.collection.reports if not name or r.kernel == name]
    out.extend(found.collection, reports=keep)
    out.notes += [f"{u.kernel}: not screened: {u.reason}" for u in found.unscreened
                  if not name or u.kernel.endswith(f":{name}")]
    out.notes += found.load_errors
    if name and not keep and not any(u.kernel.endswith(f":{name}") for u in found.unscreened):
        raise InputError(f"no launched kernel {name!r}", path=path)
    return out


def kernel_of(entry: TritonEntry) -> TritonKernel:
    spec = entry.kernel
    return TritonKernel(file=spec.file, kernel=spec.kernel, signature=spec.signature, constexprs=spec.constexprs,
                        num_warps=spec.num_warps, threads_per_warp=spec.threads_per_warp, grf_mode=spec.grf_mode,
                        options=spec.options)


def _decided(shapes_path: str, kernel: TritonKernel) -> tuple[TritonKernel, bool | None]:
    """The kernel in the shape `zeinspect fix` recorded for it, and whether it is staged (None:
    no decision).  Levers a decision does not name (it predates them) keep the configured value."""
    for label, decision in load_section(shapes_path, "triton").items():
        file, _, name = str(label).rpartition(":")
        if os.path.normpath(file) != os.path.normpath(kernel.file) or name != kernel.kernel:
            continue
        shape = decision.get("shape") if isinstance(decision, dict) else None
        if not isinstance(shape, dict):
            return kernel, None
        chosen = TritonShape.from_json(shape)
        launch = {k: v for k, v in chosen.launch().items() if k in shape}
        return kernel.with_options(launch), bool(chosen.stage)
    return kernel, None


def gate_reports(entry: TritonEntry, config: Settings, session: Session, shapes_path: str | None,
                 progress: Progress | None) -> Collection:
    """A gate configuration's Triton kernel, in its recorded shape when `fix` chose one."""
    kernel = kernel_of(entry)
    stage = entry.stage
    if shapes_path:
        kernel, staged = _decided(shapes_path, kernel)
        stage = stage if staged is None else staged
    sub = replace(config, targets=entry.targets or config.targets)
    if entry.autotune:
        out = Collection()
        for n, (tuned, got) in enumerate(screen_autotune(kernel, sub, session, progress=progress), start=1):
            label = f"{kernel.label}[config {n}: {tuned.describe()}]"
            out.extend(got, reports=[r.replace(input=label) for r in got.reports])
        return out
    return probe_triton(kernel, sub, session, stage=stage, progress=progress)


def gate_fix(entry: TritonEntry, config: Settings, session: Session, progress: Progress | None) -> dict:
    sub = replace(config, targets=entry.targets or config.targets)
    return record(search_triton(kernel_of(entry), sub, session, progress=progress))



def screen_package(*args: Any, **kwargs: Any) -> Any:
    """Every launched kernel of a module or package (triton.package.screen_package)."""
    from .package import screen_package as screen

    return screen(*args, **kwargs)

