"""The binary probe: reports from device binaries that already exist (zebins, fat binaries,
legacy patch-token binaries), with no compiler involved.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import names
from ..cache import BuildCache, make_key
from ..errors import FormatError, InputError
from ..fileio import sha256
from ..inputs import Input
from ..inputs.fatbin import read_members
from ..inputs.kinds import InputKind
from ..inputs.patchtokens import is_patchtoken_binary, read_patchtoken_binary
from ..inputs.spirv import is_spirv
from ..inputs.zebin import Zebin, is_zebin, read_zebin
from ..levers import DEFAULT_SHAPE
from ..model import (
    SCRATCH_LIMIT_XE_HP,
    SCRATCH_LIMIT_XE_LP,
    WHOLE_MODULE,
    Compiler,
    KernelFigures,
    KernelReport,
    Remarks,
    Source,
    Status,
    scratch_limit_for_ip,
    slot_overflow,
)
from ..toolchain.targets import TargetPlan, name_for_ip


@dataclass
class BinaryResult(Remarks):
    reports: list[KernelReport] = field(default_factory=list)
    missing_targets: dict[str, list[str]] = field(default_factory=dict)
    """input path -> the planned targets it holds no image for."""


def _report(path: str, target: str, ip: str | None, fig: KernelFigures, *, xe_hp: bool | None,
            notes: tuple[str, ...]) -> KernelReport:
    limit = scratch_limit_for_ip(ip) if ip else (
        SCRATCH_LIMIT_XE_HP if xe_hp else (SCRATCH_LIMIT_XE_LP if xe_hp is False else None))
    status, needed, reason = Status.OK, None, slot_overflow(fig.largest_scratch_slot, limit)
    if reason is not None:
        status, needed = Status.SCRATCH_OVERFLOW, fig.largest_scratch_slot
    if status is Status.OK and (why := fig.cannot_launch(ip)) is not None:
        status, reason = Status.WG_OVERFLOW, why
    return KernelReport(
        input=path, kernel=fig.name, target=target, ip=ip, compiler=None, shape=DEFAULT_SHAPE, status=status,
        source=Source.BINARY, simd=fig.simd, grf=fig.grf, spill_bytes=fig.spill_bytes,
        private_bytes=fig.private_bytes, slm_bytes=fig.slm_bytes, scratch_space_bytes=fig.scratch_space_bytes,
        needed_scratch_bytes=needed, scratch_limit_bytes=limit, required_sub_group_size=fig.required_sub_group_size,
        driver_private_bytes=fig.driver_private_bytes, reason=reason, notes=notes + fig.notes,
        work_group_size=fig.work_group, eu_thread_count=fig.eu_thread_count, code_bytes=fig.code_bytes,
        stack_calls=fig.has_stack_calls, callees=fig.calls,
    )


ZEBIN_READ = 2
"""The version of what a zebin's read figures are cached as (bumped when the reader's output changes)."""


def cached_zebin(data: bytes, what: str, cache: BuildCache | None) -> Zebin:
    """The zebin read (inputs.zebin), from the build cache by its bytes' SHA-256 when read before:
    a library's thousand native images are YAML documents of hundreds of nodes each, and
    parsing them is most of a cold read (bench/wheels_audit.py); a warm read hashes them only."""
    if cache is None or not cache.enabled:
        return read_zebin(data, what, target_ip=None)
    key = make_key(kind="zebin-read", version=ZEBIN_READ, digest=sha256(data))
    hit = cache.get(key)
    if hit is not None:
        try:
            return _zebin_from_json(json.loads(hit[1]))
        except (ValueError, KeyError, TypeError):
            pass  # an entry of another shape: read the zebin again
    zebin = read_zebin(data, what, target_ip=None)
    cache.put(key, {"kind": "zebin-read"}, json.dumps(_zebin_json(zebin)).encode())
    return zebin


def _zebin_json(z: Zebin) -> dict:
    return {"ip": z.ip, "family_label": z.family_label, "xe_hp_or_later": z.xe_hp_or_later,
            "zebin_version": z.zebin_version, "zeinfo_version": list(z.zeinfo_version),
            "build_options": z.build_options, "has_spirv": z.has_spirv,
            "kernels": [dataclasses.asdict(k) for k in z.kernels]}


def _zebin_from_json(d: dict) -> Zebin:
    kernels = tuple(KernelFigures(**{**k, "notes": tuple(k["notes"]), "calls": tuple(k.get("calls", ())),
                                     "required_work_group_size": tuple(k["required_work_group_size"])
                                     if k.get("required_work_group_size") is not None else None})
                    for k in d["kernels"])
    return Zebin(d["ip"], d["family_label"], d["xe_hp_or_later"], d["zebin_version"], tuple(d["zeinfo_version"]),
                 kernels, d["build_options"], d["has_spirv"])


def reports_from_image(path: str, data: bytes, *, hint_ip: str | None = None, label: str | None = None,
                       compilers: Sequence[Compiler] = (), cache: BuildCache | None = None
                       ) -> tuple[list[KernelReport], list[str]]:
    """Reports for one device image (zebin or legacy); notes for what is not a native image."""
    what = label or path
    if is_zebin(data):
        zebin = cached_zebin(data, what, cache)
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


def member_rank(entry: str, ip: str | None) -> int:
    """How well an ocloc fat binary's member name matches a device of IP `ip`, as NEO ranks
    them when it loads one member of the archive for a device (compute-runtime,
    shared/source/device_binary_format/device_binary_format_ar.cpp,
    unpackSingleDeviceBinary<DeviceBinaryFormat::archive>): the full IP version first
    (`64.20.1.0`), then the product with its stepping (`64.bmg.<stepping>`), then the IP's
    major.minor, then the product alone (`64.bmg`).  Lower is preferred."""
    if ip is not None and entry == ip:
        return 0
    if ip is not None and entry == ".".join(ip.split(".")[:2]):
        return 2
    return 1 if "." in entry else 3


def _empty_module(inp: Input) -> bool:
    """A SYCL image whose descriptor lists no kernels: what the compiler emits for a translation
    unit without any (its zebins have neither .ze_info nor code), not a broken build."""
    return inp.image is not None and not inp.image.entries


@dataclass
class Counts:
    """What a run's binaries hold beside their kernels, counted across every call (one note each)."""

    generic_ir: list[str] = field(default_factory=list)
    shadowed: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """One line per kind, with a count and the first place (a library has hundreds of each)."""
        kinds = ((self.generic_ir, "fat binaries carry a generic_ir (SPIR-V) member for JIT fallback"),
                 (self.shadowed, "images shadowed by a better-matching member of their fat binary, the one the "
                                 "driver loads for that device: counted once, as that member"),
                 (self.empty, "images without kernels (translation units with none) not audited"))
        return [f"{len(places)} {what} (first: {places[0]})" for places, what in kinds if places]


def _fatbin_reports(inp: Input, compilers: Sequence[Compiler], counts: Counts, notes: list[str],
                    cache: BuildCache | None = None) -> list[KernelReport]:
    """The reports of the members the driver would load, one member per IP (member_rank)."""
    best: dict[str | None, tuple[int, str, list[KernelReport]]] = {}
    for member in read_members(inp.data, inp.path):
        label = f"{inp.path}[{member.name}]"
        if member.name == "generic_ir":
            counts.generic_ir.append(inp.path)
            continue
        try:
            found, more = reports_from_image(inp.path, member.data, hint_ip=member.ip, label=label,
                                             compilers=compilers, cache=cache)
        except FormatError as exc:
            if _empty_module(inp):
                counts.empty.append(label)
                continue
            found, more = [_broken(inp.path, member.ip, str(exc), compilers)], []
        notes.extend(more)
        ip = member.ip or next((r.ip for r in found if r.ip), None)
        rank = member_rank(member.entry, ip)
        kept = best.get(ip)
        if kept is None or rank < kept[0]:
            if kept is not None:
                counts.shadowed.append(f"{inp.path}[{kept[1]}]")
            best[ip] = (rank, member.name, found)
        else:
            counts.shadowed.append(label)
    return [r for _, _, found in best.values() for r in found]


def _broken(path: str, ip: str | None, why: str, compilers: Sequence[Compiler]) -> KernelReport:
    """A native image that does not read: a finding for that image, never the end of the run."""
    target = name_for_ip(ip, compilers) if ip else "unknown target"
    return KernelReport(input=path, kernel=WHOLE_MODULE,
                        target=target, ip=ip, compiler=None, shape=DEFAULT_SHAPE, status=Status.BUILD_FAILED,
                        source=Source.BINARY, reason=why, scratch_limit_bytes=scratch_limit_for_ip(ip) if ip else None)


def probe_binaries(inputs: list[Input], *, plan: TargetPlan | None = None,
                   compilers: Sequence[Compiler] = (), counts: Counts | None = None,
                   cache: BuildCache | None = None) -> BinaryResult:
    """Reports for every binary input; with a plan, only its targets, and say which are missing.
    With `counts`, what the binaries hold beside kernels is counted there (the caller says it
    once, for many calls); else it is said in this result's notes."""
    result = BinaryResult()
    own = counts is None
    counts = counts or Counts()
    for inp in inputs:
        if inp.kind.compilable:
            continue
        if inp.kind == InputKind.FATBIN:
            try:
                reports = _fatbin_reports(inp, compilers, counts, result.notes, cache)
            except FormatError as exc:
                raise InputError(str(exc), path=None) from None
        else:
            try:
                reports, notes = reports_from_image(inp.path, inp.data, compilers=compilers, cache=cache)
            except FormatError as exc:
                if inp.origin is None:  # a file the user named: its error is theirs to see
                    raise InputError(str(exc), path=None) from None
                if _empty_module(inp):
                    counts.empty.append(inp.path)
                    continue
                reports, notes = [_broken(inp.path, None, str(exc), compilers)], []
            result.notes.extend(notes)
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
    if own:
        result.notes.extend(counts.notes())
    return result
