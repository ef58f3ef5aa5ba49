"""The recorded shape decisions (`ratchet/shapes.yaml`) and auditing kernels in their chosen shape.

    schema: zeinspect.shapes/1
    targets: [tgllp, ...]
    modules:
      kernels/sg32_accumulate.cl:          # paths relative to the current directory of `fix`
        artefact: remedied/sg32_accumulate.spv   # relative to this file
        build_options: {ocloc-26.27.039122/igc-2.40.14: ""}
        kernels:
          sg32_accumulate:
            shape: {sub_group: 0, grf: default}
            written_sub_group: 32
            cleans: true
            sycl: ...
            why: ...
            compilers: [...]
            results: {tgllp: {status: ok, simd: 8, grf: 128, spill_bytes: 0, private_bytes: 0}, ...}

The audit reads only `modules.<path>.kernels.<name>.shape`; the rest is the record a
reviewer reads.  Kernels of one module are compiled together: the SPIR-V carries every
kernel's sub-group decision, and each register-file choice is one compile of the module
(only the kernels that chose it are reported from it).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from ..errors import FormatError, InputError
from ..inputs import collect
from ..inputs.zeinfo import load_yaml_strictly
from ..levers import MODULE_LEVERS, How, Shape, module_rewrites, written_shape
from ..model import KernelReport
from ..probes.aot import kernel_wanted, probe
from ..probes.collect import collect_reports
from ..probes.results import Collection, Progress
from ..probes.session import Session
from ..settings import Settings

SCHEMA = "zeinspect.shapes/1"


def load(path: str) -> dict[str, dict[str, Shape]]:
    """module path -> kernel -> chosen Shape."""
    from ..inputs.files import read_file

    return parse(read_file(path, "shapes file", 64 * 1024 * 1024), path)


def parse(text: bytes, path: str) -> dict[str, dict[str, Shape]]:
    try:
        doc = load_yaml_strictly(text, "shapes file")
    except FormatError as exc:
        raise InputError(str(exc), path=path) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"is not a {SCHEMA} document", path=path)
    out: dict[str, dict[str, Shape]] = {}
    modules = doc.get("modules") or {}
    if not isinstance(modules, dict):
        raise InputError("'modules' must be a mapping", path=path)
    for module, entry in modules.items():
        kernels = (entry or {}).get("kernels") if isinstance(entry, dict) else None
        if not isinstance(kernels, dict):
            raise InputError(f"module {module!r} has no 'kernels' mapping"[:200], path=path)
        for kernel, decision in kernels.items():
            shape = decision.get("shape") if isinstance(decision, dict) else None
            if not isinstance(shape, dict):
                raise InputError(f"kernel {kernel!r} has no shape"[:200], path=path)
            try:
                out.setdefault(os.path.normpath(str(module)), {})[str(kernel)] = Shape.from_json(shape)
            except ValueError as exc:
                raise InputError(f"kernel {kernel!r}: {exc}"[:200], path=path) from None
    return out


def load_section(path: str, name: str) -> dict:
    """One top-level section of a shapes file as written (`triton:`, which zeinspect.triton
    reads with its own levers), or {} when the file or the section is missing."""
    try:
        doc = load_yaml_strictly(Path(path).read_bytes(), "shapes file")
    except (OSError, FormatError):
        return {}
    section = doc.get(name) if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else {}


def dump(doc: dict) -> str:
    return "# Shape decisions recorded by `zeinspect fix`; the audit builds each kernel in its shape.\n" + \
        yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None)


def recorded_inputs(shapes_path: str) -> set[str]:
    """The modules a shapes file records decisions for (normalised paths)."""
    return set(load(shapes_path))


def collect_in_chosen_shapes(paths: list[str], config: Settings, session: Session, shapes_path: str, *,
                             progress: Progress | None = None, cost: bool = False) -> Collection:
    """Each module built with its kernels in their recorded shapes.  `cost`: each scratch user's
    loop traffic measured from IGC's ISA of that very build (the same options and rewrites);
    the inputs without recorded shapes are left to the caller (app.inspect.attach_costs)."""
    decisions = load(shapes_path)
    inputs = collect(paths)
    plain = [i for i in inputs if os.path.normpath(i.path) not in decisions or not i.compilable]
    out = Collection()
    if plain:
        out.extend(collect_reports([], config, session, progress=progress, inputs=plain))
    shaped = [i for i in inputs if os.path.normpath(i.path) in decisions and i.compilable]
    if not shaped:
        return out
    from ..inputs.spirv import read_module
    from ..toolchain.front_end import to_spirv

    plan = session.plan(config.targets)
    option_levers = MODULE_LEVERS.of(How.BUILD_OPTION)
    for inp in shaped:
        chosen = decisions[os.path.normpath(inp.path)]
        first_ip = plan.ips[0]
        spirv = to_spirv(inp, plan.compiler_for_ip[first_ip], first_ip, session.cache, config.timeout,
                         config.options_for(inp.path), config.compiler_environment)
        module = read_module(spirv, inp.path)
        written = {name: written_shape(module, fid) for fid, name in module.entry_points()}
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


def _with_costs(inp: Any, reports: list[KernelReport], config: Settings, session: Session,
                out: Collection) -> list[KernelReport]:
    """The scratch users' costs, from a dumping compile of the build they came from."""
    from ..probes.explain import users_costs

    users = [r for r in reports if r.built and r.uses_scratch]
    if not users:
        return reports
    found, problems = users_costs(inp, users, config, session)
    out.incidents += problems
    measured = {id(r) for r in users}
    return [r.replace(cost=found.get((r.input, r.kernel, r.target))) if id(r) in measured else r for r in reports]
