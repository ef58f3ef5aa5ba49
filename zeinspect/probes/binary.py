"""The binary probe: reports from device binaries that already exist (zebins, fat binaries,
legacy patch-token binaries), with no compiler involved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import names
from ..errors import FormatError, InputError
from ..inputs import Input
from ..inputs.fatbin import read_members
from ..inputs.kinds import InputKind
from ..inputs.patchtokens import is_patchtoken_binary, read_patchtoken_binary
from ..inputs.spirv import is_spirv
from ..inputs.zebin import is_zebin, read_zebin
from ..levers import DEFAULT_SHAPE
from ..model import (
    SCRATCH_LIMIT_XE_HP,
    SCRATCH_LIMIT_XE_LP,
    Compiler,
    KernelFigures,
    KernelReport,
    Source,
    Status,
    scratch_limit_for_ip,
    slot_overflow,
)
from ..occupancy import cannot_launch
from ..toolchain.targets import TargetPlan, name_for_ip


@dataclass
class BinaryResult:
    reports: list[KernelReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing_targets: dict[str, list[str]] = field(default_factory=dict)
    """input path -> the planned targets it holds no image for."""


def _report(path: str, target: str, ip: str | None, fig: KernelFigures, *, xe_hp: bool | None,
            notes: tuple[str, ...]) -> KernelReport:
    limit = scratch_limit_for_ip(ip) if ip else (
        SCRATCH_LIMIT_XE_HP if xe_hp else (SCRATCH_LIMIT_XE_LP if xe_hp is False else None))
    status, needed, reason = Status.OK, None, slot_overflow(fig.largest_scratch_slot, limit)
    if reason is not None:
        status, needed = Status.SCRATCH_OVERFLOW, fig.largest_scratch_slot
    work_group = math.prod(fig.required_work_group_size) if fig.required_work_group_size else None
    if status is Status.OK and ip and work_group and fig.grf and fig.simd and (why := cannot_launch(
            ip, fig.grf, fig.simd, work_group, "requires")) is not None:
        status, reason = Status.WG_OVERFLOW, why
    return KernelReport(
        input=path, kernel=fig.name, target=target, ip=ip, compiler=None, shape=DEFAULT_SHAPE, status=status,
        source=Source.BINARY, simd=fig.simd, grf=fig.grf, spill_bytes=fig.spill_bytes,
        private_bytes=fig.private_bytes, slm_bytes=fig.slm_bytes, scratch_space_bytes=fig.scratch_space_bytes,
        needed_scratch_bytes=needed, scratch_limit_bytes=limit, required_sub_group_size=fig.required_sub_group_size,
        driver_private_bytes=fig.driver_private_bytes, reason=reason, notes=notes + fig.notes,
        work_group_size=work_group, eu_thread_count=fig.eu_thread_count, code_bytes=fig.code_bytes,
    )


def reports_from_image(path: str, data: bytes, *, hint_ip: str | None = None, label: str | None = None,
                       compilers: Sequence[Compiler] = ()) -> tuple[list[KernelReport], list[str]]:
    """Reports for one device image (zebin or legacy); notes for what is not a native image."""
    what = label or path
    if is_zebin(data):
        zebin = read_zebin(data, what, target_ip=None)
        ip = zebin.ip or hint_ip
        target = name_for_ip(ip, compilers) if ip else (zebin.family_label or "unknown target")
        notes: tuple[str, ...] = (f"ze_info {zebin.zeinfo_version[0]}.{zebin.zeinfo_version[1]}",)
        if zebin.build_options:
            notes += (f"built with: {zebin.build_options}",)
        return [_report(path, target, ip, fig, xe_hp=zebin.xe_hp_or_later, notes=notes) for fig in zebin.kernels
                if not names.is_internal(fig.name)], []
    if is_patchtoken_binary(data):
        family, kernels = read_patchtoken_binary(data, what)
        xe_hp = True if family.startswith("Xe-") else (False if family.startswith("Gen") else None)
        note = (f"legacy patch-token binary for {family}",)
        return [_report(path, hint_ip and name_for_ip(hint_ip, compilers) or family, hint_ip, fig, xe_hp=xe_hp,
                        notes=note) for fig in kernels], []
    if is_spirv(data):
        return [], [f"{what}: SPIR-V image (compiled at run time; give it as input to compile it)"]
    raise FormatError(f"{what} is not a zebin or a patch-token binary")


def probe_binaries(inputs: list[Input], *, plan: TargetPlan | None = None,
                   compilers: Sequence[Compiler] = ()) -> BinaryResult:
    """Reports for every binary input; with a plan, only its targets, and say which are missing."""
    result = BinaryResult()
    for inp in inputs:
        if inp.kind.compilable:
            continue
        try:
            if inp.kind == InputKind.FATBIN:
                reports = []
                for member in read_members(inp.data, inp.path):
                    if member.name == "generic_ir":
                        result.notes.append(f"{inp.path}: carries a generic_ir (SPIR-V) member for JIT fallback")
                        continue
                    found, notes = reports_from_image(inp.path, member.data, hint_ip=member.ip,
                                                      label=f"{inp.path}[{member.name}]", compilers=compilers)
                    reports.extend(found)
                    result.notes.extend(notes)
            else:
                reports, notes = reports_from_image(inp.path, inp.data, compilers=compilers)
                result.notes.extend(notes)
        except FormatError as exc:
            raise InputError(str(exc), path=None) from None
        if inp.origin is not None:
            reports = [r.replace(origin=inp.origin) for r in reports]
        if plan is not None:
            present = {r.ip for r in reports}
            wanted: list[KernelReport] = []
            for target in plan.targets:
                matching = [r for r in reports if r.ip == target.ip]
                wanted.extend(r.replace(target=target.name) for r in matching)
            missing = [t.name for t in plan.targets if t.ip not in present]
            if missing:
                result.missing_targets[inp.path] = missing
            reports = wanted
        result.reports.extend(reports)
    return result
