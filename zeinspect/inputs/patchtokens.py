"""Read legacy patch-token binaries ("Intel(R) OpenCL Device Binary"), the format old
ocloc writes by default.

An ELF with e_type 0xff04 holding a section named "Intel(R) OpenCL Device Binary":
a program header (magic 'CTNI', version, core family, pointer size, kernel count,
stepping, patch list size), then per kernel a 40-byte header, its name, its heaps and
its patch list of {u32 token, u32 size} items (IGC patch_list.h / patch_shared.h).
The scratch figures live in MEDIA_VFE_STATE (18) and ALLOCATE_STATELESS_PRIVATE_MEMORY (38).
"""

from __future__ import annotations

import struct

from ..errors import FormatError
from ..model import KernelFigures
from .zebin import elf_errors_as_format_errors, read_elf

PROGRAM_MAGIC = 0x494E5443  # 'CTNI'
SECTION_NAME = "Intel(R) OpenCL Device Binary"

TOKEN_ALLOCATE_LOCAL_SURFACE = 15
TOKEN_MEDIA_VFE_STATE = 18
TOKEN_EXECUTION_ENVIRONMENT = 23
TOKEN_ALLOCATE_STATELESS_PRIVATE_MEMORY = 38

# GFXCORE_FAMILY values of the program header's Device field.
CORE_FAMILIES = {12: "Gen9", 13: "Gen10", 14: "Gen11", 18: "Gen12LP (Xe-LP)", 3077: "Xe-HP",
                 3079: "Xe-HPG", 3080: "Xe-HPC"}


PROGRAM_HEAD = struct.pack("<I", PROGRAM_MAGIC)
"""A patch-token program on its own, without its ELF: what NEO keeps in its persistent compiler
cache (a `.l0_cache` or `.cl_cache` file) for a patch-token build (Debian 12's driver on
Xe-HPG and earlier; seen writing one for a module it built for the hardware-free dg2)."""


def is_patchtoken_binary(data: bytes) -> bool:
    return (data[:4] == b"\x7fELF" and len(data) >= 18 and struct.unpack_from("<H", data, 16)[0] == 0xFF04) or \
        data[:4] == PROGRAM_HEAD


@elf_errors_as_format_errors
def read_patchtoken_binary(data: bytes, what: str = "binary") -> tuple[str, list[KernelFigures]]:
    """Returns (core family label, kernel figures)."""
    if data[:4] == PROGRAM_HEAD:
        try:
            return _read_program(data, what)
        except struct.error:
            raise FormatError(f"{what}: patch-token program is truncated") from None
    _, sections = read_elf(data, what)
    blob = None
    for section in sections:
        if section.name == SECTION_NAME:
            blob = section.data()
    if blob is None:
        raise FormatError(f"{what} is an OpenCL ELF without an '{SECTION_NAME}' section (an IR-only binary)")
    try:
        return _read_program(blob, what)
    except struct.error:
        raise FormatError(f"{what}: patch-token program is truncated") from None


def _read_program(blob: bytes, what: str) -> tuple[str, list[KernelFigures]]:
    magic, _version, core, _ptr, count, _stepping, program_patches = struct.unpack_from("<7I", blob, 0)
    if magic != PROGRAM_MAGIC:
        raise FormatError(f"{what}: patch-token program has a bad magic number")
    family = CORE_FAMILIES.get(core, f"core family {core}")
    off = 28 + program_patches
    kernels = []
    for _ in range(count):
        _cs, _hash, name_size, patch_size, heap, gsh, dsh, ssh, _unpadded = struct.unpack_from("<IQIIIIIII", blob, off)
        off += 40
        name = blob[off:off + name_size].split(b"\0", 1)[0].decode("utf-8", "replace")
        off += name_size + heap + gsh + dsh + ssh
        end = off + patch_size
        if end > len(blob):
            raise FormatError(f"{what}: kernel {name!r} patch list runs past the end"[:200])
        simd = grf = None
        spill = private = slm = 0
        private_per_lane = None
        while off < end:
            token, size = struct.unpack_from("<II", blob, off)
            if size < 8 or off + size > end:
                raise FormatError(f"{what}: kernel {name!r} has a malformed patch token"[:200])
            body = blob[off + 8:off + size]
            if token == TOKEN_MEDIA_VFE_STATE and len(body) >= 8:
                spill = struct.unpack_from("<I", body, 4)[0]
            elif token == TOKEN_ALLOCATE_STATELESS_PRIVATE_MEMORY and len(body) >= 16:
                size_field = struct.unpack_from("<I", body, 12)[0]
                simt = struct.unpack_from("<I", body, 16)[0] if len(body) >= 20 else 0
                private_per_lane = (size_field, bool(simt))
            elif token == TOKEN_EXECUTION_ENVIRONMENT and len(body) >= 16:
                simd = struct.unpack_from("<I", body, 12)[0] or None
                if len(body) >= 84:
                    grf = struct.unpack_from("<I", body, 80)[0] or None
            elif token == TOKEN_ALLOCATE_LOCAL_SURFACE and len(body) >= 8:
                slm = struct.unpack_from("<I", body, 4)[0]
            off += size
        if private_per_lane is not None:
            size_field, simt = private_per_lane
            private = size_field * (simd or 1) if simt else size_field
        kernels.append(
            KernelFigures(
                name=name, simd=simd, grf=grf, spill_bytes=spill, private_bytes=private, slm_bytes=slm,
                scratch_space_bytes=spill, largest_scratch_slot=spill,
            )
        )
        off = end
    return family, kernels
