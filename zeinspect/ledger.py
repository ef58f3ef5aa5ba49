"""The ledger's vocabulary: what each part of an input declares it holds.

A report that is not whole must never pass for a clean one (docs/how-it-works.md#the-ledger).
So every part of an input (a file, a package's member, a device image, a cache entry) says
which kernels it declares, from its own table and not from what zeinspect managed to read:

- a SYCL image: its descriptor's offload entries (the kernels the runtime looks up in it),
  also when the image itself cannot be decoded;
- a SPIR-V module: its `OpEntryPoint ... Kernel` instructions;
- a zebin: the kernels its `.ze_info` lists; an ocloc fat binary: its members' kernels;
- a Triton cache entry: the specialization it holds.

Each declared kernel then ends in one of three places (judge.coverage): reported, excluded
for a reason from the closed list `Exclusion`, or unread (a failure, exit 3).  Kinds with no
table of their own (OpenCL C sources, build logs) declare nothing: their parts say "not
declared" (`Part.kernels` is None), and the docs list them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .model import InputId

STOPPED = "stopped before it was screened"
"""Why a kernel has no report in a run stopped by Ctrl-C or SIGTERM: said once, in the stop's
line (exit 130), not in an incident per part."""


class Exclusion(enum.StrEnum):
    """Why a declared kernel has no report, when that is by design: the closed list."""

    NOT_APPLICABLE = "not applicable on the targets"
    """Its image has a device requirement no target asked for meets (reports say N/A)."""
    OTHER_TARGETS = "a native image for targets not asked for"
    FILTERED = "filtered by --kernel"
    INTERNAL = "IGC's internal kernel"
    GRAPHICS = "a graphics shader"
    OTHER_DEVICE = "an image for another kind of device"
    """An image for a CPU, or another vendor's GPU (its triple says so)."""
    FROM_IR = "a Triton entry compiled from IR, with no TTIR to rebuild"
    DEVICE_UNKNOWN = "a native image whose device has no IP version to match the targets asked for"
    """A legacy patch-token binary (or a zebin without its product note): read as it is without
    --targets; with them, zeinspect cannot tell which it is for."""
    BEFORE_LINK = "LLVM bitcode in an object, before its device link"
    """Device code a program links in (a fat object's or static archive's bitcode bundle: device
    libraries, a user's objects): what runs is the linked program's images, audited there."""
    ACCEPTED = "listed as unreadable in the ratchet"


@dataclass(frozen=True)
class Part:
    """One part of an input and what it declares."""

    input: str
    """What the user named that holds it (a file, a package, a cache folder): the totals' key."""
    label: str
    """The part's name, as its reports' `input` spells it (`lib.so[.tgtimg[3]]`)."""
    kernels: tuple[str, ...] | None
    """The kernels it declares; None: its kind has no table to declare them ("not declared")."""
    declared_by: str
    """Where the declaration comes from: "SYCL offload entries", "SPIR-V entry points", ..."""
    unread: str | None = None
    """Why the part could not be read (None: it was read); its kernels are unread unless excluded."""
    excluded: Exclusion | None = None
    """The whole part is left out by design, for this reason."""
    detail: str = ""
    """What the exclusion or the failure is about (the image's targets, its triple)."""
    ips: tuple[str, ...] = ()
    """For a native image: the IP versions it holds code for (its other targets are excluded)."""
    compiled: bool = False
    """Built here for every target asked for (SPIR-V, OpenCL C), rather than read as it is."""
    targets: tuple[str, ...] | None = None
    """The targets it needs a report on, where the part names its own (a gate's Triton entry);
    None: those the run built for (`compiled`), or its native code's."""
    copies: int = 1
    """How many of the input's own entries the part stands for (a Triton specialization found
    in several cache entries is screened once)."""

    def to_json(self) -> dict:
        return {"input": self.input, "part": self.label, "declared_by": self.declared_by,
                "kernels": list(self.kernels) if self.kernels is not None else None, "unread": self.unread,
                "excluded": self.excluded.value if self.excluded else None, "detail": self.detail,
                "copies": self.copies}


def input_of(origin: InputId) -> str:
    """The input a part's totals belong to: the package that ships it, else the file (what a
    report summary counts a kernel once within: KernelReport.identity)."""
    return origin.package or origin.file
