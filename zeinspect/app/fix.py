"""`fix`: search a shape for every scratch-using kernel, verify each module in its chosen shapes,
check that the remedied kernels compute what the originals do, and write the decisions.

`fix` also searches the Triton kernels of a gate configuration through zeinspect.triton
(app.plugins) and writes every decision, with the remedied modules, where it is asked to.
The record itself (decisions, the SYCL spelling, the document) is judge.fix's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..errors import UsageError
from ..fileio import atomic_write
from ..inputs import Input, collect, read_input
from ..inputs.kinds import InputKind
from ..judge.equivalence import Equivalence, launches
from ..judge.fix import Decision, FixResult, decide, document
from ..judge.gate import GateConfig
from ..judge.shapes_file import dump
from ..levers import MODULE_LEVERS, How, Shape, module_rewrites
from ..probes.modules import first_front_end, module_spirv, rewritten, rewritten_first
from ..probes.results import Progress
from ..probes.session import Session
from ..probes.shaped import collect_in_chosen_shapes
from ..settings import Settings
from ..toolchain.targets import TargetPlan
from . import plugins
from .equivalence import compare
from .gate import gate_entries
from .outcome import Outcome
from .search import Scope, search_module
from .session import open_session


@dataclass
class FixOutcome:
    result: FixResult
    sources: dict[str, dict] = field(default_factory=dict)
    """Per gate source (Triton), each entry's label -> its decision record."""
    written: list[str] = field(default_factory=list)

    @property
    def differ(self) -> list[Decision]:
        """Decisions whose remedied kernel computes different results (never written silently)."""
        return [d for d in self.result.decisions if d.equivalence is not None and d.equivalence.differs]

    @property
    def outcome(self) -> Outcome:
        return Outcome.of(len(self.differ))


def fix(paths: tuple[str, ...], config: Settings, *, gate: GateConfig | None = None, write_to: str | None = None,
        allow_subgroup_change: bool = False, progress: Progress | None = None,
        session: Session | None = None) -> FixOutcome:
    """Search a shape for every scratch-using kernel of `paths` (and of the gate's inputs and
    Triton kernels), verify each module in its chosen shapes, and write the decisions."""
    entries = gate_entries(gate) if gate is not None else {}
    if gate is not None:
        paths = tuple(paths) + gate.inputs
    if not paths and not any(entries.values()):
        raise UsageError("nothing to fix: give PATHs or --config")
    session = session or open_session(config)
    out = FixOutcome(FixResult())
    plan = None
    if paths:
        plan = session.plan()
        out.result = fix_inputs(collect(list(paths)), config, session, plan,
                                allow_subgroup_change=allow_subgroup_change, progress=progress)
    for name, listed in entries.items():
        source = plugins.source(name)
        out.sources[name] = {entry.label: source.fix(entry, config, session, progress) for entry in listed}
    if write_to:
        out.written = write(out.result, write_to, plan, config if paths else None,
                            session if paths else None, sections=out.sources)
    return out


def fix_inputs(inputs: list[Input], config: Settings, session: Session, plan: TargetPlan, *,
               allow_subgroup_change: bool = False, progress: Progress | None = None) -> FixResult:
    result = FixResult()
    for inp in inputs:
        if not inp.compilable:
            continue
        found = search_module(inp, config, session, plan, progress=progress,
                              scope=Scope(allow_subgroup_change=allow_subgroup_change, measure=True))
        result.untouched += [f"{inp.path}:{k}" for k in found.clean]
        result.decisions += [decide(s) for s in found.searches]
    _verify(result, config, session)
    _check_results(result, config, session, plan)
    return result


def _check_results(result: FixResult, config: Settings, session: Session, plan: TargetPlan) -> None:
    """Run original and remedied kernels where a device accepts them; never claim without a run."""
    compiler, ip = first_front_end(session, config, plan)
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
            original = module_spirv(inp, config, session.cache, compiler, ip)
            remedied, _ = rewritten(inp, rewrites, config, session.cache, compiler, ip)
            d.equivalence = compare(original, remedied, described[d.kernel])


def _verify(result: FixResult, config: Settings, session: Session) -> None:
    """Compile each module with all its decisions at once, as the audit will, and keep the figures."""
    by_module = result.by_module()
    if not by_module:
        return
    decisions = {os.path.normpath(module): {d.kernel: cast(Shape, d.shape) for d in made}
                 for module, made in by_module.items()}
    got = collect_in_chosen_shapes(list(by_module), decisions, config.with_targets(config.targets), session)
    for d in result.decisions:
        d.verified = {r.target: r for r in got.reports if r.input == d.search.input and r.kernel == d.kernel}


def write(result: FixResult, shapes_path: str, plan: TargetPlan | None, config: Settings | None,
          session: Session | None, *, sections: dict[str, dict] | None = None) -> list[str]:
    """Write the decisions and, per module, the remedied SPIR-V next to them; returns what was written.
    `sections`: other sources' decision records, each under its source's key (a gate's Triton kernels)."""
    out_dir = Path(shapes_path).parent
    art_dir = out_dir / "remedied"
    written = []
    artefacts = {}
    for module, decisions in result.by_module().items():
        # Decisions come from modules compiled for a plan with a configuration, in a session.
        assert plan is not None and config is not None and session is not None
        inp = read_input(module)
        rewrites = tuple(rw for d in decisions for rw in module_rewrites(d.kernel, d.shape, d.search.written))
        info: dict = {}
        if rewrites:
            data, _ = rewritten_first(inp, rewrites, config, session, plan)
            name = Path(module).with_suffix(".spv").name
            atomic_write(art_dir / name, data)
            written.append(str(art_dir / name))
            info["artefact"] = os.path.relpath(art_dir / name, out_dir)
        info["build_options"] = _build_options(decisions, plan)
        artefacts[module] = info
    doc = document(result, artefacts)
    doc.update({name: records for name, records in (sections or {}).items() if records})
    atomic_write(Path(shapes_path), dump(doc).encode())
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
