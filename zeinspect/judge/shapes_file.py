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

import yaml

from ..errors import FormatError, InputError
from ..inputs import collect
from ..inputs.zeinfo import load_yaml_strictly
from ..model import Shape
from ..probes.aot import AotConfig, _kernel_wanted, probe, resolve_compilers
from ..probes.collect import collect_reports
from ..probes.results import Collection

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
                out.setdefault(os.path.normpath(str(module)), {})[str(kernel)] = Shape(
                    grf=str(shape.get("grf", "default")), sub_group=shape.get("sub_group"))
            except ValueError as exc:
                raise InputError(f"kernel {kernel!r}: {exc}"[:200], path=path) from None
    return out


def load_triton(path: str) -> dict[str, dict]:
    """Triton decisions: `FILE.py:KERNEL` -> {stage, grf_mode, threads_per_warp, num_warps}
    (num_warps None when the decision predates that lever: keep the configured count)."""
    try:
        doc = load_yaml_strictly(Path(path).read_bytes(), "shapes file")
    except (OSError, FormatError):
        return {}
    entries = doc.get("triton") if isinstance(doc, dict) else None
    out = {}
    for label, decision in (entries or {}).items():
        if isinstance(decision, dict) and isinstance(decision.get("shape"), dict):
            shape = decision["shape"]
            out[os.path.normpath(str(label).rpartition(":")[0]) + ":" + str(label).rpartition(":")[2]] = {
                "stage": bool(shape.get("stage")), "grf_mode": str(shape.get("grf_mode", "default")),
                "threads_per_warp": int(shape.get("threads_per_warp", 32)),
                "num_warps": int(shape["num_warps"]) if isinstance(shape.get("num_warps"), int) else None}
    return out


def dump(doc: dict) -> str:
    return "# Shape decisions recorded by `zeinspect fix`; the audit builds each kernel in its shape.\n" + \
        yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None)


def collect_in_chosen_shapes(paths: list[str], config: AotConfig, shapes_path: str, *, explicit_targets: bool,
                             progress=None) -> Collection:
    decisions = load(shapes_path)
    inputs = collect(paths)
    plain = [i for i in inputs if os.path.normpath(i.path) not in decisions or not i.compilable]
    out = Collection()
    if plain:
        out.extend(collect_reports([], config, explicit_targets=explicit_targets, progress=progress, inputs=plain))
    shaped = [i for i in inputs if os.path.normpath(i.path) in decisions and i.compilable]
    if not shaped:
        return out
    compilers = resolve_compilers(config)
    from ..cache import BuildCache
    from ..inputs.spirv import read_module
    from ..paths import build_cache_dir
    from ..toolchain.front_end import to_spirv
    from ..toolchain.targets import plan_targets

    plan = plan_targets(config.targets, compilers)
    cache = BuildCache(build_cache_dir() if config.use_cache else None)
    for inp in shaped:
        chosen = decisions[os.path.normpath(inp.path)]
        first_ip = plan.ips[0]
        spirv = to_spirv(inp, plan.compiler_for_ip[first_ip], first_ip, cache, config.timeout, config.options_for(inp.path))
        module = read_module(spirv, inp.path)
        written = {name: module.required_sub_group_size(fid) or 0 for fid, name in module.entry_points()}
        names = [n for n in written if _kernel_wanted(n, config.kernels)]
        unknown = sorted(set(chosen) - set(written))
        if unknown:
            raise InputError(f"{shapes_path} records a shape for {unknown[0]!r}, which this module does not have",
                             path=inp.path)
        shape_of = {n: chosen.get(n, Shape(sub_group=None)) for n in names}
        rewrites = tuple((n, s.sub_group) for n, s in shape_of.items()
                         if s.sub_group is not None and s.sub_group != written[n])
        for grf in sorted({s.grf for s in shape_of.values()}):
            group = tuple(n for n, s in shape_of.items() if s.grf == grf)
            got = probe([inp], replace(config, shape=Shape(grf=grf), kernels=group, rewrites=rewrites),
                        compilers=compilers, plan=plan, progress=progress)
            out.extend(got, reports=[r.replace(shape=shape_of[r.kernel]) for r in got.reports
                                     if r.kernel in shape_of])
    return out
