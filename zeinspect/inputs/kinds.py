"""The kinds of file (and of embedded device image) zeinspect recognises.

A `StrEnum`, so a kind prints and serialises as its name (`spirv`) in manifests and
JSON.  Adding a kind: a member here, a reader module in inputs/, one line in
`inputs.DETECTORS`, and (for a kind that yields kernels) its probe in probes/collect.py.
"""

from __future__ import annotations

import enum

SOURCE_SUFFIXES = (".cl",)
"""OpenCL C is plain text: its suffix, not its content, says what it is."""


class InputKind(enum.StrEnum):
    OPENCL = "opencl"
    """OpenCL C source (.cl)."""
    SPIRV = "spirv"
    ZEBIN = "zebin"
    PATCHTOKENS = "patchtokens"
    """A legacy patch-token device binary."""
    FATBIN = "fatbin"
    """An ocloc fat binary (an `ar` archive of per-target binaries)."""
    HOST = "host"
    """An x86-64 object, executable, shared object or static archive that may carry device images."""
    ELF = "elf"
    """An ELF file that is neither a device binary nor a host file."""
    BITCODE = "bitcode"
    ZSTD = "zstd"
    OFFLOAD_BINARY = "offload-binary"
    UNKNOWN = "unknown"

    @property
    def compilable(self) -> bool:
        """Compiled by ocloc for each target (a source or SPIR-V), rather than read as built."""
        return self in (InputKind.OPENCL, InputKind.SPIRV)

    @property
    def loads_on_device(self) -> bool:
        """Level Zero builds it on a device: a source (through ocloc's front end), SPIR-V or a zebin."""
        return self in (InputKind.OPENCL, InputKind.SPIRV, InputKind.ZEBIN)
