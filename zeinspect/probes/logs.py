"""The log probe: kernel reports from an existing build log, with nothing compiled.

For gating AOT builds (icpx, ocloc fat builds) whose binaries are not at hand.  A log
names the device of each line either by a `[device]` prefix or by the ocloc verdict that
follows it; a spill warning gives the registers spilled (bytes are unknown, estimated as
registers x register size); the PTSS error gives needed and limit bytes; a failure line
without a kernel makes a `*` report for that device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..hardware import ip_for_name
from ..inputs.buildlog import LogEventKind, parse_log
from ..inputs.files import read_file
from ..levers import DEFAULT_SHAPE
from ..model import WHOLE_MODULE, Compiler, KernelReport, Source, Status, grf_bytes_for_ip, scratch_limit_for_ip

MAX_LOG_BYTES = 256 * 1024 * 1024


def ip_for(target: str | None, compilers: Sequence[Compiler] = ()) -> str | None:
    if target is None:
        return None
    for c in compilers:
        ips = c.ips(target)
        if len(ips) == 1:
            return ips[0]
    return ip_for_name(target)


def read_log(path: str) -> str:
    return read_file(path, "build log", MAX_LOG_BYTES).decode("utf-8", "replace")


def reports_from_log(path: str, text: str, *, default_target: str | None = None,
                     compilers: Sequence[Compiler] = ()) -> list[KernelReport]:
    events = parse_log(text)
    reports: dict[tuple[str, str], KernelReport] = {}
    failed_targets: dict[str, str] = {}
    for ev in events:
        target = ev.target or default_target or "unknown"
        ip = ip_for(target, compilers)
        limit = scratch_limit_for_ip(ip) if ip else None
        base: dict[str, Any] = dict(input=path, target=target, ip=ip, compiler=None, shape=DEFAULT_SHAPE, source=Source.LOG,
                    scratch_limit_bytes=limit, log=(ev.line.strip()[:500],))
        if ev.kind == LogEventKind.SPILL and ev.kernel:
            grf_bytes = grf_bytes_for_ip(ip) if ip else 32
            if ev.spill_bytes is not None:  # the VC finalizer gives bytes
                spill, note = ev.spill_bytes, f"from the build log: {ev.spill_bytes} bytes of spill memory"
            else:
                spill = (ev.spilled_regs or 0) * grf_bytes
                note = (f"from the build log: {ev.spilled_regs} registers spilled; bytes estimated as "
                        f"{ev.spilled_regs} x {grf_bytes}" + ("" if ip else " (register size unknown: 32 assumed)"))
            key = (ev.kernel, target)
            if key in reports and reports[key].status is not Status.OK:
                continue
            reports[key] = KernelReport(kernel=ev.kernel, status=Status.OK, simd=ev.simd, grf=ev.regs,
                                        spill_bytes=spill, private_bytes=None,
                                        log_spilled_regs=ev.spilled_regs, notes=(note,), **base)
        elif ev.kind == LogEventKind.SPILL_UNKNOWN:
            key = (ev.kernel or WHOLE_MODULE, target)
            if key not in reports:
                reports[key] = KernelReport(kernel=ev.kernel or WHOLE_MODULE, status=Status.OK, scratch_unknown=True,
                                            notes=("the build log reports spills without a figure: bytes unknown",),
                                            **base)
        elif ev.kind == LogEventKind.SCRATCH_OVERFLOW:
            reports[(ev.kernel or WHOLE_MODULE, target)] = KernelReport(
                kernel=ev.kernel or WHOLE_MODULE, status=Status.SCRATCH_OVERFLOW, needed_scratch_bytes=ev.needed_bytes,
                reason=ev.line.strip()[:500], **{**base, "scratch_limit_bytes": ev.limit_bytes})
        elif ev.kind == LogEventKind.ERROR and ev.target is not None:
            failed_targets.setdefault(target, ev.line.strip()[:500])
        elif ev.kind == LogEventKind.BUILD_FAILED:
            failed_targets.setdefault(target, ev.line.strip()[:500])
    for target, line in failed_targets.items():
        if any(t == target and r.status is not Status.OK for (_, t), r in reports.items()):
            continue
        ip = ip_for(target, compilers)
        reports[(WHOLE_MODULE, target)] = KernelReport(
            input=path, kernel=WHOLE_MODULE, target=target, ip=ip, compiler=None, shape=DEFAULT_SHAPE,
            status=Status.BUILD_FAILED, source=Source.LOG, reason=line, log=(line,))
    return list(reports.values())
