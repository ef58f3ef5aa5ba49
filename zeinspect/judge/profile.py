"""Which spills cost time: a run's profile (inputs.profile) joined with the reports, kernel by
kernel, ranked by their share of the profiled kernel time (the profile's other device time,
copies, fills, barriers, is split apart: `device_split`); and the user's own driver's figures
(unitrace's Kernel Properties) checked against the reports (`driver_check`).  Pure functions.

Names are matched the way people name kernels: a Triton or Inductor kernel as launched (its
report's name before the `[values]` of its specialization), a SYCL kernel by its mangled name,
its demangled name, its readable and its short name (names.forms), an OpenCL kernel by name.
Every trace kernel is a row (one without a report says so, with its share), and every
report's kernel without time is listed: nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .. import names
from ..inputs.profile import Profile
from ..model import KernelReport, Status, Verdict
from .audit import Judgement


@dataclass(frozen=True)
class Figures:
    """What the join reads of a report (a KernelReport, or its JSON as a saved document holds it)."""

    kernel: str
    target: str
    scratch: int
    status: str
    cost: dict | None
    cause: str | None
    simd: int | None = None
    spill: int | None = None
    private: int | None = None
    """What zeKernelGetProperties' privateMemSize would say (the driver's figure)."""
    grf: int | None = None

    @property
    def built(self) -> bool:
        return self.status == Status.OK

    @classmethod
    def of(cls, report: KernelReport | dict) -> Figures:
        if isinstance(report, dict):
            return cls(report["kernel"], report["target"], report.get("scratch_bytes") or
                       report.get("scratch_space_bytes") or 0, str(report.get("status")), report.get("cost"),
                       report.get("cause"), report.get("simd"), report.get("spill_bytes"),
                       report["driver_private_bytes"] if report.get("driver_private_bytes") is not None
                       else report.get("private_bytes"), report.get("grf"))
        private = report.driver_private_bytes if report.driver_private_bytes is not None else report.private_bytes
        return cls(report.kernel, report.target, report.shown_scratch_bytes, report.status, report.cost,
                   report.cause, report.simd, report.spill_bytes, private, report.grf)


@dataclass(frozen=True)
class Mismatch:
    """A figure the user's own driver reported for a kernel (unitrace's Kernel Properties) that
    none of zeinspect's reports of it on the profile's device gives: zeinspect is wrong, or the
    driver built it otherwise (another compiler, other options, another image)."""

    kernel: str
    target: str
    figure: str
    driver: int
    zeinspect: tuple[int | None, ...]

    def describe(self) -> str:
        ours = ", ".join("unknown" if v is None else str(v) for v in self.zeinspect)
        return (f"{names.short(self.kernel)} on {self.target}: the driver reported {self.figure} {self.driver}, "
                f"zeinspect {ours}")


DRIVER_FIGURES = (("SIMD", "simd", "simd"), ("spill bytes", "spill_bytes", "spill"),
                  ("private bytes", "private_bytes", "private"), ("registers", "registers", "grf"))
"""(what it is called, DriverFigures' field, Figures' field): the Kernel Properties compared."""


@dataclass
class ProfiledKernel:
    name: str
    """As the trace names it."""
    seconds: float
    launches: int
    share: float
    """Of the profiled kernel time, 0..1."""
    reports: list[Figures] = field(default_factory=list)

    def scratch(self, target: str) -> int:
        return max((r.scratch for r in self.reports if r.target == target and r.built), default=0)

    def overflows(self, target: str) -> bool:
        """Over the per-thread scratch cap there: the most scratch of all, and no build."""
        return any(r.status == Status.SCRATCH_OVERFLOW for r in self.reports if r.target == target)

    def uses_scratch(self, target: str) -> bool:
        return bool(self.scratch(target)) or self.overflows(target)

    def status(self, target: str) -> str | None:
        """Where no specialization or image built there: the status of the first that did not."""
        mine = [r for r in self.reports if r.target == target]
        return None if not mine or any(r.built for r in mine) else mine[0].status

    def in_loops(self, target: str) -> bool:
        return any(r.cost is not None and r.cost.get("in_loops") for r in self.reports if r.target == target)

    def loop_bytes(self, target: str) -> int | None:
        costs = [r.cost["per_iteration_bytes"] for r in self.reports if r.target == target and r.cost is not None]
        return max(costs) if costs else None

    def cause(self, target: str) -> str | None:
        return next((r.cause for r in self.reports if r.target == target and r.cause is not None), None)


@dataclass
class ProfileJoin:
    profile: Profile
    kernels: list[ProfiledKernel] = field(default_factory=list)
    """Every kernel of the trace, the most time first."""
    unprofiled: list[str] = field(default_factory=list)
    """Kernels with reports and no time in the trace."""
    targets: list[str] = field(default_factory=list)

    @property
    def matched(self) -> list[ProfiledKernel]:
        return [k for k in self.kernels if k.reports]

    @property
    def unmatched(self) -> list[ProfiledKernel]:
        return [k for k in self.kernels if not k.reports]

    def share_with_scratch(self, target: str) -> float:
        return sum(k.share for k in self.kernels if k.uses_scratch(target))

    def share_in_loops(self, target: str) -> float:
        return sum(k.share for k in self.kernels if k.uses_scratch(target) and k.in_loops(target))

    def headline(self, target: str) -> str:
        loops = self.share_in_loops(target)
        measured = any(r.cost is not None for k in self.kernels for r in k.reports if r.target == target)
        return (f"{100 * self.share_with_scratch(target):.1f} % of profiled kernel time is in kernels that use scratch "
                f"on {target}" + (f" ({100 * loops:.1f} % with scratch traffic inside loops)" if measured else
                                  " (loop traffic not measured)"))

    def device_split(self) -> dict:
        """The profile's device time in four parts that add up to it: kernels with a report,
        kernels with none (named), device work that is not a kernel (by kind), and time no
        row accounts for (seconds)."""
        p = self.profile
        return {"total": p.device_seconds,
                "kernels_with_report": sum(k.seconds for k in self.matched),
                "kernels_without_report": sum(k.seconds for k in self.unmatched),
                "not_kernels": p.other_by_kind(),
                "unattributed": p.unattributed_seconds}

    def driver_target(self, targets: list[str]) -> tuple[str | None, str]:
        """The target the profile's device is, among the run's, and how that was decided."""
        from ..hardware import PRODUCTS

        device = self.profile.device
        if device:
            named = [t for t in targets if t in PRODUCTS and PRODUCTS[t].name == device]
            if len(named) == 1:
                return named[0], f"the profile's device, {device}"
            if not named:
                return None, f"the profile's device, {device}, is none of the targets ({', '.join(targets)})"
            return None, f"the profile's device, {device}, could be any of {', '.join(named)}"
        if len(targets) == 1:
            return targets[0], "the run's only target (the profile does not name its device)"
        return None, "the profile does not name its device, and the run has several targets"

    def driver_check(self) -> tuple[list[Mismatch], str]:
        """unitrace's Kernel Properties (the user's driver on a real GPU) against zeinspect's
        reports of the same kernels on that device: every figure that differs, and which target
        it was compared on (or why none)."""
        props = self.profile.properties
        if not props:
            return [], "the profile has no Kernel Properties table"
        target, how = self.driver_target(self.targets)
        if target is None:
            return [], how
        by_name = {k.name: k for k in self.kernels}
        out = []
        for name, driver in props.items():
            mine = [r for r in by_name[name].reports if r.target == target] if name in by_name else []
            if not mine:
                continue
            for label, theirs, ours in DRIVER_FIGURES:
                value = getattr(driver, theirs)
                if value is None:
                    continue  # the driver said ANY or unknown
                seen = tuple(dict.fromkeys(v for r in mine if (v := getattr(r, ours)) is not None))
                if seen and value not in seen:  # zeinspect knows the figure and says otherwise
                    out.append(Mismatch(name, target, label, value, seen))
        return out, how

    def proxy_note(self) -> str | None:
        """Where the trace was taken on another GPU, what its shares are."""
        if not self.profile.foreign:
            return None
        return (f"the profile was taken on {self.profile.device}: its time shares are a proxy for an Intel GPU's "
                "(the same Triton and Inductor kernels, another device's times)")

    def share_of(self, kernels: set[str]) -> float:
        """The profiled time of the kernels whose reports name these symbols."""
        return sum(k.share for k in self.kernels if any(r.kernel in kernels for r in k.reports))


def keys(symbol: str) -> set[str]:
    """Every name a profile may give the kernel of a report: its spellings, and a Triton
    specialization's kernel name (its report's name before `[values]`)."""
    base = symbol.split("[", 1)[0] if symbol.endswith("]") and "[" in symbol else symbol
    return {form for s in {symbol, base}
            for form in (s, names.cxx_demangle(s), names.demangled(s), names.readable(s), names.short(s))}


def join(profile: Profile, reports: list[KernelReport] | list[dict]) -> ProfileJoin:
    """Each of the profile's kernels with the reports of its name (KernelReports, or their JSON)."""
    figures = [Figures.of(r) for r in reports]
    index: dict[str, list[Figures]] = {}
    for r in figures:
        for key in keys(r.kernel):
            index.setdefault(key, []).append(r)
    total = profile.total or 1.0
    out = ProfileJoin(profile, targets=list(dict.fromkeys(r.target for r in figures)))
    hit: set[str] = set()
    for name, timed in sorted(profile.kernels.items(), key=lambda kv: -kv[1].seconds):
        found = index.get(name) or index.get(names.demangled(name)) or []
        hit.update(r.kernel for r in found)
        out.kernels.append(ProfiledKernel(name, timed.seconds, timed.launches, timed.seconds / total, list(found)))
    out.unprofiled = sorted({r.kernel for r in figures} - hit)
    return out


def time_share_rule(judgements: list[Judgement], joined: ProfileJoin, bound: float) -> tuple[list[Judgement], float]:
    """The gate's time rule: the kernels that newly use scratch (NEW) or use more (GREW) fail
    only when, together, they cover more than `bound` % of the profiled GPU time; under it,
    each passes (LISTED), its finding saying what it covers.  Returns the judgements so
    judged and the share of those kernels (0..1)."""
    grown = [j for j in judgements if j.verdict in (Verdict.NEW, Verdict.GREW) and j.report is not None]
    share = joined.share_of({j.report.kernel for j in grown if j.report is not None})
    out = []
    for j in judgements:
        if j.verdict not in (Verdict.NEW, Verdict.GREW) or j.report is None:
            out.append(j)
        elif 100 * share > bound:
            detail = f"{j.message} (with the others, {100 * share:.1f} % of the profiled time, over {bound:g} %)"
            out.append(dataclasses.replace(j, detail=detail))
        else:
            own = joined.share_of({j.report.kernel})
            detail = (f"{j.message}; passes the time rule: it covers {100 * own:.2f} % of the profiled time "
                      f"({100 * share:.2f} % with every new or grown scratch user, at most {bound:g} %)")
            out.append(dataclasses.replace(j, verdict=Verdict.LISTED, detail=detail))
    return out, share
