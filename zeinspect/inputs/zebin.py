"""Read a zebin (one device's native binary): its target, its .ze_info, its kernels.

Layout (IGC ZEBinWriter spec, NEO zebin_elf.h): ELF64 little-endian, e_machine 205
(EM_INTELGT), `.text.<kernel>` per kernel, `.ze_info` YAML, `.note.intelgt.compat` with
the product family (1), core family (2), zebin version (4) and, since 1.33, the IP
version (6).  Old zebins (IGC 1.0) carry no IP version: the product family tells the
generation, and the caller usually knows the exact target.
"""

from __future__ import annotations

import dataclasses
import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError
from ..hardware import PRODUCT_FAMILIES
from ..model import KernelFigures, ip_is_xe_hp_or_later
from .files import Buffer, BufferStream
from .strict_yaml import load_yaml_strictly
from .zeinfo import derive_kernels

EM_INTELGT = 205
SHT_ZEBIN_SPIRV = 0xFF000009
SHT_ZEBIN_ZEINFO = 0xFF000011
SHT_ZEBIN_MISC = 0xFF000014

NOTE_PRODUCT_FAMILY = 1
NOTE_GFXCORE_FAMILY = 2
NOTE_ZEBIN_VERSION = 4
NOTE_PRODUCT_CONFIG = 6

def ip_from_product_config(value: int) -> str:
    """Decode NOTE_PRODUCT_CONFIG: revision:6 | reserved:8 | release:8 | architecture:10."""
    return f"{value >> 22}.{(value >> 14) & 0xFF}.{value & 0x3F}"


@dataclass(frozen=True)
class Zebin:
    ip: str | None
    """IP version from the note, or from a product family that has only one."""
    family_label: str | None
    """The product family's name when the IP is not known exactly (`dg2`)."""
    xe_hp_or_later: bool | None
    zebin_version: str | None
    zeinfo_version: tuple[int, int]
    kernels: tuple[KernelFigures, ...]
    build_options: str | None
    has_spirv: bool


def looks_like_elf(data: Buffer) -> bool:
    return data[:4] == b"\x7fELF"


def read_elf(data: Buffer, what: str) -> Any:
    """Open ELF bytes with pyelftools, turning its many failure modes into FormatError."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    if not looks_like_elf(data):
        raise FormatError(f"{what} is not an ELF file")
    try:
        # BytesIO shares a bytes object's buffer; anything else (a large library's map) is
        # read through a stream that copies only what pyelftools asks for.
        elf = ELFFile(io.BytesIO(data) if isinstance(data, bytes) else BufferStream(data))  # type: ignore[arg-type]
        sections = []
        for section in elf.iter_sections():
            offset, size = section["sh_offset"], section["sh_size"]
            if section["sh_type"] != "SHT_NOBITS" and size and offset + size > len(data):
                raise FormatError(f"{what}: section {section.name!r} runs past the end of the file")
            sections.append(section)
        return elf, sections
    except FormatError:
        raise
    except (ELFError, struct.error, ValueError, IndexError, KeyError, TypeError, AttributeError,
            UnicodeDecodeError, OverflowError, AssertionError) as exc:
        raise FormatError(f"{what} is a damaged ELF file ({exc.__class__.__name__}: {exc})"[:300]) from None


_FOREIGN_PARSE_ERRORS = (struct.error, ValueError, IndexError, KeyError, TypeError, AttributeError,
                         UnicodeDecodeError, OverflowError, AssertionError, MemoryError, RecursionError,
                         zlib.error)  # pyelftools inflates SHF_COMPRESSED sections on access


def elf_errors_as_format_errors(reader: Callable) -> Callable:
    """pyelftools reads lazily and raises its own (and Python's) errors from any accessor:
    a reader of untrusted ELF files turns all of them into FormatError, naming the file."""
    import functools

    @functools.wraps(reader)
    def wrapper(data: bytes, what: str = "binary", *args: Any, **kwargs: Any) -> Any:
        from elftools.common.exceptions import ELFError

        try:
            return reader(data, what, *args, **kwargs)
        except FormatError:
            raise
        except (ELFError, *_FOREIGN_PARSE_ERRORS) as exc:
            raise FormatError(f"{what} is a damaged ELF file ({exc.__class__.__name__}: {exc})"[:300]) from None

    return wrapper


def _notes(data: bytes) -> dict[int, bytes]:
    out = {}
    off = 0
    while off + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from("<III", data, off)
        off += 12
        name_end = off + ((namesz + 3) & ~3)
        desc_end = name_end + ((descsz + 3) & ~3)
        if desc_end > len(data) + 3:  # the last descriptor may lack its padding
            raise FormatError("ELF note runs past the end of its section")
        if data[off:off + namesz].rstrip(b"\0") == b"IntelGT":
            out[kind] = data[name_end:name_end + descsz]
        off = desc_end
    return out


def is_zebin(data: bytes) -> bool:
    return looks_like_elf(data) and len(data) >= 20 and struct.unpack_from("<H", data, 18)[0] == EM_INTELGT


SHF_COMPRESSED = 0x800


def _plain_zebin_sections(data: bytes, what: str) -> list[tuple[str, int, bytes]] | None:
    """(name, type, bytes) of each section of an ordinary zebin (ELF64, little-endian,
    e_machine 205, no compressed sections), read directly; None for anything else, which
    pyelftools then reads.  Measured on a 5,204-image SYCL library: opening each zebin with
    pyelftools was a third of zeinspect's own time per compile (bench/sycl_library.py)."""
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        return None
    machine, = struct.unpack_from("<H", data, 18)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    if machine != EM_INTELGT or shentsize != 64 or not 0 < shstrndx < shnum or shoff + 64 * shnum > len(data):
        return None
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + 64 * i) for i in range(shnum)]
    if any(flags & SHF_COMPRESSED for _, _, flags, _, _, _ in headers):
        return None
    _, _, _, _, str_off, str_size = headers[shstrndx]
    if str_off + str_size > len(data):
        raise FormatError(f"{what}: its section name table runs past the end of the file")
    names = data[str_off:str_off + str_size]
    out = []
    for name_off, kind, _flags, _addr, offset, size in headers:
        end = names.find(b"\0", name_off)
        name = names[name_off:end if end >= 0 else None].decode("utf-8", "replace") if name_off < len(names) else ""
        if kind != 8 and size and offset + size > len(data):  # 8: SHT_NOBITS
            raise FormatError(f"{what}: section {name!r} runs past the end of the file")
        out.append((name, kind, b"" if kind == 8 else data[offset:offset + size]))
    return out


def _zebin_sections(data: bytes, what: str) -> list[tuple[str, int | str, bytes]] | list[tuple[str, int, bytes]]:
    fast = _plain_zebin_sections(data, what) if looks_like_elf(data) else None
    if fast is not None:
        return fast
    elf, sections = read_elf(data, what)
    if elf.header["e_machine"] not in ("EM_INTEL205", EM_INTELGT):
        raise FormatError(f"{what} is an ELF file but not an Intel GPU binary (e_machine {elf.header['e_machine']})")
    return [(s.name, s["sh_type"], s.data()) for s in sections]


def zebin_ir(data: bytes, what: str = "zebin") -> tuple[bytes, str] | None:
    """(SPIR-V, build options) a zebin keeps beside its code (`.spv`, `.misc.buildOptions`): what the
    driver rebuilds it from on a device it was not built for (compute-runtime,
    device_binary_format_zebin.cpp: "Invalid target device. Rebuilding from intermediate
    representation."); None for a zebin without it (ocloc -exclude_ir)."""
    spirv, options = None, ""
    for name, kind, content in _zebin_sections(data, what):
        if kind == SHT_ZEBIN_SPIRV or name == ".spv":
            spirv = content
        elif kind == SHT_ZEBIN_MISC or name == ".misc.buildOptions":
            options = content.decode("utf-8", "replace").strip("\0 \n")
    return (bytes(spirv), options) if spirv else None


SHT_SYMTAB, SHT_REL = 2, 9


def _called(sections: list, kernels: set[str]) -> dict[str, tuple[str, ...]]:
    """Kernel -> the functions outside it its code calls, as the zebin's symbol table names them:
    the symbols the relocations of its `.rel.text.<kernel>` section point at that are functions
    or undefined (an imported function, such as the SYCL device library's, which the runtime
    links in at load time), but for the kernels and IGC's own (`_entry`, `__INTEL_PATCH_*`).
    What IGC kept as calls: with `has_stack_calls`, the callees of its call stack."""
    symtab = next((c for n, k, c in sections if k == SHT_SYMTAB or n == ".symtab"), None)
    strtab = next((c for n, _, c in sections if n == ".strtab"), None)
    if symtab is None or strtab is None:
        return {}
    symbols = []
    for at in range(0, len(symtab) - len(symtab) % 24, 24):
        name_at, info, _other, shndx = struct.unpack_from("<IBBH", symtab, at)
        end = strtab.find(b"\0", name_at)
        name = strtab[name_at:end if end >= 0 else None].decode("utf-8", "replace") if name_at < len(strtab) else ""
        symbols.append((name, info & 0xF, shndx))
    out: dict[str, tuple[str, ...]] = {}
    for name, kind, content in sections:
        if not (kind == SHT_REL or kind == "SHT_REL") or not name.startswith(".rel.text."):
            continue
        found: dict[str, None] = {}
        for at in range(0, len(content) - len(content) % 16, 16):
            index = struct.unpack_from("<Q", content, at + 8)[0] >> 32
            if index >= len(symbols):
                continue
            symbol, sym_type, shndx = symbols[index]
            if symbol and symbol not in kernels and symbol != "_entry" and not symbol.startswith("__INTEL_PATCH") \
                    and (sym_type == 2 or shndx == 0):  # STT_FUNC, or SHN_UNDEF
                found[symbol] = None
        if found:
            out[name[len(".rel.text."):]] = tuple(found)
    return out


@elf_errors_as_format_errors
def read_zebin(data: bytes, what: str = "zebin", *, target_ip: str | None = None) -> Zebin:
    """Parse a zebin.  `target_ip` (when we compiled it ourselves) wins over the notes."""
    zeinfo_text = None
    notes: dict[int, bytes] = {}
    build_options = None
    has_spirv = False
    text_sections = 0
    code: dict[str, int] = {}
    sections = _zebin_sections(data, what)
    for name, kind, content in sections:
        if name == ".ze_info" or kind == SHT_ZEBIN_ZEINFO:
            zeinfo_text = content
        elif name == ".note.intelgt.compat":
            notes = _notes(content)
        elif kind == SHT_ZEBIN_MISC or name == ".misc.buildOptions":
            build_options = content.decode("utf-8", "replace").strip("\0 \n")
        elif kind == SHT_ZEBIN_SPIRV or name == ".spv":
            has_spirv = True
        elif name.startswith(".text."):
            text_sections += 1
            code[name[len(".text."):]] = len(content)
    if zeinfo_text is None:
        # Old "LTS" drivers: IGC exited 0 on a PTSS overflow and wrote a zebin without
        # .text/.ze_info; users then saw ZE_RESULT_ERROR_INVALID_KERNEL_NAME.
        raise FormatError(
            f"{what} is a zebin without a .ze_info section"
            + (" or kernel code (a broken build, e.g. after a scratch overflow)" if not text_sections else "")
        )

    ip = target_ip
    family_label = None
    if ip is None and NOTE_PRODUCT_CONFIG in notes and len(notes[NOTE_PRODUCT_CONFIG]) >= 4:
        ip = ip_from_product_config(struct.unpack_from("<I", notes[NOTE_PRODUCT_CONFIG])[0])
    xe_hp = None
    if ip is not None:
        try:
            xe_hp = ip_is_xe_hp_or_later(ip)
        except ValueError:
            raise FormatError(f"{what}: unreadable IP version {ip!r}") from None
    elif NOTE_PRODUCT_FAMILY in notes and len(notes[NOTE_PRODUCT_FAMILY]) >= 4:
        family = struct.unpack_from("<I", notes[NOTE_PRODUCT_FAMILY])[0]
        label, family_ip, xe_hp = PRODUCT_FAMILIES.get(family, (f"product family {family}", None, None))
        ip = family_ip
        family_label = None if family_ip else label
    zebin_version = notes.get(NOTE_ZEBIN_VERSION, b"").rstrip(b"\0").decode("ascii", "replace") or None

    document = load_yaml_strictly(zeinfo_text, f"{what}: .ze_info")
    version, kernels = derive_kernels(document, xe_hp_or_later=xe_hp)
    called = _called(sections, {k.name for k in kernels})
    return Zebin(
        ip=ip,
        family_label=family_label,
        xe_hp_or_later=xe_hp,
        zebin_version=zebin_version,
        zeinfo_version=version,
        kernels=tuple(dataclasses.replace(k, code_bytes=code.get(k.name), calls=called.get(k.name, ()))
                      if k.name in code or k.name in called else k for k in kernels),
        build_options=build_options,
        has_spirv=has_spirv,
    )
