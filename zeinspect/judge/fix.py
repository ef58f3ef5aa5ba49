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
from ..levers import MODULE_LEVERS, How, Shape, module_rewrites
from ..levers.base import ShapeBase, spell
from ..levers.spirv_rewrite import rewrite_module
from ..model import KernelReport, Status
from ..probes.aot import probe
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from ..toolchain.targets import TargetPlan
from .equivalence import Equivalence
from .shapes import Search, search
from .shapes_file import SCHEMA, dump


@dataclass
class Decision:
    search: Search
    shape: ShapeBase
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


def sycl_spelling(shape: ShapeBase, written: ShapeBase) -> str:
    """How a SYCL author writes the decision in source, lever by lever."""
    return " with ".join(spell(MODULE_LEVERS, shape, written))


@dataclass
class FixResult:
    decisions: list[Decision] = field(default_factory=list)
    untouched: list[str] = field(default_factory=list)
    """Kernels that use no scratch memory as written."""


def scratch_users(inp: Input, config: Settings, session: Session, plan: TargetPlan) -> tuple[list[str], list[str]]:
    got = probe([inp], replace(config, shape=Shape()), session, plan=plan)
    names = []
    for r in got.reports:
        if r.kernel not in names:
            names.append(r.kernel)
    users = [n for n in names if any(r.kernel == n and (r.uses_scratch or r.status is not Status.OK)
                                     for r in got.reports)]
    return users, [n for n in names if n not in users]


def fix(inputs: list[Input], config: Settings, session: Session, plan: TargetPlan, *,
        allow_subgroup_change: bool = False, progress: Progress | None = None) -> FixResult:
    result = FixResult()
    for inp in inputs:
        if not inp.compilable:
            continue
        users, clean = scratch_users(inp, config, session, plan)
        result.untouched += [f"{inp.path}:{k}" for k in clean]
        for kernel in users:
            s = search(inp, kernel, config, session, plan, allow_subgroup_change=allow_subgroup_change,
                       progress=progress)
            winner = s.winner
            shape = winner.shape if winner is not None else s.written
            result.decisions.append(Decision(search=s, shape=shape))
    _verify(result, config, session)
    _check_results(result, config, session, plan)
    return result


def _check_results(result: FixResult, config: Settings, session: Session, plan: TargetPlan) -> None:
    """Run original and remedied kernels where a device accepts them; never claim without a run."""
    from ..inputs import read_input
    from ..toolchain.front_end import to_spirv
    from .equivalence import compare, launches

    cache = session.cache
    ip = plan.ips[0]
    compiler = plan.compiler_for_ip[ip]
    for d in result.decisions:
        inp = read_input(d.search.input)
        described = launches(inp.data.decode("utf-8", "replace")) if inp.kind == InputKind.OPENCL else {}
        rewrites = module_rewrites(d.kernel, d.shape, d.search.written)
        if not rewrites:
            d.equivalence = Equivalence(False, "nothing to run: the remedied module is the original "
                                        "(only build options change)")
        elif d.kernel not in described:
            d.equivalence = Equivalence(False, "not executable here: the kernel has no launch description")
        else:
            original = to_spirv(inp, compiler, ip, cache, config.timeout, config.options_for(inp.path),
                                config.compiler_environment)
            remedied, _ = rewrite_module(inp, rewrites, MODULE_LEVERS, compiler, ip, cache, config.timeout,
                                         config.options_for(inp.path), config.compiler_environment)
            d.equivalence = compare(original, remedied, described[d.kernel])


def _verify(result: FixResult, config: Settings, session: Session) -> None:
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
        got = collect_in_chosen_shapes(list(by_module), config.with_targets(config.targets), session, str(path))
    for d in result.decisions:
        d.verified = {r.target: r for r in got.reports if r.input == d.search.input and r.kernel == d.kernel}


def _figures(report: KernelReport) -> dict:
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
            "sycl": sycl_spelling(d.shape, d.search.written),
            "why": d.search.why(),
            "compilers": list(d.search.compiler_ids),
        }
        winner = d.search.winner
        if winner is not None and winner.costs:
            # Measured because no shape removes the scratch: what the chosen shape moves per
            # iteration of its innermost loop with any, per target (None: not measured there).
            record["scratch_per_loop_iteration"] = {t: c["per_iteration_bytes"] if c else None
                                                    for t, c in sorted(winner.costs.items())}
        if d.search.depends:
            record["depends_on_sub_group"] = d.search.depends
        if d.equivalence is not None:
            record["same_results"] = d.equivalence.to_json()
        if d.verified:
            record["results"] = {t: _figures(r) for t, r in d.verified.items()}
        entry["kernels"][d.kernel] = record
    return {"schema": SCHEMA, "generated": datetime.date.today().isoformat(), "modules": modules}


def write(result: FixResult, shapes_path: str, plan: TargetPlan | None, config: Settings | None,
          session: Session | None, *, sections: dict[str, dict] | None = None) -> list[str]:
    """Write the decisions and, per module, the remedied SPIR-V next to them; returns what was written.
    `sections`: other sources' decision records, each under its source's key (a gate's Triton kernels)."""
    from ..inputs import read_input

    out_dir = Path(shapes_path).parent
    art_dir = out_dir / "remedied"
    written = []
    artefacts = {}
    by_module: dict[str, list[Decision]] = {}
    for d in result.decisions:
        by_module.setdefault(d.search.input, []).append(d)
    for module, decisions in by_module.items():
        # Decisions come from modules compiled for a plan with a configuration, in a session.
        assert plan is not None and config is not None and session is not None
        first_ip = plan.ips[0]
        compiler = plan.compiler_for_ip[first_ip]
        inp = read_input(module)
        rewrites = tuple(rw for d in decisions for rw in module_rewrites(d.kernel, d.shape, d.search.written))
        info: dict = {}
        if rewrites:
            data, _ = rewrite_module(inp, rewrites, MODULE_LEVERS, compiler, first_ip, session.cache, config.timeout,
                                     config.options_for(inp.path), config.compiler_environment)
            name = Path(module).with_suffix(".spv").name
            atomic_write(art_dir / name, data)
            written.append(str(art_dir / name))
            info["artefact"] = os.path.relpath(art_dir / name, out_dir)
        info["build_options"] = _build_options(decisions, plan)
        artefacts[module] = info
    document = _document(result, artefacts)
    document.update({name: records for name, records in (sections or {}).items() if records})
    atomic_write(Path(shapes_path), dump(document).encode())
    written.append(shapes_path)
    return written


def _build_options(decisions: list[Decision], plan: TargetPlan) -> dict[str, str]:
    """Per compiler, the build options the module's decisions need (the build-option levers')."""
    levers = [lv for lv in MODULE_LEVERS.of(How.BUILD_OPTION) if lv.build_options is not None]
    choices = sorted({tuple(getattr(d.shape, lv.name) for lv in levers) for d in decisions})
    options = {}
    for c in {plan.compiler_for_ip[ip] for ip in plan.ips}:
        if len(choices) != 1:
            options[c.id] = "kernels need different build options: compile the module once per choice"
            continue
        spelled = []
        for lv, value in zip(levers, choices[0]):
            try:
                s = lv.build_options(c, value)  # type: ignore[misc]
            except Exception:  # noqa: BLE001 - a compiler without the setting gets a note instead
                spelled.append(f"(no spelling for {lv.describe(value)})")
                continue
            spelled.append(" ".join(x for x in (s.options, f"-internal_options {s.internal_options}"
                                                if s.internal_options else "") if x))
        options[c.id] = " ".join(x for x in spelled if x)
    return options
