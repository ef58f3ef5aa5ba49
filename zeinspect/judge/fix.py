"""The fix loop's record: each kernel's decision, the SYCL spelling of its shape, and the
document `zeinspect fix --write` records (judge.shapes_file's schema).  Pure functions of the
searches and of the verifying builds, which app.fix runs.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from ..levers import MODULE_LEVERS
from ..levers.base import ShapeBase, spell
from ..model import KernelReport, Status
from .equivalence import Equivalence
from .shapes import Search
from .shapes_file import SCHEMA


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

    def by_module(self) -> dict[str, list[Decision]]:
        """Module path -> its decisions, in the order they were made."""
        out: dict[str, list[Decision]] = {}
        for d in self.decisions:
            out.setdefault(d.search.input, []).append(d)
        return out


def decide(search: Search) -> Decision:
    """The search's winner, or the kernel as written when no shape builds everywhere."""
    winner = search.winner
    return Decision(search=search, shape=winner.shape if winner is not None else search.written)


def _figures(report: KernelReport) -> dict:
    return {"status": report.status.value, "simd": report.simd, "grf": report.grf,
            "spill_bytes": report.spill_bytes, "private_bytes": report.private_bytes}


def document(result: FixResult, artefacts: dict | None) -> dict:
    """The zeinspect.shapes/1 document of the decisions; `artefacts`: module -> what was written
    beside the record for it (its remedied SPIR-V, the build options its decisions need)."""
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
