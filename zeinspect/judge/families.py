"""A library's shape decisions read by family and cause: the change that makes a family's shape
stay (as its authors write it, with where each spelling is read), what the change costs in
occupancy, and the ratchet line for what no shape cleans.  Pure functions of the searches
(judge.shapes) and of the builds' reports.

The kernels one template (or one source lambda, through a dispatch macro) makes usually need
one change: a family is `names.family_name`, and its members are grouped by their cause as
written (a spill, private arrays, stack calls), since each cause has its own remedy.

The spellings, and what reads each (docs/how-it-works.md, "The changes a fix names"):
- 256 registers for a SYCL kernel: the kernel property
  `sycl::ext::intel::experimental::grf_size<256>` (`grf_size_automatic` for IGC's choice),
  which the compiler writes as the image's `sycl-grf-size` property; the SYCL runtime adds
  `-ze-opt-large-register-file` (`-ze-intel-enable-auto-large-GRF-mode`) for it on every
  device (intel/llvm program_manager.cpp, appendCompileOptionsForGRFSizeProperties; zeinspect
  applies the same rule: inputs/sycl_image.options_for_target);
- the device compiler's `-ftarget-register-alloc-mode=pvc:large` (`:auto`): the driver writes it
  into the image's compile options, and the runtime applies it on pvc only
  (appendCompileOptionsFromImage: the one device name it knows);
- for an AOT build, ocloc's `-options` through the driver: `-Xs "-options
  -ze-opt-large-register-file"`, the spelling this very compiler accepted for the mode
  (levers.register_file.grf_spelling establishes it by a probe compile);
- OpenCL C: the build option `-cl-intel-256-GRF-per-thread` (or the IGC spelling above);
- a sub-group size: `[[sycl::reqd_sub_group_size(N)]]` (SYCL 2020), OpenCL C's
  `__attribute__((intel_reqd_sub_group_size(N)))` (cl_intel_required_subgroup_size); both
  become SPIR-V's `OpExecutionMode SubgroupSize N`, the rewrite the search compiled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import names
from ..model import CAUSES, GrfMode, KernelReport, Status
from ..occupancy import of
from .shapes import Search

SYCL_GRF = {
    GrfMode.LARGE: ("the kernel property sycl::ext::intel::experimental::grf_size<256>",
                    "-ftarget-register-alloc-mode=pvc:large", "-ze-opt-large-register-file"),
    GrfMode.AUTO: ("the kernel property sycl::ext::intel::experimental::grf_size_automatic",
                   "-ftarget-register-alloc-mode=pvc:auto", "-ze-intel-enable-auto-large-GRF-mode"),
}
OPENCL_GRF = {GrfMode.LARGE: "-cl-intel-256-GRF-per-thread", GrfMode.AUTO: "-cl-intel-enable-auto-large-GRF-mode"}


@dataclass
class Member:
    """One kernel of one image: its search, and its cause as written."""

    image: str
    search: Search
    cause: str | None
    as_written: dict[str, KernelReport] = field(default_factory=dict)
    """Target -> its report as written (the audit's)."""
    private_arrays: list[tuple[int, bool | None]] = field(default_factory=list)
    """(bytes, indexed by a value known only at run time: True, by constants: False, unknown:
    None) of each private array its code declares (inputs.spirv.private_arrays)."""
    callees: list[str] = field(default_factory=list)
    """Functions it calls that IGC keeps as calls (stack calls), where the module says which."""

    @property
    def kernel(self) -> str:
        return self.search.kernel

    @property
    def chosen(self) -> Any:
        winner = self.search.winner
        return winner.shape if winner is not None else None

    @property
    def after(self) -> dict[str, KernelReport]:
        """Target -> its report in the chosen shape."""
        winner = self.search.winner
        return {c.target: c.report for c in winner.cells if c.report is not None} if winner is not None else {}


@dataclass
class Family:
    """The members of one family with one cause, and the change that cleans (or does not)."""

    name: str
    cause: str
    members: list[Member] = field(default_factory=list)

    @property
    def shapes(self) -> list[Any]:
        return list(dict.fromkeys(m.chosen for m in self.members if m.chosen is not None))

    @property
    def shape(self) -> Any:
        """The shape every member chose, or None when they differ (or none builds everywhere)."""
        chosen = self.shapes
        return chosen[0] if len(chosen) == 1 and all(m.chosen is not None for m in self.members) else None

    @property
    def cleaned(self) -> list[Member]:
        return [m for m in self.members if m.search.cleans]

    @property
    def cleans(self) -> bool:
        return len(self.cleaned) == len(self.members)

    def targets(self) -> list[str]:
        return list(dict.fromkeys(t for m in self.members for t in m.as_written))

    def scratch(self, target: str, after: bool) -> int:
        """The most scratch a member uses on `target` (as written, or in its chosen shape)."""
        reports = [(m.after if after else m.as_written).get(target) for m in self.members]
        return max((r.shown_scratch_bytes for r in reports if r is not None and r.status is Status.OK), default=0)

    def occupancy(self, target: str) -> tuple[int | None, int | None, str | None]:
        """(hardware threads per EU as written, in the chosen shape, what limits them there),
        for the family's first member that builds on `target` both ways."""
        for m in self.members:
            before, after = m.as_written.get(target), m.after.get(target)
            if before is not None and after is not None and before.built and after.built:
                b, a = of(before), of(after)
                if b is not None and a is not None:
                    return b.threads_per_eu, a.threads_per_eu, a.limited_by
        return None, None, None

    def cost(self, targets: list[str]) -> str:
        """What the chosen shape costs in occupancy, per target where it changes it."""
        parts = []
        for t in targets:
            before, after, limiter = self.occupancy(t)
            if before is not None and after is not None and before != after:
                parts.append(f"{t} {before} -> {after} threads per EU (limited by {limiter})")
        return "; ".join(parts) or "no change in threads per EU"

    def to_json(self, targets: list[str]) -> dict:
        shape = self.shape
        return {"family": self.name, "cause": self.cause, "kernels": len(self.members), "cleaned": len(self.cleaned),
                "shape": shape.to_json() if shape is not None else None, "change": self.changes(),
                "cost": self.cost(targets), "reason": None if self.cleans else self.reason(),
                "targets": {t: {"scratch_before": self.scratch(t, after=False),
                                "scratch_after": self.scratch(t, after=True),
                                "threads_per_eu": dict(zip(("before", "after", "limited_by"), self.occupancy(t)))}
                            for t in targets},
                "members": [{"image": m.image, "kernel": m.kernel, "shape": m.chosen.to_json() if m.chosen else None,
                             "cleans": m.search.cleans, "private_arrays": [list(a) for a in m.private_arrays],
                             "callees": m.callees} for m in self.members]}

    def changes(self, opencl: bool = False) -> list[str]:
        """How to make the chosen shape stay, lever by lever, as the family's authors write it."""
        shape = self.shape
        if shape is None or not self.cleaned:
            return []
        written = self.members[0].search.written
        out = []
        grf = GrfMode(shape.grf)
        if grf in SYCL_GRF and not opencl:
            prop, alloc, option = SYCL_GRF[grf]
            out.append(f"{prop} (SYCL; the runtime adds {option} on every device), or "
                       f"{alloc} (the device compiler; the runtime applies it on pvc only), or for an AOT "
                       f"build -Xs \"-options {option}\"")
        elif grf in OPENCL_GRF:
            out.append(f"the build option {OPENCL_GRF[grf]} (OpenCL C)")
        size = shape.sub_group
        if size is not None and size != (written.sub_group or 0):
            if size == 0:
                out.append("drop the required sub-group size (the compiler chooses)")
            elif opencl:
                out.append(f"__attribute__((intel_reqd_sub_group_size({size})))")
            else:
                out.append(f"[[sycl::reqd_sub_group_size({size})]]")
        return out

    def reason(self) -> str:
        """Why no shape cleans the family: the ratchet line's reason."""
        if self.cause == "private_arrays":
            sizes = sorted({b for m in self.members for b, _ in m.private_arrays})
            dynamic = {d for m in self.members for _, d in m.private_arrays}
            index = ("indexed by values known only at run time" if True in dynamic else
                     "indexed by constants only" if dynamic == {False} else "its indexing not known")
            per_thread = max((r.private_bytes or 0 for m in self.members for r in m.as_written.values()), default=0)
            arrays = (f"private arrays of {', '.join(map(str, sizes))} bytes, {index}" if sizes
                      else f"private memory ({per_thread} bytes per thread)")
            return f"{arrays}: no register file or sub-group size removes them"
        if self.cause == "stack_calls":
            callees = sorted({c for m in self.members for c in m.callees})
            named = f"calls to {', '.join(names.readable(c) for c in callees[:3])}" if callees else "calls"
            imported = [c for c in callees if c.endswith(IMPORTED)]
            if imported and len(imported) == len(callees):
                return (f"{named} IGC keeps as stack calls: functions the module imports, linked when it is loaded, "
                        "which IGC cannot inline; no shape removes them")
            return (f"{named} IGC keeps as stack calls: no shape removes them; always_inline on the callee "
                    "(or a larger IGC SubroutineThreshold) would")
        if self.cause == "failed":
            return "does not build in any shape"
        return f"{CAUSES.get(self.cause, self.cause)}: no shape removes it"


IMPORTED = " (imported)"
"""How inputs.spirv.kept_calls marks a function the module declares without a body."""


def group(members: list[Member]) -> list[Family]:
    """Members by family and cause, the families with the most members first."""
    by: dict[tuple[str, str], Family] = {}
    for m in members:
        cause = m.cause or "failed"
        key = (names.family_name(m.kernel), cause)
        by.setdefault(key, Family(key[0], cause)).members.append(m)
    return sorted(by.values(), key=lambda f: (-len(f.members), f.name, f.cause))


@dataclass(frozen=True)
class RatchetLine:
    """A line of the ratchet file (judge.ratchet's native dialect) for what no shape cleans."""

    kernel: str
    """The kernel's symbol, or its family's name (spaces as `?`: a whitespace-separated line)."""
    private: int
    spill: int
    reason: str

    def render(self) -> str:
        return f"{self.kernel}  *  {self.private}  {self.spill}  # {self.reason}"


def ratchet_lines(families: list[Family]) -> list[RatchetLine]:
    """The lines for what no shape cleans, with the scratch it uses in its chosen shape (what the
    audit in recorded shapes builds): one line per family where every member is left with the
    same reason (the family's name matches them all), else one per kernel."""
    out = []
    for f in families:
        left = [m for m in f.members if not m.search.cleans]
        if not left:
            continue

        def most(members: list[Member], figure: str) -> int:
            return max((getattr(r, figure) or 0 for m in members for r in (m.after or m.as_written).values()
                        if r.status is Status.OK), default=0)

        if len(left) == len(f.members) and len(f.members) > 1:
            out.append(RatchetLine(f.name.replace(" ", "?"), most(left, "private_bytes"), most(left, "spill_bytes"),
                                   f.reason()))
        else:
            out += [RatchetLine(m.kernel, most([m], "private_bytes"), most([m], "spill_bytes"), f.reason())
                    for m in left]
    return out
