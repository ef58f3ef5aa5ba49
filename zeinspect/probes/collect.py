"""One entry point from inputs to reports: compile what needs compiling, read the rest.

`inspect`, `kernel` and `audit` all go through `collect_reports`; the CLI stays thin.
"""

from __future__ import annotations

from .. import names
from ..inputs import Input, collect
from ..inputs.kinds import InputKind
from ..model import Compiler
from .aot import AotConfig, _kernel_wanted, probe, resolve_compilers
from .binary import probe_binaries
from .results import Collection


def collect_reports(paths: list[str], config: AotConfig, *, explicit_targets: bool, progress=None,
                    inputs: list[Input] | None = None) -> Collection:
    """Reports for every path: sources compiled for the planned targets, binaries read as they are
    (and, when targets were asked for explicitly, narrowed to them with the missing ones noted)."""
    from ..toolchain.targets import plan_targets

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
    found: list[Compiler] = resolve_compilers(config) if (compilable or explicit_targets) else []
    if compilable:
        result = probe(compilable, config, progress=progress, compilers=found)
        out.extend(result)
        if result.internal_kernels:
            out.notes.append(f"IGC's internal kernels ({', '.join(sorted(names.INTERNAL_KERNELS))}) in "
                             f"{len(result.internal_kernels)} module(s): not user kernels, not reported")
    binaries = [i for i in inputs if not i.compilable]
    if binaries:
        plan = out.plan or (plan_targets(config.targets, found) if explicit_targets else None)
        got = probe_binaries(binaries, plan=plan if explicit_targets else None, compilers=found)
        out.reports += [r for r in got.reports if _kernel_wanted(r.kernel, config.kernels)]
        out.notes += [n for n in got.notes if "holds no image for" not in n or not host_info]
    if host_info and explicit_targets:
        plan = out.plan or plan_targets(config.targets, found)
        for path, info in host_info.items():
            missing = [t.name for t in plan.targets if t.ip not in info["ips"]]
            if missing and (info["ips"] or info["spirv"]):
                fallback = ("; its SPIR-V image is compiled at run time there" if info["spirv"]
                            else "; it has no SPIR-V image to fall back on")
                out.notes.append(f"{path}: no native image for {', '.join(missing)}{fallback}")
    return out
