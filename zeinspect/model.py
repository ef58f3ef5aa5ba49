"""The vocabulary every layer speaks: targets, shapes, compilers and kernel reports.

Everything here is a frozen dataclass or an enum, with no I/O.  Probes produce
`KernelReport`s, judges consume them, formats print them.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

SCHEMA = "zeinspect.report/1"

# Per-thread scratch caps (NEO GfxCoreHelper::getMaxScratchSize): 2 MiB up to Xe-LP,
# 256 KiB from Xe-HP on.  A zebin that asks for more is rejected at zeKernelCreate.
SCRATCH_LIMIT_XE_LP = 2 * 1024 * 1024
SCRATCH_LIMIT_XE_HP = 256 * 1024


def parse_ip(ip: str) -> tuple[int, int, int]:
    """'12.70.4' -> (12, 70, 4); raises ValueError on anything else."""
    parts = ip.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not an IP version: {ip!r}")
    return int(parts[0]), int(parts[1]), int(parts[2])


def is_ip(text: str) -> bool:
    try:
        parse_ip(text)
    except ValueError:
        return False
    return True


def ip_is_xe_hp_or_later(ip: str) -> bool:
    """Xe-HP (12.50) and later: 256 KiB scratch cap, NEO's 'xehp_and_later' rules."""
    major, minor, _ = parse_ip(ip)
    return (major, minor) >= (12, 50)


def scratch_limit_for_ip(ip: str) -> int:
    return SCRATCH_LIMIT_XE_HP if ip_is_xe_hp_or_later(ip) else SCRATCH_LIMIT_XE_LP


def slot_overflow(largest_scratch_slot: int | None, limit: int | None) -> str | None:
    """Why a zebin whose largest scratch slot is over the cap cannot run, or None.

    Old IGC builds such kernels without complaint; NEO then refuses them at zeKernelCreate
    with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY.  The one copy of this check and message."""
    if limit is None or not largest_scratch_slot or largest_scratch_slot <= limit:
        return None
    return (f"needs {largest_scratch_slot} bytes of scratch per thread, over the {limit} byte cap: the driver "
            "rejects it at zeKernelCreate (ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)")


def driver_version_text(version: int | None) -> str:
    """A Level Zero driver version (major 8 bits, minor 8, build 16) as NEO spells it."""
    if not isinstance(version, int):
        return "?"
    return f"{version >> 24}.{(version >> 16) & 0xFF}.{driver_build(version)}"


def driver_build(version: int) -> int:
    """The build number of a Level Zero driver version: NEO's release build (26.27.039122 -> 39122)."""
    return version & 0xFFFF


def grf_bytes_for_ip(ip: str) -> int:
    """Bytes per general register: 64 on Xe-HPC (12.60) and Xe2 and later, else 32."""
    major, minor, _ = parse_ip(ip)
    return 64 if (12, 60) <= (major, minor) < (12, 70) or major >= 20 else 32


# The GPU families by IP range, ocloc's family names as keys: ((major, minor) lowest, highest).
# The one table: target selection falls back on it when no installed compiler knows a family
# name (Debian 12's ocloc predates `xe-lp`, `xe-lpg` and `xe2`), and reports group by it.
IP_FAMILIES = {
    "xe-lp": ((12, 0), (12, 10)), "gen12lp": ((12, 0), (12, 10)), "xe-hpg": ((12, 55), (12, 57)),
    "xe-hpc": ((12, 60), (12, 61)), "xe-lpg": ((12, 70), (12, 71)), "xe-lpgplus": ((12, 74), (12, 74)),
    "xe2": ((20, 0), (20, 255)), "xe2-hpg": ((20, 1), (20, 2)), "xe2-lpg": ((20, 4), (20, 4)),
    "xe3": ((30, 0), (30, 255)),
}
# The generations a reader knows, in the order reports list them (Xe-LPG+ reads as Xe-LPG).
FAMILY_LABELS = (("xe-lp", "Xe-LP"), ("xe-hpg", "Xe-HPG"), ("xe-hpc", "Xe-HPC"), ("xe-lpg", "Xe-LPG"),
                 ("xe-lpgplus", "Xe-LPG"), ("xe2", "Xe2"), ("xe3", "Xe3"))


def ip_in_family_range(ip: str, family: str) -> bool:
    if family not in IP_FAMILIES or not is_ip(ip):
        return False
    major, minor, _ = parse_ip(ip)
    low, high = IP_FAMILIES[family]
    return low <= (major, minor) <= high


def family_label(ip: str | None) -> str:
    """`Xe-HPG` for 12.55.8; the IP itself outside every family, `?` when unknown."""
    if not ip:
        return "?"
    return next((label for family, label in FAMILY_LABELS if ip_in_family_range(ip, family)), ip)


@dataclass(frozen=True, order=True)
class Target:
    """One AOT target: the name the user asked for and the IP version it compiles to."""

    name: str
    """The ocloc acronym as requested (`rpl-s`), or the IP version itself."""
    ip: str
    """IP version `major.minor.revision`; targets sharing it share one compile."""

    @property
    def scratch_limit(self) -> int:
        return scratch_limit_for_ip(self.ip)

    @property
    def grf_bytes(self) -> int:
        return grf_bytes_for_ip(self.ip)


GRF_CHOICES = ("default", "128", "256", "auto")
SUB_GROUP_CHOICES = (None, 0, 8, 16, 32)


@dataclass(frozen=True, order=True)
class Shape:
    """How a kernel is built: register file mode and sub-group size.

    `sub_group` None keeps whatever the module says; 0 removes a required size (the
    compiler's choice); 8/16/32 require that size.
    """

    grf: str = "default"
    """default | 128 | 256 | auto"""
    sub_group: int | None = None

    def __post_init__(self):
        if self.grf not in GRF_CHOICES:
            raise ValueError(f"register file must be one of {', '.join(GRF_CHOICES)}, not {self.grf!r}")
        if self.sub_group not in SUB_GROUP_CHOICES:
            raise ValueError(f"sub-group size must be 8, 16, 32 or 0 (compiler's choice), not {self.sub_group!r}")

    def to_json(self) -> dict:
        return {"grf": self.grf, "sub_group": self.sub_group}

    def describe(self) -> str:
        sg = {None: "sub-group as written", 0: "compiler's choice"}.get(self.sub_group, f"sub-group {self.sub_group}")
        grf = {"default": "default registers", "auto": "automatic register file"}.get(self.grf, f"{self.grf} registers")
        return f"{sg}, {grf}"

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_SHAPE


DEFAULT_SHAPE = Shape()


@dataclass(frozen=True)
class Compiler:
    """The identity of one ocloc + IGC installation; recorded in every report."""

    id: str
    """Stable identity, e.g. `ocloc-26.27.039122/igc-2.40.14`; part of every cache key."""
    path: str
    """The command that runs it (a launcher script for a fetched stack)."""
    ocloc_version: str
    igc_version: str | None
    targets: tuple[str, ...] = ()
    """Acronyms this ocloc accepts for -device."""
    ip_map: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(acronym or family, IP versions) as `ocloc ids` reports them."""
    zebin_by_default: bool = True
    """False for old ocloc that writes patch-token binaries unless asked for a zebin."""
    origin: str = ""
    """Where it was found: env, PATH, system package, fetched stack."""

    def ips(self, name: str) -> tuple[str, ...]:
        """The IP versions `name` compiles to with this compiler (empty: unknown name)."""
        for known, ips in self.ip_map:
            if known == name:
                return ips
        if is_ip(name) and any(name in ips for _, ips in self.ip_map):
            return (name,)
        return ()

    def knows(self, name: str) -> bool:
        return bool(self.ips(name))

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "path": self.path,
            "ocloc_version": self.ocloc_version,
            "igc_version": self.igc_version,
        }

    @property
    def version_key(self) -> tuple[int, ...]:
        """Orders compilers: newest first when sorted in reverse."""
        out = []
        for part in self.ocloc_version.split("."):
            out.append(int(part) if part.isdigit() else 0)
        return tuple(out)


class Status(enum.StrEnum):
    OK = "ok"
    SCRATCH_OVERFLOW = "scratch_overflow"
    BUILD_FAILED = "build_failed"
    SLM_OVERFLOW = "slm_overflow"
    """Builds, but asks for more shared local memory per work-group than the target has: it
    cannot launch (Triton kernels, whose shared memory is known at compile time)."""
    NOT_APPLICABLE = "not_applicable"
    """The image has a device requirement the target does not meet (an aspect, a sub-group
    size): the SYCL runtime never selects it there."""


class Verdict(enum.Enum):
    """The audit's judgement of one report or ratchet line (judge.audit says when each applies):
    its label, whether it fails the gate, and whether it fails it under --strict."""

    OVERFLOW = ("OVERFLOW", True, True)
    FAILED = ("FAILED", True, True)
    NEW = ("NEW", True, True)
    GREW = ("GREW", True, True)
    IMPROVED = ("IMPROVED", False, True)
    STALE = ("STALE", False, True)
    LISTED = ("LISTED", False, False)
    CLEAN = ("CLEAN", False, False)
    NOT_APPLICABLE = ("N/A", False, False)

    def __init__(self, label: str, fails: bool, fails_strict: bool):
        self.label = label
        self.fails = fails
        self.fails_strict = fails_strict


class Source(enum.StrEnum):
    AOT = "aot"  # compiled here by ocloc
    BINARY = "binary"  # read from an existing zebin / fat binary
    RUNTIME = "runtime"  # built through Level Zero
    LOG = "log"  # read from a build log, nothing compiled


@dataclass(frozen=True)
class KernelFigures:
    """What one kernel's metadata says, already derived with the driver's rules."""

    name: str
    simd: int | None
    grf: int | None
    spill_bytes: int | None
    private_bytes: int | None
    """What the zebin says the kernel uses (scratch private, else global private x SIMD)."""
    slm_bytes: int | None
    scratch_space_bytes: int | None
    """Per-thread scratch the compiler asked for (all slots, as written, before the driver rounds)."""
    largest_scratch_slot: int | None = None
    required_sub_group_size: int | None = None
    has_stack_calls: bool = False
    driver_private_bytes: int | None = None
    """What zeKernelGetProperties.privateMemSize would say, where it differs (Xe-LP with IGC 2.x
    reports 0 for private memory that lives in scratch); None: the same as private_bytes."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class KernelReport:
    """What the compiler decided for one kernel on one target, in one shape."""

    input: str
    kernel: str
    target: str
    ip: str | None
    compiler: str | None
    shape: Shape
    status: Status
    source: Source
    simd: int | None = None
    grf: int | None = None
    spill_bytes: int | None = None
    """Per hardware thread, as zeKernelGetProperties.spillMemSize would report it."""
    private_bytes: int | None = None
    """Per hardware thread, what the zebin says the kernel uses."""
    slm_bytes: int | None = None
    scratch_space_bytes: int | None = None
    log_spilled_regs: int | None = None
    needed_scratch_bytes: int | None = None
    scratch_limit_bytes: int | None = None
    required_sub_group_size: int | None = None
    driver_private_bytes: int | None = None
    """What zeKernelGetProperties.privateMemSize would report, where that differs from
    private_bytes (Xe-LP with IGC 2.x reports 0 for private memory in scratch)."""
    scratch_unknown: bool = False
    """A build log says the kernel spills but gives no figure."""
    reason: str | None = None
    """Why a kernel did not build (the compiler's own error lines, or a crash)."""
    log: tuple[str, ...] = ()
    """Build-log lines that concern this kernel."""
    command: str | None = None
    """The exact command that reproduces this compile."""
    notes: tuple[str, ...] = ()
    options: str | None = None
    """The build options the compile used (the user's, the shape's, the SYCL image's own)."""
    unmet_requirements: tuple[str, ...] = ()
    """For `not_applicable`: the image's device requirements the target does not meet."""
    unchecked_requirements: tuple[str, ...] = ()
    """Device requirements zeinspect cannot decide offline: assumed met, and said so."""
    extra: dict | None = field(default=None, compare=False, hash=False)
    """Probe-specific data (runtime identity, ...), printed in JSON under `extra`."""

    @property
    def scratch_bytes(self) -> int | None:
        if self.spill_bytes is None and self.private_bytes is None:
            return None
        return (self.spill_bytes or 0) + (self.private_bytes or 0)

    @property
    def unreported_private_bytes(self) -> int:
        """Private bytes the driver would not report (private_bytes - driver_private_bytes)."""
        if self.private_bytes is None or self.driver_private_bytes is None:
            return 0
        return max(0, self.private_bytes - self.driver_private_bytes)

    @property
    def applicable(self) -> bool:
        return self.status is not Status.NOT_APPLICABLE

    @property
    def uses_scratch(self) -> bool:
        """Spill or private memory by the driver's figures, or scratch the compiler reserved."""
        return (bool(self.scratch_bytes) or bool(self.scratch_space_bytes) or bool(self.log_spilled_regs)
                or bool(self.unreported_private_bytes) or self.scratch_unknown)

    @property
    def built(self) -> bool:
        return self.status is Status.OK

    @property
    def headroom_bytes(self) -> int | None:
        """Bytes left below the per-thread scratch cap (negative when over it)."""
        if self.scratch_limit_bytes is None:
            return None
        used = self.needed_scratch_bytes if self.needed_scratch_bytes is not None else self.scratch_space_bytes
        if used is None:
            return None
        return self.scratch_limit_bytes - used

    def replace(self, **changes) -> KernelReport:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict:
        out = {
            "input": self.input,
            "kernel": self.kernel,
            "target": self.target,
            "ip": self.ip,
            "compiler": self.compiler,
            "shape": self.shape.to_json(),
            "status": self.status.value,
            "simd": self.simd,
            "grf": self.grf,
            "spill_bytes": self.spill_bytes,
            "private_bytes": self.private_bytes,
            "scratch_bytes": self.scratch_bytes,
            "slm_bytes": self.slm_bytes,
            "log_spilled_regs": self.log_spilled_regs,
            "needed_scratch_bytes": self.needed_scratch_bytes,
            "scratch_limit_bytes": self.scratch_limit_bytes,
            "source": self.source.value,
            "scratch_space_bytes": self.scratch_space_bytes,
            "required_sub_group_size": self.required_sub_group_size,
            "unreported_private_bytes": self.unreported_private_bytes,
            "driver_private_bytes": (self.driver_private_bytes if self.driver_private_bytes is not None
                                     else self.private_bytes),
            "scratch_unknown": self.scratch_unknown,
            "reason": self.reason,
            "log": list(self.log),
            "command": self.command,
            "notes": list(self.notes),
            "options": self.options,
            "unmet_requirements": list(self.unmet_requirements),
            "unchecked_requirements": list(self.unchecked_requirements),
            # The older field: the unmet aspects alone.
            "missing_aspects": [r.removeprefix("aspect ") for r in self.unmet_requirements if r.startswith("aspect ")],
        }
        if self.extra:
            out["extra"] = self.extra
        return out
