"""The audit: judge every (kernel, target) report against the ratchet file.

Like LLVM lit's result codes, each verdict knows whether it fails the gate:

  OVERFLOW  over the per-thread scratch cap, or over the target's shared local memory
            (a Triton config that cannot launch)                -> fails, whatever the ratchet says
  FAILED    did not build (a compiler error, crash or hang)     -> fails, whatever the ratchet says
  NEW       uses scratch memory and is not listed               -> fails
  GREW      uses more than its entry allows                     -> fails
  IMPROVED  an entry allows more than any kernel it matches uses: tighten it   -> fails under --strict
  STALE     an entry that matches no scratch user: remove it                   -> fails under --strict
  LISTED    uses scratch within its entry (or none, under an entry for others)  -> passes
  CLEAN     uses no scratch and is not listed                                  -> passes
  N/A       the image has a device requirement the target does not meet (an
            aspect, a sub-group size: never built there by the SYCL runtime)  -> passes, counted apart

OVERFLOW, NEW, GREW, LISTED and CLEAN judge one (kernel, target) report; IMPROVED and
STALE judge one ratchet line against the largest figures of every report it matches, so
an entry for all targets is not "improved" merely because some targets use less.

Loop traffic (a report's cost: scratch bytes per iteration of its innermost loop with any,
measured from IGC's ISA) is judged where it was measured:
- an entry with `loop=BYTES` allows that much: more is GREW, even when the bytes are the
  same (a spill that moved into a loop);
- the gate's loop rule (`loop_bound: N`, opt-in; the default judges any scratch, as the
  project's own rule asks) passes a scratch user that moves at most N bytes per loop
  iteration, listed or not (LISTED, saying why).  A report whose cost was not measured (the
  runtime probe, a Triton kernel, a native image its compiler cannot disassemble) is judged
  on its bytes.

A shipped kernel is judged on the path the runtime takes on each target (probes.paths): a JIT
build made on a target its native image serves, to compare the two, is not judged for scratch
(judge.paths checks every path against the gate's intent rules).

The time rule (`time_share_bound: PERCENT` with a `profile:`, opt-in) is judge.profile's:
NEW and GREW pass (LISTED, saying why) while, together, they cover at most that share of
the profiled GPU time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import names
from ..model import WHOLE_MODULE, Compiler, KernelReport, Status, Verdict, grf_bytes_for_ip
from .ratchet import Entry, Ratchet, find_entry, kernel_matches


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    detail: str | None
    """The one-line finding; None for CLEAN and N/A, whose text follows from the report
    (a library's 100,000 passing pairs need no 100,000 stored sentences)."""
    report: KernelReport | None = None
    entry: Entry | None = None

    @property
    def message(self) -> str:
        if self.detail is not None:
            return self.detail
        assert self.report is not None
        if self.verdict is Verdict.NOT_APPLICABLE:
            return f"{_where(self.report)}: n/a: {self.report.reason}"
        return f"{_where(self.report)} uses no scratch memory"

    def fails(self, strict: bool) -> bool:
        return self.verdict.fails_strict if strict else self.verdict.fails


@dataclass
class AuditResult:
    ratchet_path: str
    judgements: list[Judgement] = field(default_factory=list)
    kernels: int = 0
    targets: int = 0
    scratch_kernels: int = 0
    listed_kernels: int = 0
    not_applicable: int = 0
    """(kernel, target) pairs the SYCL runtime would never build: counted apart, never findings."""
    unchecked_requirements: int = 0
    """(kernel, target) pairs audited with device requirements assumed met (not decidable offline)."""

    def failures(self, strict: bool) -> list[Judgement]:
        return [j for j in self.judgements if j.fails(strict)]

    def passed(self, strict: bool) -> bool:
        return not self.failures(strict)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for j in self.judgements if j.verdict is verdict)


def measured(report: KernelReport) -> tuple[int, int]:
    """(private, spill) bytes per hardware thread the gate compares with an entry."""
    private = report.private_bytes or 0
    if report.spill_bytes is not None:
        spill = report.spill_bytes
    elif report.log_spilled_regs:
        spill = report.log_spilled_regs * (grf_bytes_for_ip(report.ip) if report.ip else 32)
    else:
        spill = 0
    if not private and not spill and report.scratch_space_bytes:
        # The compiler reserved scratch the driver's figures do not show: count it as private.
        private = report.scratch_space_bytes
    return private, spill


def loop_traffic(report: KernelReport) -> int | None:
    """Scratch bytes per iteration of the report's innermost loop with any (0: touched outside
    loops only); None where its cost was not measured, or where the dump's messages miss a
    kind of scratch the build uses: private memory on Xe-LP and Xe-HPG is read and written by
    messages the ISA does not tell from other memory, so a kernel there would look free of
    loop traffic that it has (inputs.isa).  A native image's cost counts its spills only where
    it has no private memory."""
    cost = report.cost
    if not isinstance(cost, dict):
        return None
    value = cost.get("per_iteration_bytes")
    found = cost.get("messages")
    messages: dict = found if isinstance(found, dict) else {}
    if "write" in messages or "read" in messages:
        # A native image's code (inputs.isa.read_disasm): its messages are not told apart, so a
        # kernel with private memory may have some the code reading does not see (Xe-HPG's).
        if (report.private_bytes or 0) > 0 or not (messages.get("write") or messages.get("read")):
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if (report.private_bytes or 0) > 0 and not messages.get("private"):
        return None
    if (report.spill_bytes or 0) > 0 and not (messages.get("spill") or messages.get("fill")):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _where(report: KernelReport) -> str:
    return f"{names.short(report.kernel)} on {report.target} ({report.input})"


def most_loop_traffic(reports: list[KernelReport]) -> int | None:
    """The most loop traffic among reports, when every one of them was measured (else None:
    an entry's loop figure is only tightened or written from a complete measure)."""
    loops = [loop_traffic(r) for r in reports]
    return max(loops) if loops and all(x is not None for x in loops) else None  # type: ignore[type-var]


def judge(report: KernelReport, ratchet: Ratchet, compilers: list[Compiler], loop_bound: int | None = None
          ) -> Judgement:
    if report.status is Status.NOT_APPLICABLE:
        return Judgement(Verdict.NOT_APPLICABLE, None, report)
    entry = find_entry(ratchet, report, compilers)
    if report.status is not Status.OK:
        detail = f": {report.reason}" if report.reason else ""
        if report.status is Status.SCRATCH_OVERFLOW:
            return Judgement(Verdict.OVERFLOW, f"{_where(report)} is over the per-thread scratch cap{detail}",
                             report, entry)
        if report.status in (Status.SLM_OVERFLOW, Status.WG_OVERFLOW):  # cannot launch: judged as an overflow
            return Judgement(Verdict.OVERFLOW, f"{_where(report)} cannot launch{detail}", report, entry)
        return Judgement(Verdict.FAILED, f"{_where(report)} did not build{detail}", report, entry)
    private, spill = measured(report)
    line = f"{ratchet.path} line {entry.lineno}" if entry else ""
    if not report.uses_scratch:
        if entry is not None:
            return Judgement(Verdict.LISTED, f"{_where(report)} uses no scratch memory ({line} covers it)",
                             report, entry)
        return Judgement(Verdict.CLEAN, None, report)
    figures = f"private {private}, spill {spill} bytes per thread"
    if report.scratch_unknown:
        figures = "spills of unknown size (the build log gives no figure)"
    loop = loop_traffic(report)
    if loop_bound is not None and loop is not None and loop <= loop_bound:
        where = "outside loops only" if loop == 0 else f"{loop} bytes per loop iteration"
        return Judgement(Verdict.LISTED, f"{_where(report)} uses {figures}, touched {where}: within the gate's "
                         f"loop bound of {loop_bound} bytes", report, entry)
    if entry is None:
        why = ""
        if loop_bound is not None:
            why = (f"; it moves {loop} bytes per loop iteration, over the gate's loop bound of {loop_bound}"
                   if loop is not None else "; its loop traffic could not be measured (no ISA of a build from "
                   "source, or private memory the ISA does not show): judged on its bytes")
        return Judgement(Verdict.NEW, f"{_where(report)} uses scratch memory ({figures}) and is not listed in "
                         f"{ratchet.path}{why}", report)
    if report.scratch_unknown:
        return Judgement(Verdict.LISTED, f"{_where(report)}: {figures}; listed at {line}", report, entry)
    if private > entry.private or spill > entry.spill:
        return Judgement(Verdict.GREW, f"{_where(report)} uses {figures}, more than {line} allows "
                         f"({entry.private} private, {entry.spill} spill)", report, entry)
    if entry.loop is not None and loop is not None and loop > entry.loop:
        return Judgement(Verdict.GREW, f"{_where(report)} moves {loop} bytes of scratch per loop iteration, more "
                         f"than {line} allows (loop={entry.loop}; its bytes, {figures}, are within it)",
                         report, entry)
    return Judgement(Verdict.LISTED, f"{_where(report)} uses {figures}, within {line} "
                     f"({entry.private} private, {entry.spill} spill)", report, entry)


def audit(reports: list[KernelReport], ratchet: Ratchet, compilers: list[Compiler], *,
          loop_bound: int | None = None) -> AuditResult:
    result = AuditResult(ratchet_path=ratchet.path)
    # What the runtime does not run on a target (a JIT path built there to be compared with its
    # native image: probes.paths) is not judged for scratch; judge.paths checks it against intent.
    reports = [r for r in reports if r.path_taken is not False]
    for report in reports:
        result.judgements.append(judge(report, ratchet, compilers, loop_bound))
    # Entries: stale when they match no kernel that uses scratch memory, improved when
    # every kernel they match uses less than they allow.
    for entry in ratchet.entries:
        matched = [j for j in result.judgements if j.entry is entry and j.report is not None]
        users = [r for j in matched if (r := j.report) is not None and r.uses_scratch and r.status is Status.OK]
        where = f"{ratchet.path} line {entry.lineno} ({entry.kernel} {entry.targets})"
        if any(j.verdict in (Verdict.GREW, Verdict.OVERFLOW, Verdict.FAILED) for j in matched) or \
                any(r.scratch_unknown for r in users):
            continue
        if not users:
            absent = not any(kernel_matches(entry.kernel, r.kernel) for r in reports)
            why = ("names a kernel that is not in the audited builds" if absent
                   else "matches no kernel that uses scratch memory")
            result.judgements.append(Judgement(Verdict.STALE, f"{where} {why}: remove this line", None, entry))
            continue
        most_private = max(measured(r)[0] for r in users)
        most_spill = max(measured(r)[1] for r in users)
        most_loop = most_loop_traffic(users)
        looser = entry.loop is not None and most_loop is not None and most_loop < entry.loop
        if (most_private, most_spill) != (entry.private, entry.spill) or looser:
            allows, uses, to = ((f", loop={entry.loop}", f" and loop={most_loop}", f" loop={most_loop}") if looser
                                else ("", "", ""))
            result.judgements.append(Judgement(
                Verdict.IMPROVED, f"{where} allows {entry.private} private, {entry.spill} spill bytes{allows}; the "
                f"kernels it matches use at most {most_private} and {most_spill}{uses}: tighten it to "
                f"`{most_private} {most_spill}{to}`", None, entry))
    kernels = {r.identity for r in reports if r.kernel != WHOLE_MODULE}
    result.kernels = len(kernels)
    result.targets = len({r.target for r in reports})
    result.not_applicable = sum(1 for r in reports if not r.applicable)
    result.unchecked_requirements = sum(1 for r in reports if r.applicable and r.unchecked_requirements)
    scratch_users = {r.identity for r in reports if r.applicable and (r.uses_scratch or r.status is not Status.OK)}
    result.scratch_kernels = len(scratch_users)
    result.listed_kernels = len({j.report.identity for j in result.judgements
                                 if j.report is not None and j.entry is not None and j.report.identity in scratch_users})
    return result
