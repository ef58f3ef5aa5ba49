"""The fix loop: search a shape for every scratch-using kernel, verify the module in its
chosen shapes, and write the decisions, the remedied SPIR-V and the SYCL spelling.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..fileio import atomic_write
from ..inputs import Input
from ..inputs.kinds import InputKind
from ..levers import MODULE_LEVERS
from ..levers.base import spell
from ..levers.register_file import grf_spelling
from ..model import Shape, Status
from ..probes.aot import AotConfig, probe
from ..toolchain.targets import TargetPlan
from .equivalence import Equivalence
from .shapes import Search, search
from .shapes_file import SCHEMA, dump


@dataclass
class Decision:
    search: Search
    shape: Shape
    verified: dict = field(default_factory=dict)
    """target -> report of the module compiled in its chosen shapes."""
    equivalence: Equivalence | None = None
    """The outcome of running the original and the remedied kernel (judge.equivalence)."""

    @property
    def kernel(self) -> str:
        return self.search.kernel

    @property
    def cleans(self) -> bool:
        return bool(self.verified) and all(r.status is Status.OK and not r.uses_scratch for r in self.verified.values())


def sycl_spelling(shape: Shape, written: int | None) -> str:
    """How a SYCL author writes the decision in source, lever by lever."""
    return " with ".join(spell(MODULE_LEVERS, shape, Shape(sub_group=written)))


@dataclass
class FixResult:
    decisions: list[Decision] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)
    """Kernels that use no scratch memory as written."""


def scratch_users(inp: Input, config: AotConfig, plan: TargetPlan, compilers) -> tuple[list[str], list[str]]:
    got = probe([inp], replace(config, shape=Shape()), compilers=compilers, plan=plan)
    names = []
    for r in got.reports:
        if r.kernel not in names:
            names.append(r.kernel)
    users = [n for n in names if any(r.kernel == n and (r.uses_scratch or r.status is not Status.OK)
                                     for r in got.reports)]
    return users, [n for n in names if n not in users]


def fix(inputs: list[Input], config: AotConfig, plan: TargetPlan, compilers, *, allow_subgroup_change: bool = False,
        progress=None) -> FixResult:
    result = FixResult()
    for inp in inputs:
        if not inp.compilable:
            continue
        users, clean = scratch_users(inp, config, plan, compilers)
        result.untouched += [f"{inp.path}:{k}" for k in clean]
        for kernel in users:
            s = search(inp, kernel, config, plan, compilers, allow_subgroup_change=allow_subgroup_change,
                       progress=progress)
            winner = s.winner
            shape = winner.shape if winner is not None else Shape(sub_group=s.written_sub_group or 0)
            result.decisions.append(Decision(search=s, shape=shape))
    _verify(result, config)
    _check_results(result, config, plan)
    return result


def _check_results(result: FixResult, config: AotConfig, plan: TargetPlan) -> None:
    """Run original and remedied kernels where a device accepts them; never claim without a run."""
    from ..cache import BuildCache
    from ..inputs import read_input
    from ..levers.sub_group import rewrite_module
    from ..paths import build_cache_dir
    from ..toolchain.front_end import to_spirv
    from .equivalence import compare, launches

    cache = BuildCache(build_cache_dir() if config.use_cache else None)
    ip = plan.ips[0]
    compiler = plan.compiler_for_ip[ip]
    for d in result.decisions:
        inp = read_input(d.search.input)
        described = launches(inp.data.decode("utf-8", "replace")) if inp.kind == InputKind.OPENCL else {}
        if d.shape.sub_group is None or d.shape.sub_group == (d.search.written_sub_group or 0):
            d.equivalence = Equivalence(False, "nothing to run: the remedied module is the original "
                                        "(only build options change)")
        elif d.kernel not in described:
            d.equivalence = Equivalence(False, "not executable here: the kernel has no launch description")
        else:
            original = to_spirv(inp, compiler, ip, cache, config.timeout, config.options_for(inp.path))
            remedied, _ = rewrite_module(inp, ((d.kernel, d.shape.sub_group),), compiler, ip, cache, config.timeout,
                                          config.options_for(inp.path))
            d.equivalence = compare(original, remedied, described[d.kernel])


def _verify(result: FixResult, config: AotConfig) -> None:
    """Compile each module with all its decisions at once, as the audit will, and keep the figures."""
    import tempfile

    from .shapes_file import collect_in_chosen_shapes

    by_module: dict[str, list[Decision]] = {}
    for d in result.decisions:
        by_module.setdefault(d.search.input, []).append(d)
    if not by_module:
        return
    with tempfile.TemporaryDirectory(prefix="zeinspect-fix-") as tmp:
        path = Path(tmp) / "shapes.yaml"
        path.write_text(dump(_document(result, artefacts=None)))
        got = collect_in_chosen_shapes(list(by_module), config, str(path), explicit_targets=True)
    for d in result.decisions:
        d.verified = {r.target: r for r in got.reports if r.input == d.search.input and r.kernel == d.kernel}


def _figures(report) -> dict:
    return {"status": report.status.value, "simd": report.simd, "grf": report.grf,
            "spill_bytes": report.spill_bytes, "private_bytes": report.private_bytes}


def _document(result: FixResult, artefacts: dict | None) -> dict:
    modules: dict = {}
    for d in result.decisions:
        entry = modules.setdefault(d.search.input, {"kernels": {}})
        if artefacts and d.search.input in artefacts:
            entry.update(artefacts[d.search.input])
        record = {
            "shape": d.shape.to_json(),
            "written_sub_group": d.search.written_sub_group,
            "cleans": d.cleans,
            "sycl": sycl_spelling(d.shape, d.search.written_sub_group),
            "why": d.search.why(),
            "compilers": list(d.search.compiler_ids),
        }
        if d.search.depends:
            record["depends_on_sub_group"] = d.search.depends
        if d.equivalence is not None:
            record["same_results"] = d.equivalence.to_json()
        if d.verified:
            record["results"] = {t: _figures(r) for t, r in d.verified.items()}
        entry["kernels"][d.kernel] = record
    return {"schema": SCHEMA, "generated": datetime.date.today().isoformat(), "modules": modules}


def write(result: FixResult, shapes_path: str, plan: TargetPlan | None, config: AotConfig | None, *,
          triton: dict | None = None) -> list[str]:
    """Write the decisions and, per module, the remedied SPIR-V next to them; returns what was written."""
    from ..cache import BuildCache
    from ..inputs import read_input
    from ..levers.sub_group import rewrite_module
    from ..paths import build_cache_dir

    out_dir = Path(shapes_path).parent
    art_dir = out_dir / "remedied"
    written = []
    artefacts = {}
    cache = BuildCache(build_cache_dir() if config is None or config.use_cache else None)
    first_ip = plan.ips[0] if plan else None
    compiler = plan.compiler_for_ip[first_ip] if plan else None
    by_module: dict[str, list[Decision]] = {}
    for d in result.decisions:
        by_module.setdefault(d.search.input, []).append(d)
    for module, decisions in by_module.items():
        # Decisions come from modules compiled for a plan with a configuration.
        assert plan is not None and config is not None and compiler is not None and first_ip is not None
        inp = read_input(module)
        rewrites = tuple((d.kernel, d.shape.sub_group) for d in decisions
                         if d.shape.sub_group is not None and d.shape.sub_group != (d.search.written_sub_group or 0))
        info: dict = {}
        if rewrites:
            data, _ = rewrite_module(inp, rewrites, compiler, first_ip, cache, config.timeout,
                                     config.options_for(inp.path))
            name = Path(module).with_suffix(".spv").name
            atomic_write(art_dir / name, data)
            written.append(str(art_dir / name))
            info["artefact"] = os.path.relpath(art_dir / name, out_dir)
        grfs = sorted({d.shape.grf for d in decisions})
        options = {}
        for c in {plan.compiler_for_ip[ip] for ip in plan.ips}:
            spelled = []
            for grf in grfs:
                try:
                    s = grf_spelling(c, grf)
                except Exception:  # noqa: BLE001 - a compiler without the mode gets a note instead
                    spelled.append(f"(no spelling for {grf} registers)")
                    continue
                text = " ".join(x for x in (s.options, f"-internal_options {s.internal_options}"
                                            if s.internal_options else "") if x)
                spelled.append(text)
            options[c.id] = " ".join(x for x in spelled if x) if len(grfs) == 1 else \
                "kernels need different register files: compile the module once per choice"
        info["build_options"] = options
        artefacts[module] = info
    document = _document(result, artefacts)
    if triton:
        document["triton"] = triton
    atomic_write(Path(shapes_path), dump(document).encode())
    written.append(shapes_path)
    return written
