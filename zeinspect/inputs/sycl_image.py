"""What the SYCL runtime knows about each device image: its descriptor and property sets.

In the old offload model the host code registers, at start-up, one device-binary
descriptor per image (intel/llvm `sycl/include/sycl/detail/compiler.hpp`):

    u16 Version; u8 Kind (4 = SYCL); u8 Format; (pad to 8)
    char *DeviceTargetSpec; char *CompileOptions; char *LinkOptions;
    [char *ManifestStart; char *ManifestEnd;]          versions 1 and 2 only
    u8 *BinaryStart; u8 *BinaryEnd;
    entry *EntriesBegin, *EntriesEnd;                  {void *addr; char *name; u64 size; i32 flags; i32 reserved}
    property_set *PropertySetsBegin, *PropertySetsEnd; {char *Name; property *Begin, *End}
                                                       property: {char *Name; void *ValAddr; u32 Type; u64 ValSize}

In a linked shared object or PIE executable every pointer is an R_X86_64_RELATIVE
relocation.  A descriptor is found from its image: the image's address appears twice among
the relocation addends, once in `.tgtimg` and once as the descriptor's BinaryStart, which
is followed by BinaryEnd (after the start), and preceded by a header with Kind = 4 and a
known version whose string pointers resolve (otherwise the image simply has no descriptor).
Checked on oneMKL's RNG library (version 3, 80 bytes apart) and dpctl's libraries.  The new
offload model carries compile and link options as OffloadBinary strings (`compile-opts`,
`link-opts`); those are read in offload.py.

Property values: type 1 is a u32 kept in ValSize, type 2 a byte array whose first 8 bytes
hold its size in bits, type 3 a string (PropertySets.md).
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

SYCL_KIND = 4
FORMATS = {0: "none", 1: "native", 2: "spirv", 3: "llvmir_bitcode", 4: "compressed_none"}
PROP_UINT32, PROP_BYTE_ARRAY, PROP_STRING = 1, 2, 3
MAX_SETS = 64
MAX_PROPERTIES = 100_000
MAX_VALUE = 16 << 20

# SYCL's own `aspect` enumeration (sycl/include/sycl/info/aspects.def): the names of the
# values a `SYCL/device requirements` `aspects` array holds.  Only the ones zeinspect can
# name; any other value is shown as `aspect N`.
ASPECT_NAMES = {0: "host", 1: "cpu", 2: "gpu", 3: "accelerator", 4: "custom", 5: "fp16", 6: "fp64",
                28: "atomic64"}


def aspect_name(value: int) -> str:
    return ASPECT_NAMES.get(value, f"aspect {value}")


@dataclass(frozen=True)
class ImageInfo:
    """The descriptor of one SYCL device image, as the runtime sees it."""

    target_spec: str | None = None
    """`spir64`, `spir64_gen`, ..."""
    compile_options: str = ""
    link_options: str = ""
    version: int | None = None
    format: str | None = None
    entries: tuple[str, ...] = ()
    """Offload entry names: the kernels the runtime looks up in this image."""
    properties: dict = field(default_factory=dict, compare=False, hash=False)
    """{set name: {property name: int | str | bytes}} (byte arrays without their size header)."""

    @property
    def aspects(self) -> tuple[int, ...]:
        raw = self.properties.get("SYCL/device requirements", {}).get("aspects")
        if not isinstance(raw, bytes):
            return ()
        return tuple(struct.unpack_from(f"<{len(raw) // 4}I", raw))

    @property
    def has_spec_constants(self) -> bool:
        return bool(self.properties.get("SYCL/specialization constants"))

    def to_json(self) -> dict:
        return {
            "target_spec": self.target_spec, "compile_options": self.compile_options,
            "link_options": self.link_options, "version": self.version, "format": self.format,
            "entries": list(self.entries),
            "aspects": [aspect_name(a) for a in self.aspects],
            "property_sets": {name: {key: _json_value(value) for key, value in props.items()}
                              for name, props in self.properties.items()},
        }


def _json_value(value):
    if isinstance(value, bytes):
        shown = value[:256].hex()
        return {"bytes": len(value), "hex": shown + ("..." if len(value) > 256 else "")}
    return value


class _Memory:
    """Reads a linked ELF by virtual address; pointers are RELATIVE addends where relocated."""

    def __init__(self, data: bytes, sections, relative: dict[int, int]):
        self.data = data
        self.relative = relative
        spans = sorted((s["sh_addr"], s["sh_addr"] + s["sh_size"], s["sh_offset"]) for s in sections
                       if s["sh_type"] != "SHT_NOBITS" and s["sh_flags"] & 2 and s["sh_size"])
        self.starts = [a for a, _, _ in spans]
        self.spans = spans

    def offset(self, addr: int, size: int = 1) -> int | None:
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        start, end, off = self.spans[i]
        if addr + size > end:
            return None
        return off + addr - start

    def pointer(self, addr: int) -> int | None:
        """The pointer stored at addr (0 for a null pointer): a RELATIVE addend where relocated."""
        if addr in self.relative:
            return self.relative[addr]
        off = self.offset(addr, 8)
        return None if off is None else struct.unpack_from("<Q", self.data, off)[0]

    def raw(self, addr: int, size: int) -> bytes | None:
        off = self.offset(addr, size)
        return None if off is None else self.data[off:off + size]

    def cstr(self, addr: int, limit: int = 1 << 16) -> str | None:
        if not addr:
            return ""
        off = self.offset(addr)
        if off is None:
            return None
        end = self.data.find(b"\0", off, off + limit)
        return None if end < 0 else self.data[off:end].decode("utf-8", "replace")


def descriptors(data: bytes, sections, relative: dict[int, int], images: list[tuple[int, int]],
                tgtimg_span: tuple[int, int]) -> list[ImageInfo | None]:
    """The descriptor of each (address, size) image, or None where none is found."""
    wanted = {addr for addr, _ in images}
    where: dict[int, list[int]] = {}
    lo, hi = tgtimg_span
    for r_offset, addend in relative.items():
        if addend in wanted and not lo <= r_offset < hi:
            where.setdefault(addend, []).append(r_offset)
    mem = _Memory(data, sections, relative)
    out: list[ImageInfo | None] = []
    for addr, _size in images:
        info = None
        for loc in where.get(addr, ()):
            # BinaryEnd follows: after the start, though not always start + size (a compressed
            # image's record may give its decompressed size).
            end = mem.pointer(loc + 8)
            if end is not None and end > addr:
                info = _descriptor_at(mem, loc)
                if info is not None:
                    break
        out.append(info)
    return out


def _descriptor_at(mem: _Memory, binary_start: int) -> ImageInfo | None:
    for header, has_manifest in ((binary_start - 32, False), (binary_start - 48, True)):
        raw = mem.raw(header, 4)
        if raw is None:
            continue
        version, kind, fmt = struct.unpack("<HBB", raw)
        if kind != SYCL_KIND or (version >= 3) == has_manifest or not 1 <= version <= 16:
            continue
        strings = [mem.cstr(p) if p is not None else None
                   for p in (mem.pointer(header + 8), mem.pointer(header + 16), mem.pointer(header + 24))]
        if any(s is None for s in strings):
            continue
        return ImageInfo(target_spec=strings[0], compile_options=strings[1] or "", link_options=strings[2] or "",
                         version=version, format=FORMATS.get(fmt, str(fmt)),
                         entries=tuple(_entries(mem, binary_start + 16)),
                         properties=_property_sets(mem, binary_start + 32))
    return None


def _array(mem: _Memory, at: int, item: int, limit: int) -> range | None:
    begin, end = mem.pointer(at), mem.pointer(at + 8)
    if begin is None or end is None or end < begin or (end - begin) % item or (end - begin) // item > limit:
        return None
    return range(begin, end, item)


def _entries(mem: _Memory, at: int) -> list[str]:
    items = _array(mem, at, 32, MAX_PROPERTIES)
    names = []
    for entry in items or ():
        name = mem.cstr(mem.pointer(entry + 8) or 0)
        if name:
            names.append(name)
    return names


def _property_sets(mem: _Memory, at: int) -> dict:
    sets: dict = {}
    for s in _array(mem, at, 24, MAX_SETS) or ():
        name = mem.cstr(mem.pointer(s) or 0)
        if not name:
            continue
        props = {}
        for p in _array(mem, s + 8, 32, MAX_PROPERTIES) or ():
            key = mem.cstr(mem.pointer(p) or 0)
            head = mem.raw(p + 16, 16)
            if not key or head is None:
                continue
            kind, _pad, size = struct.unpack("<IIQ", head)
            if kind == PROP_UINT32:
                props[key] = size
            elif kind == PROP_STRING:
                props[key] = mem.cstr(mem.pointer(p + 8) or 0)
            elif kind == PROP_BYTE_ARRAY and size <= MAX_VALUE:
                raw = mem.raw(mem.pointer(p + 8) or 0, size) if size else b""
                if raw is not None:
                    props[key] = raw[8:] if len(raw) >= 8 else raw
        sets[name] = props
    return sets


def options_for_target(compile_options: str, link_options: str, target_names: tuple[str, ...]
                       ) -> tuple[list[str], list[str]]:
    """The backend options the SYCL runtime builds an image with on a device of these names.

    The runtime builds a module with its compile and link options together.  Two options
    are SYCL-level and rewritten per device, as the runtime does:
    `-ftarget-register-alloc-mode=DEV:OPT[,DEV:OPT]` becomes OPT on a device named DEV
    (an ocloc name or its prefix, e.g. `pvc`, `bmg`) and disappears elsewhere;
    `-ftarget-compile-fast` is dropped (it only selects IGC tuning).  Returns (options as
    separate words, notes)."""
    import shlex

    text = f"{compile_options} {link_options}"
    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    out, notes = [], []
    for token in tokens:
        if token.startswith("-ftarget-register-alloc-mode="):
            for pair in token.split("=", 1)[1].split(","):
                device, _, option = pair.partition(":")
                if option and any(n == device or n.startswith(device + "-") for n in target_names):
                    out.append(option)
                    notes.append(f"image option {token}: {option} on this target")
        elif token == "-ftarget-compile-fast":
            notes.append("image option -ftarget-compile-fast: not passed (IGC tuning only)")
        else:
            out.append(token)
    return out, notes
