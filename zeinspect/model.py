"""The vocabulary every layer speaks: targets, shapes, compilers and kernel reports.

Everything here is a frozen dataclass or an enum, with no I/O.  Probes produce
`KernelReport`s, judges consume them, formats print them.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from .hardware import (  # noqa: F401 - the vocabulary's own names for the hardware facts
    FAMILY_LABELS,
    IP_FAMILIES,
    SCRATCH_LIMIT_XE_HP,
    SCRATCH_LIMIT_XE_LP,
    family_label,
    grf_bytes_for_ip,
    ip_in_family_range,
    ip_is_xe_hp_or_later,
    is_ip,
    parse_ip,
    scratch_limit_for_ip,
)

SCHEMA = "zeinspect.report/1"

def slot_overflow(largest_scratch_slot: int | None, limit: int | None) -> str | None:
    """Why a zebin whose largest scratch slot is over the cap cannot run, or None.

    Old IGC builds such kernels without complaint; NEO then refuses them at zeKernelCreate
    with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY.  The one copy of this check and message."""
    if limit is None or not largest_scratch_slot or largest_scratch_slot <= limit:
        return None
    return (f"needs {largest_scratch_slot} bytes of scratch per thread, over the {limit} byte cap: the driver "
            "rejects it at zeKernelCreate (ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)")


def environment_of(reports: Any) -> dict[str, str]:
    """Every compiler variable any of the reports was built under (name -> value)."""
    out: dict[str, str] = {}
    for r in reports:
        out.update(r.environment)
    return dict(sorted(out.items()))


def built_under(reports: Any) -> str:
    """What a summary line adds when figures depend on the compiler's environment: `; built
    under IGC_ExtraOCLOptions=...` (or how many reports were, when not all).  Empty: none did."""
    environments: dict[tuple, int] = {}
    total = 0
    for r in reports:
        total += 1
        if r.environment:
            environments[r.environment] = environments.get(r.environment, 0) + 1
    if not environments:
        return ""
    parts = []
    for environment, count in sorted(environments.items()):
        spelled = ", ".join(f"{k}={v}" for k, v in environment)
        parts.append(spelled if count == total else f"{spelled} ({count} of {total} kernel-target pairs)")
    return "; built under " + "; ".join(parts)


def driver_version_text(version: int | None) -> str:
    """A Level Zero driver version (major 8 bits, minor 8, build 16) as NEO spells it."""
    if not isinstance(version, int):
        return "?"
    return f"{version >> 24}.{(version >> 16) & 0xFF}.{driver_build(version)}"


def driver_build(version: int) -> int:
    """The build number of a Level Zero driver version: NEO's release build (26.27.039122 -> 39122)."""
    return version & 0xFFFF


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


class GrfMode(enum.StrEnum):
    """A register-file request, the one vocabulary of its meaning.  Module shapes and the
    command line spell it by register count (`128`, `256`); Triton spells it in words
    (`small`, `large`): `triton` and `from_triton` translate."""

    DEFAULT = "default"
    SMALL = "128"
    LARGE = "256"
    AUTO = "auto"

    @property
    def triton(self) -> str:
        return _TRITON_GRF[self]

    @classmethod
    def from_triton(cls, word: str) -> GrfMode:
        for mode, spelled in _TRITON_GRF.items():
            if spelled == word:
                return mode
        raise ValueError(f"register file mode must be one of {', '.join(_TRITON_GRF.values())}, not {word!r}")

    def describe(self) -> str:
        return {"default": "default registers", "auto": "automatic register file"}.get(self.value,
                                                                                        f"{self.value} registers")


_TRITON_GRF = {GrfMode.DEFAULT: "default", GrfMode.SMALL: "small", GrfMode.LARGE: "large", GrfMode.AUTO: "auto"}

WHOLE_MODULE = "*"
"""The kernel name of a report about a whole module that failed before it named its kernels."""


@dataclass(frozen=True)
class InputId:
    """Where a kernel's module came from, structured: the file on disk, the archive member and
    the image within it.  What SARIF, diff and the ratchet read, never the label's text."""

    file: str
    """The file on disk: a source, a binary, a host file (library, object, executable), a log."""
    member: str | None = None
    """The member of a static archive that held the image."""
    image: str | None = None
    """Where in the file the image was found (`.tgtimg[471]`, a section, an OffloadBinary entry)."""
    variant: str | None = None
    """What sets a SYCL image apart from the file's other images of the same kernels, whatever
    its index: its target, ESIMD, register file, required aspects and sub-group size (what
    `diff` pairs images by across builds)."""
    package: str | None = None
    """The package the file came from, as `name version` (a wheel, a conda package), if any."""

    @property
    def label(self) -> str:
        """How reports name it: `lib.so(member.o)[.tgtimg[471]]`."""
        return self.file + (f"({self.member})" if self.member else "") + (f"[{self.image}]" if self.image else "")

    def to_json(self) -> dict:
        return {"file": self.file, "member": self.member, "image": self.image, "variant": self.variant,
                "package": self.package}


class ShapeLike(Protocol):
    """How a kernel was built (levers.Shape, zeinspect.triton's TritonShape): what a report keeps."""

    def to_json(self) -> dict: ...

    def describe(self) -> str: ...


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
    WG_OVERFLOW = "wg_overflow"
    """Builds, but its work-group (required, or the one Triton launches it with) is larger than
    its register file and SIMD width let one work-group be: it cannot launch (zeinspect.occupancy)."""
    SLM_OVERFLOW = "slm_overflow"
    """Builds, but asks for more shared local memory per work-group than the target has: it
    cannot launch (Triton kernels, whose shared memory is known at compile time)."""
    NOT_APPLICABLE = "not_applicable"
    """The image has a device requirement the target does not meet (an aspect, a sub-group
    size): the SYCL runtime never selects it there."""


CAUSES = {
    "register_spill": "register spill",
    "allowed_spill": "spill IGC allowed (Xe3 and later: it kept fewer registers rather than take more, within its "
                     "spill budget: the compiler's choice)",
    "private_arrays": "private arrays",
    "stack_calls": "stack calls (calls IGC did not inline: each reserves a call stack in scratch)",
    "slm_overflow": "shared local memory over the work-group's",
    "ptss_cap": "over the per-thread scratch cap",
}
"""Why a kernel uses scratch, as the compiler tells them apart (KernelReport.cause)."""


class Verdict(enum.Enum):
    """The audit's judgement of one report or ratchet line (judge.audit says when each applies):
    its label, whether it fails the gate, and whether it fails it under --strict."""

    OVERFLOW = ("OVERFLOW", True, True)
    FAILED = ("FAILED", True, True)
    NEW = ("NEW", True, True)
    GREW = ("GREW", True, True)
    INTENT = ("INTENT", True, True)
    IMPROVED = ("IMPROVED", False, True)
    STALE = ("STALE", False, True)
    LISTED = ("LISTED", False, False)
    CLEAN = ("CLEAN", False, False)
    NOT_APPLICABLE = ("N/A", False, False)

    def __init__(self, label: str, fails: bool, fails_strict: bool):
        self.label = label
        self.fails = fails
        self.fails_strict = fails_strict


LARGE_GRF_WORDS = ("-ze-opt-large-register-file", "-cl-intel-256-GRF-per-thread", "-doubleGRF")
"""The spellings of a request for 256 registers per thread (IGC's, OpenCL's, VC's)."""
AUTO_GRF_WORDS = ("-ze-intel-enable-auto-large-GRF-mode", "-cl-intel-enable-auto-large-GRF-mode")
"""The spellings of a request for IGC's choice of register file per kernel."""


class RunPath(enum.StrEnum):
    """How a shipped kernel reaches a device (docs/how-it-works.md#paths): the runtime loads a
    native image built for it, or the driver compiles SPIR-V at the first launch."""

    NATIVE = "native"
    """An AOT image (a zebin, or the fat binary's member the driver picks for the device)."""
    SPIRV = "spirv"
    """A SYCL SPIR-V image, compiled with the image's options at the first launch."""
    GENERIC_IR = "generic_ir"
    """A fat binary's `generic_ir` member (SPIR-V), compiled with its options when no member fits."""
    NATIVE_IR = "native_ir"
    """A zebin's own SPIR-V (`.spv`), rebuilt with its options on a device it was not built for."""

    @property
    def jit(self) -> bool:
        return self is not RunPath.NATIVE

    @property
    def label(self) -> str:
        """The path, as a count of kernel-target pairs names it."""
        return {"native": "native image", "spirv": "SPIR-V JIT", "generic_ir": "generic_ir JIT",
                "native_ir": "JIT of a zebin's own SPIR-V"}[self.value]

    @property
    def built_from(self) -> str:
        """What a build of this path is made from, as a finding names it."""
        return {"native": "native image", "spirv": "SPIR-V image", "generic_ir": "fat binary's generic_ir member",
                "native_ir": "zebin's own SPIR-V"}[self.value]


def option_words(*options: str | None) -> set[str]:
    """The words of build option strings (None: none)."""
    return {word for text in options for word in (text or "").split()}


@dataclass(frozen=True)
class IntentRule:
    """What a build must do for the kernels a glob names, on every path of every target (the
    gate configuration's `intent:`, judged by judge.paths): a register file, a sub-group size,
    native images for named targets."""

    kernels: str
    grf: int | None = None
    sub_group: int | None = None
    native_on: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"kernels": self.kernels, "grf": self.grf, "sub_group": self.sub_group,
                "native_on": list(self.native_on)}


class Source(enum.StrEnum):
    AOT = "aot"  # compiled here by ocloc
    BINARY = "binary"  # read from an existing zebin / fat binary
    RUNTIME = "runtime"  # built through Level Zero
    LOG = "log"  # read from a build log, nothing compiled


@dataclass(kw_only=True)
class Remarks:
    """What a result says beside its findings, the one part every result record holds for it (as
    app.outcome.Outcome does): notes, a line each for the reader, and incidents, a line each for
    a compiler or driver crash or hang or an internal error contained to one part of the input
    (each a finding of its own: exit 3)."""

    notes: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)


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
    required_work_group_size: tuple[int, ...] | None = None
    """The work-group size the kernel requires (reqd_work_group_size), as .ze_info says it."""
    eu_thread_count: int | None = None
    """Hardware threads per EU at this kernel's register count, as IGC wrote it (.ze_info)."""
    code_bytes: int | None = None
    """The size of the kernel's code (its `.text.<kernel>` section): what `diff` compares as
    the instruction count's stand-in (16 bytes an instruction, 8 compacted)."""
    calls: tuple[str, ...] = ()
    """Functions outside the kernel its code calls, as the zebin's symbol table names them
    (inputs.zebin: the targets of its relocations): with stack calls, their callees."""

    @property
    def work_group(self) -> int | None:
        """The work-items of the work-group it requires; None where it requires none."""
        return math.prod(self.required_work_group_size) if self.required_work_group_size else None

    def cannot_launch(self, ip: str | None) -> str | None:
        """Why the work-group it requires cannot launch on `ip` at its register count and SIMD
        width, or None (also where it requires none, or a figure is unknown)."""
        if not (ip and self.work_group and self.grf and self.simd):
            return None
        from .occupancy import cannot_launch  # here: most kernels require no work-group size (start-up)

        return cannot_launch(ip, self.grf, self.simd, self.work_group, "requires")


@dataclass(frozen=True, slots=True)
class KernelReport:
    """What the compiler decided for one kernel on one target, in one shape."""

    input: str
    kernel: str
    target: str
    ip: str | None
    compiler: str | None
    shape: ShapeLike
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
    work_group_size: int | None = None
    """Work-items per work-group the kernel requires (or Triton launches it with); None: unknown."""
    eu_thread_count: int | None = None
    """Hardware threads per EU at its register count, as IGC wrote it (.ze_info)."""
    code_bytes: int | None = None
    """The size of its code in the zebin (`.text.<kernel>`)."""
    environment: tuple[tuple[str, str], ...] = ()
    """The compiler's variables it was built under (IGC_*, NEO's debug keys: toolchain.environment)."""
    input_digest: str | None = None
    """SHA-256 of the module that was compiled or read (the image itself, for a library's)."""
    stack_calls: bool = False
    """It makes calls IGC did not inline (.ze_info has_stack_calls): IGC reserves a call stack in
    scratch, which the driver's spill figure includes."""
    callees: tuple[str, ...] = ()
    """The functions it calls outside its own code, as the zebin names them (KernelFigures.calls)."""
    path: RunPath | None = None
    """How the runtime gets it onto the target, for an image a product ships (None: a module
    given as such, a source)."""
    path_taken: bool | None = None
    """Whether the runtime takes this path on this target (probes.paths): a JIT build on a target a
    native image serves is built to be compared, never run there.  None: not decided (no targets
    were named: nothing to choose between)."""
    retries: int = 0
    """How often IGC built it again (`[RetryManager] Start recompilation` lines of its log)."""
    compile_seconds: float | None = field(default=None, compare=False, hash=False)
    """What its module's compile for this target took (its share of a batched one; a cached
    build's own first time), where it was compiled here.  A time, not a figure: the JSON document
    lists it per module and target (`compile_times`), beside the reports, never in them."""
    cost: dict | None = field(default=None, compare=False, hash=False)
    """What its scratch traffic costs (inputs.isa.ScratchCost's JSON), where measured (--cost)."""
    origin: InputId | None = field(default=None, compare=False, hash=False)
    """The structured identity of `input` (None: `input` is the file itself)."""
    extra: dict | None = field(default=None, compare=False, hash=False)
    """Probe-specific parts (the runtime's identity, zeinspect.triton's TritonPart), printed in
    JSON under `extra`; read through the probe's own accessor, never by key path."""

    @property
    def scratch_bytes(self) -> int | None:
        if self.spill_bytes is None and self.private_bytes is None:
            return None
        return (self.spill_bytes or 0) + (self.private_bytes or 0)

    @property
    def cause(self) -> str | None:
        """Why it uses scratch, as the compiler tells the causes apart (CAUSES), or None."""
        if self.status is Status.SCRATCH_OVERFLOW:
            return "ptss_cap"
        if self.status is Status.SLM_OVERFLOW:
            return "slm_overflow"
        if not self.applicable or not self.uses_scratch:
            return None
        if self.stack_calls:
            return "stack_calls"
        if self.spill_bytes and self.spill_allowed_by_igc:
            return "allowed_spill"
        if self.spill_bytes or self.log_spilled_regs or self.scratch_unknown:
            return "register_spill"
        return "private_arrays"

    @property
    def spill_allowed_by_igc(self) -> bool:
        """Whether its spill is one IGC chose to keep.  Xe3 and later pick each kernel's register
        count (IGC's -autoGRFSelection, "VRT"), and IGC's own help for -spillAllowed says it is the
        "spill size allowed without increasing GRF number in VRT" (the VISASpillAllowed budget):
        a spill at fewer registers than the file holds, with the count left to IGC (no register
        file option) and no required work-group size that more registers could fail to launch, is
        such a spill.  None was found on IGC 2.40 (vLLM's 3,189 Xe3P kernels spill only at 256
        registers; VRT bumps the count first), so this reads what a compiler that uses the budget
        would build."""
        major = (self.ip or "").split(".")[0]
        options = " ".join((self.options or "", *self.notes))
        return (major.isdigit() and int(major) >= 30 and self.grf is not None and self.grf < 256
                and not any(word in options for word in ("GRF", "register-file"))
                and self.work_group_size is None and getattr(self.shape, "grf", "default") in ("default", "auto"))

    @property
    def shown_scratch_bytes(self) -> int:
        """The one figure a table cell, a heat map and a shape ranking show: the driver's (spill +
        private), or the scratch the compiler reserved when the driver reports none (private
        memory in scratch on Xe-LP with IGC 2.x)."""
        return self.scratch_bytes or self.scratch_space_bytes or 0

    @property
    def file(self) -> str:
        """The file on disk the report is about."""
        return self.origin.file if self.origin is not None else self.input

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
    def identity(self) -> tuple[str, str]:
        """The kernel as summaries count it: its symbol within what ships it (the package, else
        the host file, else the input).  The same kernel in several files of one package, or
        in several images of one library (variants for other device requirements), is one
        kernel in every count; each report stays in the rows that differ and in the JSON."""
        o = self.origin
        return ((o.package or o.file) if o is not None else self.input), self.kernel

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

    def occupancy_json(self) -> dict | None:
        from .occupancy import of

        found = of(self)
        return found.to_json() if found is not None else None

    def replace(self, **changes: Any) -> KernelReport:
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
            "work_group_size": self.work_group_size,
            "eu_thread_count": self.eu_thread_count,
            "code_bytes": self.code_bytes,
            "stack_calls": self.stack_calls,
            "callees": list(self.callees),
            "retries": self.retries,
            "path": None if self.path is None else {"via": self.path.value, "taken": self.path_taken},
            "cause": self.cause,
            "cost": self.cost,
            "environment": dict(self.environment),
            "input_sha256": self.input_digest,
            "origin": (self.origin or InputId(self.input)).to_json(),
            "occupancy": self.occupancy_json(),
            # The older field: the unmet aspects alone.
            "missing_aspects": [r.removeprefix("aspect ") for r in self.unmet_requirements if r.startswith("aspect ")],
        }
        if self.extra:
            # A probe's typed part (zeinspect.triton's TritonPart) writes its own JSON.
            out["extra"] = {k: v.to_json() if hasattr(v, "to_json") else v for k, v in self.extra.items()}
        return out
