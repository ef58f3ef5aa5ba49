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
from typing import Any

from ..model import GrfMode
from .files import Buffer
from .sycl_aspects import ASPECTS

SYCL_KIND = 4
FORMATS = {0: "none", 1: "native", 2: "spirv", 3: "llvmir_bitcode", 4: "compressed_none"}
PROP_UINT32, PROP_BYTE_ARRAY, PROP_STRING = 1, 2, 3
MAX_SETS = 64
MAX_PROPERTIES = 100_000
MAX_VALUE = 16 << 20


def aspect_name(number: int, abi: int | None) -> str | None:
    """The name of aspect `number` in the numbering of libsycl.so.`abi`; None when zeinspect
    cannot name it.  With the ABI unknown (an image without a host file), only numbers that
    every known ABI names alike are named."""
    table = ASPECTS.get(abi) if abi is not None else None
    if table is not None:
        return table.get(number)
    found = {t.get(number) for t in ASPECTS.values()}
    return found.pop() if len(found) == 1 and None not in found else None


def aspect_label(number: int, abi: int | None) -> str:
    name = aspect_name(number, abi)
    if name is not None:
        return name
    numbering = f"libsycl.so.{abi}" if abi is not None else "an unknown SYCL runtime"
    return f"aspect {number} (unknown in {numbering}'s numbering)"


@dataclass(frozen=True)
class DeviceRequirements:
    """An image's `SYCL/device requirements`, as the program manager reads them
    (intel/llvm sycl/source/detail/program_manager/program_manager.cpp,
    checkDevSupportDeviceRequirements; the names are written by the compiler's
    llvm/lib/SYCLLowerIR/SYCLDeviceRequirements.cpp)."""

    aspects: tuple[int, ...] = ()
    reqd_sub_group_size: int | None = None
    reqd_work_group_size: tuple[int, ...] = ()
    work_group_num_dim: int | None = None
    joint_matrix: str | None = None
    joint_matrix_mad: str | None = None
    compile_target: str | None = None
    """The device a native image was built for, as `-fsycl-targets=intel_gpu_bmg_g21` names it: the
    runtime selects the image only on that device (doesImageTargetMatchDevice); without it, on
    any GPU (probes.paths)."""
    others: tuple[str, ...] = ()
    """Requirement names this reader does not know: never taken as met silently."""


KNOWN_REQUIREMENTS = {"aspects", "reqd_sub_group_size", "reqd_work_group_size", "reqd_work_group_size_uint64_t",
                      "work_group_num_dim", "joint_matrix", "joint_matrix_mad", "fixed_target", "compile_target"}


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
    sycl_abi: int | None = None
    """The major version of the libsycl.so.N the host file needs: the numbering of its aspects."""
    binary_size: int | None = field(default=None, compare=False)
    """BinaryEnd - BinaryStart: the bytes of the image in the file, compressed or not (what the
    runtime hands to its decompressor: device_binary_image.cpp, CompressedRTDeviceBinaryImage)."""

    @property
    def kernels(self) -> tuple[str, ...]:
        """The entries that are kernels, as the program manager tells them apart (addImages): a
        name in `SYCL/exported symbols` is an exported device function, and a name with
        `__sycl_service_kernel__` a service kernel; neither gets a kernel id."""
        exported = set(self.properties.get("SYCL/exported symbols", {}))
        return tuple(e for e in self.entries if e not in exported and "__sycl_service_kernel__" not in e)

    @property
    def aspects(self) -> tuple[int, ...]:
        return self.requirements.aspects

    @property
    def requirements(self) -> DeviceRequirements:
        props = self.properties.get("SYCL/device requirements", {})
        wg: tuple[int, ...] = ()
        if isinstance(props.get("reqd_work_group_size_uint64_t"), bytes):
            wg = _array_of(props["reqd_work_group_size_uint64_t"], "Q")
        elif isinstance(props.get("reqd_work_group_size"), bytes):
            wg = _array_of(props["reqd_work_group_size"], "I")
        sub_group = props.get("reqd_sub_group_size")
        dims = props.get("work_group_num_dim")
        return DeviceRequirements(
            aspects=_array_of(props.get("aspects"), "I"),
            reqd_sub_group_size=sub_group if isinstance(sub_group, int) else None,
            reqd_work_group_size=wg, work_group_num_dim=dims if isinstance(dims, int) else None,
            joint_matrix=_text(props.get("joint_matrix")), joint_matrix_mad=_text(props.get("joint_matrix_mad")),
            compile_target=_text(props.get("compile_target")),
            others=tuple(sorted(k for k in props if k not in KNOWN_REQUIREMENTS)))

    def _misc(self, name: str) -> Any:
        return self.properties.get("SYCL/misc properties", {}).get(name)

    @property
    def is_esimd(self) -> bool:
        """`isEsimdImage`: the runtime builds the image with the VC back end (-vc-codegen)."""
        return bool(self._misc("isEsimdImage"))

    @property
    def grf_size(self) -> str | None:
        """The register file the image asks for: "256", "auto", or None.  `sycl-grf-size`
        (0 = automatic, 256 = large) or the deprecated `sycl-register-alloc-mode`
        (0 = automatic, 2 = large), as appendCompileOptionsForGRFSizeProperties reads them."""
        size, mode = self._misc("sycl-grf-size"), self._misc("sycl-register-alloc-mode")
        if size is not None:
            return {256: GrfMode.LARGE.value, 0: GrfMode.AUTO.value}.get(size)
        if mode is not None:
            return {2: GrfMode.LARGE.value, 0: GrfMode.AUTO.value}.get(mode)
        return None

    @property
    def opt_level(self) -> int | None:
        level = self._misc("optLevel")
        return level if isinstance(level, int) else None

    @property
    def variant(self) -> str | None:
        """What sets this image apart from a host file's other images of the same kernels,
        whatever its index or offset: `spir64; esimd; grf 256; aspects fp64; sub-group 16`.
        What `diff` pairs images by across two builds (never compile options, which a
        compiler or a release may spell differently)."""
        req = self.requirements
        parts = [self.target_spec] if self.target_spec else []
        parts += ["esimd"] * self.is_esimd + ([f"grf {self.grf_size}"] if self.grf_size else [])
        if req.aspects:
            parts.append("aspects " + ",".join(sorted(aspect_label(a, self.sycl_abi) for a in req.aspects)))
        if req.reqd_sub_group_size is not None:
            parts.append(f"sub-group {req.reqd_sub_group_size}")
        if req.reqd_work_group_size:
            parts.append("work-group " + "x".join(map(str, req.reqd_work_group_size)))
        return "; ".join(parts) or None

    @property
    def has_spec_constants(self) -> bool:
        return bool(self.properties.get("SYCL/specialization constants"))

    def to_json(self) -> dict:
        return {
            "target_spec": self.target_spec, "compile_options": self.compile_options,
            "link_options": self.link_options, "version": self.version, "format": self.format,
            "entries": list(self.entries),
            "aspects": [aspect_label(a, self.sycl_abi) for a in self.aspects],
            "sycl_abi": self.sycl_abi, "esimd": self.is_esimd,
            "property_sets": {name: {key: _json_value(value) for key, value in props.items()}
                              for name, props in self.properties.items()},
        }


def _array_of(raw: Any, item: str) -> tuple[int, ...]:
    if not isinstance(raw, bytes):
        return ()
    size = struct.calcsize(item)
    return struct.unpack_from(f"<{len(raw) // size}{item}", raw)


def _text(raw: Any) -> str | None:
    if isinstance(raw, bytes):
        return raw.rstrip(b"\0").decode("utf-8", "replace")
    return raw if isinstance(raw, str) else None


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        shown = value[:256].hex()
        return {"bytes": len(value), "hex": shown + ("..." if len(value) > 256 else "")}
    return value


class _Memory:
    """Reads a linked ELF by virtual address; pointers are RELATIVE addends where relocated."""

    def __init__(self, data: Buffer, sections: list, relative: dict[int, int]) -> None:
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


def descriptors(data: Buffer, sections: list, relative: dict[int, int], images: list[tuple[int, int]],
                tgtimg_span: tuple[int, int], sycl_abi: int | None = None) -> list[ImageInfo | None]:
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
                info = _descriptor_at(mem, loc, sycl_abi)
                if info is not None:
                    break
        out.append(info)
    return out


def _descriptor_at(mem: _Memory, binary_start: int, sycl_abi: int | None) -> ImageInfo | None:
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
                         properties=_property_sets(mem, binary_start + 32), sycl_abi=sycl_abi,
                         binary_size=_binary_size(mem, binary_start))
    return None


def _binary_size(mem: _Memory, binary_start: int) -> int | None:
    start, end = mem.pointer(binary_start), mem.pointer(binary_start + 8)
    return end - start if start is not None and end is not None and end > start else None


def _array(mem: _Memory, at: int, item: int, limit: int) -> range | None:
    begin, end = mem.pointer(at), mem.pointer(at + 8)
    if begin is None or end is None or end < begin or (end - begin) % item or (end - begin) // item > limit:
        return None
    return range(begin, end, item)


def _entries(mem: _Memory, at: int) -> list[str]:
    """The names of an image's offload entries, in either layout the runtime reads
    (compiler.hpp, IsNewOffloadEntryType, GetName, Increment): the old 32-byte
    `{void *addr; char *name; u64 size; i32 flags; i32 reserved}`, or LLVM's 56-byte EntryTy
    `{u64 Reserved = 0; u16 Version = 1; u16 Kind; u32 Flags; void *Address; char *SymbolName;
    u64 Size; u64 Data; void *AuxAddr}` (Kind 8, OFK_SYCL; 4 in a wrapper written before the
    kinds became a bit mask)."""
    begin = mem.pointer(at)
    head = mem.raw(begin, 16) if begin else None
    new_layout = head is not None and struct.unpack("<QHHI", head)[:2] == (0, 1) \
        and struct.unpack("<QHHI", head)[2] in (4, 8) and struct.unpack("<QHHI", head)[3] == 0
    stride, name_at = (56, 24) if new_layout else (32, 8)
    items = _array(mem, at, stride, MAX_PROPERTIES)
    names = []
    for entry in items or ():
        name = mem.cstr(mem.pointer(entry + name_at) or 0)
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


# The Level Zero adapter's answer to urPlatformGetBackendOption for the front-end options the
# runtime translates (unified-runtime source/adapters/level_zero/platform.cpp; read from
# libur_adapter_level_zero.so of intel-cmplr-lib-ur 2026.2.0: -O1, -O2 and -O3 all compare
# to the one string "-ze-opt-level=2").
BACKEND_OPTIONS = {
    "-O0": "-ze-opt-disable", "-O1": "-ze-opt-level=2", "-O2": "-ze-opt-level=2", "-O3": "-ze-opt-level=2",
    "-ftarget-compile-fast": "-igc_opts 'PartitionUnit=1,SubroutineThreshold=50000'",
    "-foffload-fp32-prec-div": "-ze-fp32-correctly-rounded-divide-sqrt",
    "-foffload-fp32-prec-sqrt": "-ze-fp32-correctly-rounded-divide-sqrt",
}


def options_for_target(compile_options: str, link_options: str, target_names: tuple[str, ...], *,
                       esimd: bool = False, grf_size: str | None = None, opt_level: int | None = None,
                       environment: tuple[tuple[str, str], ...] = ()) -> tuple[list[str], list[str]]:
    """The backend options the SYCL runtime builds an image with on a device of these names.

    intel/llvm sycl/source/detail/program_manager/program_manager.cpp,
    appendCompileOptionsFromImage and appendCompileOptionsForGRFSizeProperties (the build
    then adds the link options, ProgramManager::build):
    - the image's compile options;
    - ESIMD images (`isEsimdImage`) get `-vc-codegen`.  The runtime also adds
      `-disable-finalizer-msg` unless SYCL_RT_WARNING_LEVEL asks for messages; zeinspect
      keeps the finalizer's messages (they change no code, and their `Spill memory used`
      line is the log's word on the kernel's scratch);
    - `optLevel` N becomes the backend's spelling of -ON, not for ESIMD images;
    - `-ftarget-compile-fast` and `-foffload-fp32-prec-div/sqrt` become the backend's
      spelling (BACKEND_OPTIONS);
    - `-ftarget-register-alloc-mode=DEV:OPT[,...]` becomes OPT on a device named DEV and
      disappears elsewhere (the runtime knows only `pvc`: a device id 0x0Bxx);
    - `sycl-grf-size` 256 (or register-alloc-mode large) adds `-doubleGRF` to an ESIMD image
      and `-ze-opt-large-register-file` to others; automatic adds
      `-ze-intel-enable-auto-large-GRF-mode`.
    The runtime's own variables (`environment`, as the deployment sets them) come in as
    ProgramManager::getBuiltURProgram applies them to an image it builds at run time:
    - `SYCL_PROGRAM_COMPILE_OPTIONS` replaces the image's compile options
      (applyOptionsFromEnvironment), and then no `optLevel` option is added
      (appendCompileOptionsFromImage checks the variable); -vc-codegen and the register-file
      properties still are, and the translations above apply to its words;
    - `SYCL_PROGRAM_LINK_OPTIONS` replaces the image's link options;
    - `SYCL_PROGRAM_APPEND_COMPILE_OPTIONS` and `SYCL_PROGRAM_APPEND_LINK_OPTIONS` are added
      last, untranslated (appendCompileEnvironmentVariablesThatAppend and its link twin:
      "should always come last").
    Native (AOT) images are loaded as built, whatever these say: only SPIR-V images get here.
    Returns (options as separate words, notes)."""
    import shlex

    def words(text: str) -> list[str]:
        try:
            return shlex.split(text)
        except ValueError:
            return text.split()

    out: list[str] = []
    notes: list[str] = []
    env = dict(environment)
    replaced = env.get("SYCL_PROGRAM_COMPILE_OPTIONS")
    if replaced is not None:
        notes.append(f"SYCL_PROGRAM_COMPILE_OPTIONS replaces the image's compile options ({compile_options or 'none'})")
        compile_options, opt_level = replaced, None
    if env.get("SYCL_PROGRAM_LINK_OPTIONS") is not None:
        notes.append(f"SYCL_PROGRAM_LINK_OPTIONS replaces the image's link options ({link_options or 'none'})")
        link_options = env["SYCL_PROGRAM_LINK_OPTIONS"]
    for token in words(compile_options):
        if token.startswith("-ftarget-register-alloc-mode="):
            for pair in token.split("=", 1)[1].split(","):
                device, _, option = pair.partition(":")
                if option and any(n == device or n.startswith(device + "-") for n in target_names):
                    out += words(option)
                    notes.append(f"image option {token}: {option} on this target")
        elif token in BACKEND_OPTIONS:
            out += words(BACKEND_OPTIONS[token])
            notes.append(f"image option {token}: {BACKEND_OPTIONS[token]}, as the runtime passes it")
        else:
            out.append(token)
    if esimd:
        out.append("-vc-codegen")
        notes.append("ESIMD image: built with -vc-codegen (the VC back end), as the runtime builds it")
    elif opt_level is not None and f"-O{opt_level}" in BACKEND_OPTIONS:
        out += words(BACKEND_OPTIONS[f"-O{opt_level}"])
    if grf_size == GrfMode.LARGE:
        out.append("-doubleGRF" if esimd else "-ze-opt-large-register-file")
        notes.append(f"image property sycl-grf-size 256: {out[-1]}")
    elif grf_size == GrfMode.AUTO:
        out.append("-ze-intel-enable-auto-large-GRF-mode")
    out += words(env.get("SYCL_PROGRAM_APPEND_COMPILE_OPTIONS", ""))
    out += words(link_options)
    out += words(env.get("SYCL_PROGRAM_APPEND_LINK_OPTIONS", ""))
    return out, notes
