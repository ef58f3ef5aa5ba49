"""Read ocloc fat binaries: plain `ar` archives with one device binary per member.

Layout (NEO shared/source/device_binary_format/ar): "!<arch>\\n", then members with a
60-byte header (name[16] ending in '/', ..., size[10] decimal, "`\\n"), data padded to an
even offset.  `pad_N` members only align the next one.  Member names are
`<32|64>.<entry>` where entry is an IP version (`12.55.8`), a generic acronym (`dg2`) or,
before 2022, `<product>.<stepping>`.  `generic_ir` holds SPIR-V for JIT fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FormatError
from ..model import is_ip
from .files import Buffer

AR_MAGIC = b"!<arch>\n"
HEADER = 60


@dataclass(frozen=True)
class Member:
    name: str
    offset: int
    data: bytes

    @property
    def entry(self) -> str:
        """The device part of the name: `12.55.8`, `dg2`, `generic_ir`."""
        head, _, rest = self.name.partition(".")
        return rest if head in ("32", "64") and rest else self.name

    @property
    def ip(self) -> str | None:
        return self.entry if is_ip(self.entry) else None


def is_fatbin(data: Buffer) -> bool:
    return data[:8] == AR_MAGIC


def read_members(data: Buffer, what: str = "archive") -> list[Member]:
    """All non-padding members, in order.  Raises FormatError on any inconsistency."""
    if not is_fatbin(data):
        raise FormatError(f"{what} is not an ar archive")
    members = []
    off = len(AR_MAGIC)
    while off < len(data):
        if data[off:off + 1] == b"\n" and off + 1 == len(data):
            break  # trailing pad byte
        if off + HEADER > len(data):
            raise FormatError(f"{what}: archive member header at byte {off} is truncated")
        header = data[off:off + HEADER]
        if header[58:60] != b"`\n":
            raise FormatError(f"{what}: archive member header at byte {off} is damaged")
        raw_name = header[:16].decode("ascii", "replace").rstrip()
        size_text = header[48:58].decode("ascii", "replace").strip()
        if not size_text.isdigit():
            raise FormatError(f"{what}: archive member at byte {off} has a bad size field")
        size = int(size_text)
        start = off + HEADER
        if start + size > len(data):
            raise FormatError(f"{what}: archive member {raw_name!r} runs past the end of the file"[:200])
        name = raw_name[:-1] if raw_name.endswith("/") else raw_name
        if raw_name.startswith("//") or raw_name.startswith("/"):
            name = raw_name  # symbol or long-name table: kept, never a device binary
        if not name.startswith("pad_"):
            members.append(Member(name=name, offset=start, data=data[start:start + size]))
        off = start + size
        if off % 2:
            off += 1
    return members


SHT_OPENCL_SPIRV = 0xFF000009
SHT_OPENCL_OPTIONS = 0xFF000006
"""NEO's OpenCL ELF section types (shared/source/device_binary_format/elf/ocl_elf.h): what ocloc
writes as a fat binary's `generic_ir` member, the SPIR-V the driver falls back on and the build
options the native members were built with."""


def generic_ir(data: Buffer, what: str = "generic_ir") -> tuple[bytes, str]:
    """(SPIR-V, build options) of a fat binary's `generic_ir` member: an OpenCL ELF (sections
    `SPIRV Object` and `BuildOptions`), or raw SPIR-V as older ocloc wrote it."""
    import io

    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    from .spirv import is_spirv

    head = bytes(data[:4])
    if is_spirv(head):
        return bytes(data), ""
    spirv, options = None, ""
    try:
        for section in ELFFile(io.BytesIO(bytes(data))).iter_sections():
            kind = section["sh_type"]
            if kind == SHT_OPENCL_SPIRV:
                spirv = section.data()
            elif kind == SHT_OPENCL_OPTIONS:
                options = section.data().rstrip(b"\0").decode("utf-8", "replace")
    except (ELFError, ValueError, OSError) as exc:
        raise FormatError(f"{what}: not an OpenCL ELF ({exc})") from None
    if spirv is None:
        raise FormatError(f"{what}: an OpenCL ELF without a SPIR-V section")
    return spirv, options


GENERIC_IR_SUFFIX = "(generic_ir)"
"""How an input built from a fat binary's generic_ir member is named: `lib.so[.tgtimg[2]](generic_ir)`."""
NATIVE_IR_SUFFIX = "(ir)"
"""How an input built from a zebin's own SPIR-V is named: `lib.so[.tgtimg[0]](ir)`."""
