"""One entry point from inputs to reports: compile what needs compiling, read the rest.

`inspect`, `kernel` and `audit` all go through `collect_reports`; the CLI stays thin.
"""

from __future__ import annotations

from .. import names
from ..inputs import Input, collect
from ..inputs.kinds import InputKind
from ..model import Compiler
from ..settings import Settings
from .aot import kernel_wanted, probe
from .binary import probe_binaries
from .results import Collection, Progress
from .session import Session


def collect_reports(paths: list[str], config: Settings, session: Session, *,
                    progress: Progress | None = None, inputs: list[Input] | None = None) -> Collection:
    """Reports for every path: sources compiled for the planned targets, binaries read as they are
    (and, when targets were named (`config.targets_given`), narrowed to them with the missing ones noted)."""
    explicit_targets = config.targets_given
    inputs = list(inputs) if inputs is not None else collect(list(paths))
    out = Collection()
    host_info = {}
    if any(i.kind == InputKind.HOST for i in inputs):
        from ..inputs import expand_host

        expanded = []
        while inputs:
            # Taken off the list one by one: a host file's bytes (a library can be hundreds
            # of MB) are freed once its images are out, not kept through the compiles.
            inp = inputs.pop(0)
            if inp.kind != InputKind.HOST:
                expanded.append(inp)
                continue
            images, notes, info = expand_host(inp)
            expanded += images
            out.notes += notes
            host_info[inp.path] = info
        del inp
        inputs = expanded
    compilable = [i for i in inputs if i.compilable]
    found: list[Compiler] = session.compilers if (compilable or explicit_targets) else []
    if compilable:
        result = probe(compilable, config, session, progress=progress)
        out.extend(result)
        if result.internal_kernels:
            out.notes.append(f"IGC's internal kernels ({', '.join(sorted(names.INTERNAL_KERNELS))}) in "
                             f"{len(result.internal_kernels)} module(s): not user kernels, not reported")
    binaries = [i for i in inputs if not i.compilable]
    if binaries:
        plan = out.plan or (session.plan(config.targets) if explicit_targets else None)
        got = probe_binaries(binaries, plan=plan if explicit_targets else None, compilers=found)
        out.reports += [r for r in got.reports if kernel_wanted(r.kernel, config.kernels)]
        out.notes += got.notes
        if not host_info:  # a host file's missing targets are said once, below, with its fallback
            out.notes += [f"{path}: holds no image for {', '.join(missing)}"
                          for path, missing in got.missing_targets.items()]
    if host_info and explicit_targets:
        plan = out.plan or session.plan(config.targets)
        for path, info in host_info.items():
            missing = [t.name for t in plan.targets if t.ip not in info["ips"]]
            if missing and (info["ips"] or info["spirv"]):
                fallback = ("; its SPIR-V image is compiled at run time there" if info["spirv"]
                            else "; it has no SPIR-V image to fall back on")
                out.notes.append(f"{path}: no native image for {', '.join(missing)}{fallback}")
    return out
