"""Auditing kernels in their recorded shapes (`ratchet/shapes.yaml`, judge.shapes_file).

Kernels of one module are compiled together: the SPIR-V carries every kernel's sub-group
decision, and each register-file choice is one compile of the module (only the kernels that
chose it are reported from it).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from ..errors import InputError
from ..inputs import Input, Reading, collect, declared, host_info, iter_host_images
from ..inputs.kinds import InputKind
from ..ledger import Part
from ..levers import MODULE_LEVERS, How, Shape, module_rewrites
from ..model import KernelReport
from ..settings import Settings
from .aot import kernel_wanted, probe
from .collect import collect_reports
from .explain import users_costs
from .modules import written as as_written
from .results import Collection, Progress
from .session import Session

Decisions = dict[str, dict[str, Shape]]
"""Module path (normalised) -> kernel -> its chosen shape."""


def collect_in_chosen_shapes(paths: list[str], decisions: Decisions, config: Settings, session: Session, *,
                             shapes_path: str = "the shapes file", progress: Progress | None = None,
                             cost: bool = False) -> Collection:
    """Each module built with its kernels in their recorded shapes (`decisions`: module path ->
    kernel -> shape, as judge.shapes_file reads them from `shapes_path`).  `cost`: each scratch
    user's loop traffic measured from IGC's ISA of that very build (the same options and
    rewrites); the inputs without recorded shapes are left to the caller (probes.costs.attach_costs)."""
    reading = Reading()
    out = Collection()
    inputs = _with_decided_images(collect(paths, reading), decisions, out.parts)
    plain = [i for i in inputs if os.path.normpath(i.path) not in decisions or not i.compilable]
    out.notes += reading.notes()
    out.incidents += reading.incidents
    if plain:
        out.extend(collect_reports([], config, session, progress=progress, inputs=plain))
    shaped = [i for i in inputs if os.path.normpath(i.path) in decisions and i.compilable]
    if not shaped:
        return out
    plan = session.plan(config.targets)
    option_levers = MODULE_LEVERS.of(How.BUILD_OPTION)
    for inp in shaped:
        out.parts += filter(None, [declared(inp)])
        chosen = decisions[os.path.normpath(inp.path)]
        written = as_written(inp, config, session, plan).shapes
        names = [n for n in written if kernel_wanted(n, config.kernels)]
        unknown = sorted(set(chosen) - set(written))
        if unknown:
            raise InputError(f"{shapes_path} records a shape for {unknown[0]!r}, which this module does not have",
                             path=inp.path)
        shape_of = {n: chosen.get(n, Shape()) for n in names}
        rewrites = tuple(rw for n, s in shape_of.items() for rw in module_rewrites(n, s, written[n]))
        # Kernels that chose the same build options are compiled together, once per choice.
        by_options: dict[tuple, list[str]] = {}
        for n, s in shape_of.items():
            by_options.setdefault(tuple(getattr(s, lv.name) for lv in option_levers), []).append(n)
        for values, group in sorted(by_options.items()):
            built = Shape(**{lv.name: v for lv, v in zip(option_levers, values)})
            shaped_config = replace(config, shape=built, kernels=tuple(group), rewrites=rewrites)
            got = probe([inp], shaped_config, session, plan=plan, progress=progress)
            reports = [r.replace(shape=shape_of[r.kernel]) for r in got.reports if r.kernel in shape_of]
            if cost:
                reports = _with_costs(inp, reports, shaped_config, session, out)
            out.extend(got, reports=reports)
    return out


def _with_decided_images(inputs: list[Input], decisions: Decisions, parts: list[Part]) -> list[Input]:
    """The inputs, a host file whose images have recorded shapes (`zeinspect fix LIB`) opened
    into its images: each built in its shape, or as the audit builds it.  `parts` receives
    what the images that are no input declare (the ledger: unread, excluded, empty)."""
    out: list[Input] = []
    for inp in inputs:
        prefix = os.path.normpath(inp.path) + "["
        if inp.kind == InputKind.HOST and any(d.startswith(prefix) for d in decisions):
            info = host_info()
            images = list(iter_host_images(inp, [], info))
            given = {i.path for i in images}
            parts += [p for p in info["parts"] if p.label not in given]  # the others are declared as inputs
            out += images
        else:
            out.append(inp)
    return out


def _with_costs(inp: Any, reports: list[KernelReport], config: Settings, session: Session,
                out: Collection) -> list[KernelReport]:
    """The scratch users' costs, from a dumping compile of the build they came from."""
    users = [r for r in reports if r.built and r.uses_scratch]
    if not users:
        return reports
    found, problems = users_costs(inp, users, config, session)
    out.incidents += problems
    measured = {id(r) for r in users}
    return [r.replace(cost=found.get((r.input, r.kernel, r.target))) if id(r) in measured else r for r in reports]
