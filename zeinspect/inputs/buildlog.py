"""Read compiler build logs: IGC's spill warnings, PTSS errors and ocloc's per-device verdicts.

Both generations are recognised (docs/how-it-works.md#build-log):

    warning: kernel <mangled>  compiled SIMD16 allocated 128 regs and spilled around 1043     (IGC < 2.35)
    warning: in kernel 'name': compiled SIMD16 allocated 128 regs and spilled around 1420    (IGC >= 2.35)
    error: total scratch space exceeds HW supported limit for kernel <mangled>: N bytes (max permitted PTSS M bytes)
    error: in kernel 'name': total scratch space exceeds HW supported limit: N bytes (max permitted PTSS M bytes)
    Build succeeded for : dg2-g10.          Build failed for : dg2-g10 with error code: -11

with or without the `[device] ` prefix that icpx and NEO >= 26.31 put on every line.
Lines of an ocloc fat build that carry no prefix belong to the device named by the next
"Build ... for : <device>" line.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

MAX_LOG_LINE = 64 * 1024

_PREFIX = re.compile(r"^\[(?P<device>[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})\]\s+(?P<rest>.*)$")
_KERNEL_OLD = r"kernel (?P<kernel_old>\S+)"
_KERNEL_NEW = r"in kernel '(?P<kernel_new>[^']*)':"
_SPILL = re.compile(
    r"^warning:\s+(?:" + _KERNEL_NEW + r"|" + _KERNEL_OLD + r")\s+compiled\s+SIMD(?P<simd>\d+)\s+"
    r"allocated\s+(?P<regs>\d+)\s+regs\s+and\s+spilled\s+around\s+(?P<spilled>\d+)"
)
_PTSS_NEW = re.compile(
    r"^error:\s+" + _KERNEL_NEW + r"\s+total scratch space exceeds HW supported limit:\s+(?P<needed>\d+)\s+bytes\s+"
    r"\(max permitted PTSS (?P<limit>\d+) bytes\)"
)
_PTSS_OLD = re.compile(
    r"^error:\s+total scratch space exceeds HW supported limit for kernel (?P<kernel_old>[^:\s]+):\s+"
    r"(?P<needed>\d+)\s+bytes\s+\(max permitted PTSS (?P<limit>\d+) bytes\)"
)
# The VC back end's finalizer (ESIMD kernels): "Spill memory used = 2560 bytes for kernel K".
_VC_SPILL = re.compile(r"^Spill memory used = (?P<bytes>\d+) bytes for kernel (?P<kernel_old>\S+)")
_DROP_SIMD = re.compile(r"couldn't compile without exceeding max permitted PTSS")
_SPILL_NO_FIGURE = re.compile(r"\bspill", re.IGNORECASE)
_KERNEL_ANY = re.compile(r"in kernel '(?P<kernel_new>[^']*)'|\bkernel (?P<kernel_old>[A-Za-z_$][\w$.]*)")
_BUILD_FOR = re.compile(r"^Build (?P<verdict>succeeded|failed) for : (?P<device>[A-Za-z0-9_.:-]+?)"
                        r"(?:\.|\s+with error code:\s*(?P<code>-?\d+).*)?\s*$")


def build_verdict(line: str) -> tuple[str, str] | None:
    """("succeeded" | "failed", device) for an ocloc "Build ... for : <device>" line, with or
    without a `[device] ` prefix; None for any other line.  The one reader of these lines:
    the executor splits a fat build's log with it."""
    line = line.strip()
    prefixed = _PREFIX.match(line)
    m = _BUILD_FOR.match(prefixed["rest"] if prefixed else line)
    return (m["verdict"], m["device"]) if m else None


_SOURCE_ERROR = re.compile(r"^(?:\S*:)?\d+:\d+:\s+(?:fatal\s+)?error:\s")  # front end: file:line:col: error:
_BUILD_FAILED = re.compile(r"^Build failed with error code:\s*(?P<code>-?\d+)")


class LogEventKind(enum.StrEnum):
    SPILL = "spill"
    SPILL_UNKNOWN = "spill_unknown"
    """A line that speaks of a spill without a figure."""
    SCRATCH_OVERFLOW = "scratch_overflow"
    ERROR = "error"
    BUILD_FAILED = "build_failed"
    BUILD_SUCCEEDED = "build_succeeded"
    RETRY = "retry"


@dataclass(frozen=True)
class LogEvent:
    kind: LogEventKind
    line: str
    lineno: int
    target: str | None = None
    kernel: str | None = None
    simd: int | None = None
    regs: int | None = None
    spilled_regs: int | None = None
    needed_bytes: int | None = None
    limit_bytes: int | None = None
    code: int | None = None
    spill_bytes: int | None = None
    """For a spill line that gives bytes (the VC finalizer's), not registers."""


def _kernel(match: re.Match) -> str | None:
    groups = match.groupdict()
    return groups.get("kernel_new") if groups.get("kernel_new") is not None else groups.get("kernel_old")


def says_why(text: str) -> bool:
    """Whether a failed build's log gives the compiler's own reason: an error line or a scratch
    overflow.  A failure read from a batch's output or a dumping compile's is taken as the plain
    compile's only then (probes.executor); one that ends without a word of its own may be the
    batch's or the dump's doing, and is built again alone, plainly."""
    return _gives_reason(parse_log(text))


def _gives_reason(events: list[LogEvent]) -> bool:
    return any(e.kind in (LogEventKind.ERROR, LogEventKind.SCRATCH_OVERFLOW) for e in events)


def failure_exit(text: str) -> int | None:
    """The exit a failed build's own output gives it, as its compile alone ends: the low byte of
    the code in the verdict its output ends with ("Build failed with error code: -11", one build
    of an `ocloc multi` list; "Build failed for : <device> with error code: -11", a device of a
    fat build: 245), where the compiler says why (says_why).  None for output that ends
    otherwise (cut short), a code of 0, or no reason: the caller builds it again alone."""
    events = parse_log(text)
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    last = events[-1] if events else None
    if last is None or last.kind != LogEventKind.BUILD_FAILED or not last.code or last.lineno != lines[-1]:
        return None
    return last.code & 0xFF if _gives_reason(events) and last.code & 0xFF else None


def parse_log(text: str) -> list[LogEvent]:
    """Every event the log holds, each with the device it concerns when the log says."""
    events: list[LogEvent] = []
    pending: list[int] = []  # indices of unprefixed events waiting for a "Build ... for :" line
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw[:MAX_LOG_LINE].rstrip()
        if not line.strip():
            continue
        target = None
        body = line.strip()
        m = _PREFIX.match(body)
        if m:
            target, body = m.group("device"), m.group("rest").strip()
        event = _classify(body, line, lineno, target)
        if event is None:
            continue
        if event.kind in (LogEventKind.BUILD_SUCCEEDED, LogEventKind.BUILD_FAILED) and event.target is not None \
                and target is None:
            for i in pending:
                events[i] = _with_target(events[i], event.target)
            pending.clear()
        elif event.target is None:
            pending.append(len(events))
        events.append(event)
    return events


def _with_target(event: LogEvent, target: str) -> LogEvent:
    from dataclasses import replace

    return replace(event, target=target)


def _classify(body: str, line: str, lineno: int, target: str | None) -> LogEvent | None:
    m = _SPILL.match(body)
    if m:
        return LogEvent(LogEventKind.SPILL, line, lineno, target, _kernel(m), int(m["simd"]), int(m["regs"]), int(m["spilled"]))
    m = _VC_SPILL.match(body)
    if m:
        return LogEvent(LogEventKind.SPILL, line, lineno, target, _kernel(m), spill_bytes=int(m["bytes"]))
    m = _PTSS_NEW.match(body) or _PTSS_OLD.match(body)
    if m:
        return LogEvent(LogEventKind.SCRATCH_OVERFLOW, line, lineno, target, _kernel(m),
                        needed_bytes=int(m["needed"]), limit_bytes=int(m["limit"]))
    m = _BUILD_FOR.match(body)
    if m:
        kind = LogEventKind.BUILD_SUCCEEDED if m["verdict"] == "succeeded" else LogEventKind.BUILD_FAILED
        code = int(m["code"]) if m["code"] else None
        return LogEvent(kind, line, lineno, target or m["device"], code=code)
    m = _BUILD_FAILED.match(body)
    if m:
        return LogEvent(LogEventKind.BUILD_FAILED, line, lineno, target, code=int(m["code"]))
    if body == "Build succeeded.":
        return LogEvent(LogEventKind.BUILD_SUCCEEDED, line, lineno, target)
    if "[RetryManager]" in body:
        k = _KERNEL_ANY.search(body)
        return LogEvent(LogEventKind.RETRY, line, lineno, target, _kernel(k) if k else None)
    if _DROP_SIMD.search(body):
        k = _KERNEL_ANY.search(body)
        return LogEvent(LogEventKind.SPILL_UNKNOWN, line, lineno, target, _kernel(k) if k else None)
    if body.startswith(("error:", "Error:", "fatal error:")) or _SOURCE_ERROR.match(body):
        k = _KERNEL_ANY.search(body)
        return LogEvent(LogEventKind.ERROR, line, lineno, target, _kernel(k) if k else None)
    if body.startswith("warning:") and _SPILL_NO_FIGURE.search(body):
        # A spill warning in a form we do not know the figures of: still a finding.
        k = _KERNEL_ANY.search(body)
        return LogEvent(LogEventKind.SPILL_UNKNOWN, line, lineno, target, _kernel(k) if k else None)
    return None


# ocloc's own lines around a build, which say nothing about why it failed.
_BOILERPLATE = re.compile(r"^(?:Compilation from IR - skipping loading of FCL|Build (?:succeeded|failed)\b.*"
                          r"|Command was:.*|Build succeeded for : .*)$")


def compiler_lines(text: str, limit: int = 5) -> list[str]:
    """The compiler's own message lines, whichever stream and form it wrote them in (for a
    build that failed without an `error:` line, e.g. the SPIR-V reader's "InvalidModule:
    ..."), without ocloc's framing lines."""
    out = []
    for raw in text.splitlines():
        line = raw[:MAX_LOG_LINE].strip()
        m = _PREFIX.match(line)
        body = m.group("rest").strip() if m else line
        if body and not _BOILERPLATE.match(body):
            out.append(line)
            if len(out) >= limit:
                break
    return out


def kernel_matches(log_kernel: str | None, kernel: str) -> bool:
    """Old IGC names the mangled kernel, new IGC the demangled one: accept either."""
    if log_kernel is None:
        return False
    if log_kernel == kernel:
        return True
    from ..names import cxx_demangle

    if cxx_demangle(kernel) == log_kernel:
        return True
    # '_ZTSZ4mainE3fma' vs 'typeinfo name for main::fma': fall back to containment
    return kernel in log_kernel or log_kernel in kernel


def lines_for_kernel(text: str, kernel: str) -> list[str]:
    """The log lines that name this kernel (for the interactive card)."""
    out = []
    for raw in text.splitlines():
        m = _KERNEL_ANY.search(raw)
        if m and kernel_matches(_kernel(m), kernel):
            out.append(raw.strip()[:500])
    return out
