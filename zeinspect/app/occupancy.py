"""`zeinspect occupancy`: per kernel and target, what its register file, SIMD width and shared
local memory cost an Xe-core, and what-if answers for another work-group size, register count
or SLM size, computed from the figures the compiler wrote (no recompile: zeinspect.occupancy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import KernelReport
from ..occupancy import Occupancy, limits, of
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from .inspect import InspectResult, probe_paths
from .outcome import Outcome


@dataclass(frozen=True)
class WhatIf:
    wg_size: int | None = None
    slm_bytes: int | None = None
    grf_count: int | None = None

    @property
    def asked(self) -> bool:
        return any(v is not None for v in (self.wg_size, self.slm_bytes, self.grf_count))


@dataclass
class OccupancyRow:
    report: KernelReport
    occupancy: Occupancy | None
    what_if: Occupancy | None = None


@dataclass
class OccupancyResult:
    inspected: InspectResult
    what_if: WhatIf
    rows: list[OccupancyRow] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        return self.inspected.outcome


def occupancy(paths: list[str], config: Settings, what_if: WhatIf, *,
              progress: Progress | None = None, session: Session | None = None) -> OccupancyResult:
    got = probe_paths(paths, config, progress=progress, session=session)
    out = OccupancyResult(got, what_if)
    for r in got.collection.reports:
        if not r.applicable:
            continue
        base = of(r)  # as built: its required (or launched) work-group; the what-if is beside it
        changed = None
        if what_if.asked and r.ip and r.grf and r.simd:
            grf = what_if.grf_count or r.grf
            changed = limits(r.ip, grf_count=grf, simd=r.simd,
                             slm_bytes=what_if.slm_bytes if what_if.slm_bytes is not None else r.slm_bytes or 0,
                             wg_size=what_if.wg_size or r.work_group_size,
                             eu_thread_count=r.eu_thread_count if grf == r.grf else None)
        out.rows.append(OccupancyRow(r, base, changed))
    return out
