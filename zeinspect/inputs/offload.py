"""Device images inside SYCL AOT builds: objects, static archives, executables, shared objects.

Where images live (docs/how-it-works.md#sycl-images):

* the old offload model: sections `__CLANG_OFFLOAD_BUNDLE__<kind>-<triple>`, images laid end
  to end with zero padding;
* the new model: `.llvm.offloading` sections of 8-byte aligned OffloadBinary blobs
  (magic 10 FF 10 AD; version 1: one entry per blob; version 2: a count of entries,
  string entries with a value size);
* both: a 16-byte {addr, size} record per image in `.tgtimg`; in objects the address is a
  relocation (`.rela.tgtimg`), in PIE executables and shared objects the addend of an
  R_X86_64_RELATIVE relocation in `.rela.dyn`.  With records, image boundaries are exact;
  without, they are found from each image's own format.

Payloads are recognised by their bytes: zstd frames (`--offload-compress`, decoded under a
size limit and looked at again), ocloc `ar` fat binaries, zebins, patch-token binaries,
SPIR-V, LLVM bitcode, nested OffloadBinary blobs.  Static archives (`.a`) of such objects
are walked member by member.  Nothing here trusts a size or an offset it has not checked
against the bytes it has; a bad image is skipped with the reason, never a crash.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import envvars
from ..errors import FormatError
from .files import EM_X86_64, Buffer, cut, is_host_elf, release
from .kinds import InputKind

if TYPE_CHECKING:  # imported where an image is described: telling a file's kind needs none
    from .sycl_image import ImageInfo

OFFLOAD_MAGIC = b"\x10\xff\x10\xad"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BUNDLE_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
MAX_IMAGES = 100_000
MAX_DEPTH = 4
IMAGE_KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx", 6: "spirv"}
OFFLOAD_KINDS = {0: "none", 1: "openmp", 2: "cuda", 4: "hip", 8: "sycl"}
R_X86_64_64 = 1
R_X86_64_RELATIVE = 8


@dataclass
class Image:
    source: str
    """Where it was found: a section, a .tgtimg record, an OffloadBinary entry, an archive member."""
    offset: int
    """Byte offset in the file given (of the compressed bytes when compressed)."""
    size: int
    kind: InputKind
    """zebin | fatbin | patchtokens | spirv | bitcode | unknown"""
    data: bytes = b""
    triple: str | None = None
    arch: str | None = None
    compression: str | None = None
    member: str | None = None
    skipped: str | None = None
    """Why the image cannot be used (out of bounds, a decompression bomb, ...)."""
    info: ImageInfo | None = None
    """The SYCL runtime's descriptor of the image: options and property sets, where found."""
    expanded_size: int | None = None
    """A compressed image's size once decompressed, as its `.tgtimg` record gives it: the bound
    its decompression is held to."""
    backing: Any = field(default=None, repr=False, compare=False)
    """The host file's bytes (or map) `data` is cut from when the image is reached (`load`),
    and its kind told from them then: a large library's images are read one at a time, and
    not even their first bytes are touched before (each touch of a map pages in a block of
    it, and a thousand images' heads were most of a 330 MB library)."""

    def load(self) -> None:
        if self.backing is not None:
            self.data, self.backing = cut(self.backing, self.offset, self.size), None
            self.kind = classify(self.data[:20])

    def manifest(self) -> dict:
        return {"source": self.source, "member": self.member, "offset": self.offset, "size": self.size,
                "kind": self.kind, "triple": self.triple, "arch": self.arch, "compression": self.compression,
                "expanded_size": self.expanded_size, "skipped": self.skipped,
                "sycl": self.info.to_json() if self.info else None}


def classify(data: bytes) -> InputKind:
    if data[:4] == ZSTD_MAGIC:
        return InputKind.ZSTD
    if data[:8] == b"!<arch>\n":
        return InputKind.FATBIN
    if data[:4] == OFFLOAD_MAGIC:
        return InputKind.OFFLOAD_BINARY
    if data[:4] == b"\x7fELF" and len(data) >= 20:
        machine = struct.unpack_from("<H", data, 18)[0]
        etype = struct.unpack_from("<H", data, 16)[0]
        if machine == 205:
            return InputKind.ZEBIN
        if etype == 0xFF04:
            return InputKind.PATCHTOKENS
        return InputKind.ELF
    if len(data) >= 4 and struct.unpack_from("<I", data)[0] == 0x07230203:
        return InputKind.SPIRV
    if data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        return InputKind.BITCODE
    return InputKind.UNKNOWN


def is_host_archive(data: bytes) -> bool:
    """A static archive of host objects (not an ocloc fat binary)."""
    if data[:8] != b"!<arch>\n" or len(data) < 68:
        return False
    name = data[8:24].decode("ascii", "replace").strip()
    if name in ("/", "//", "/SYM64/") or name.endswith(".o/") or name.endswith(".o"):
        return True
    return data[68:72] == b"\x7fELF" and len(data) >= 88 and struct.unpack_from("<H", data, 68 + 18)[0] == EM_X86_64


# -- measuring images laid end to end ---------------------------------------------------

def _elf_extent(data: bytes, off: int) -> int | None:
    if off + 64 > len(data) or data[off + 4] != 2:  # ELF64 only
        return None
    phoff, shoff = struct.unpack_from("<QQ", data, off + 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, off + 54)
    end = max(64, phoff + phentsize * phnum, shoff + shentsize * shnum)
    for i in range(shnum):
        h = off + shoff + i * shentsize
        if h + 64 > len(data):
            return None
        sh_type = struct.unpack_from("<I", data, h + 4)[0]
        sh_offset, sh_size = struct.unpack_from("<QQ", data, h + 24)
        if sh_type != 8:  # SHT_NOBITS
            end = max(end, sh_offset + sh_size)
    return end if off + end <= len(data) else None


def _ar_extent(data: bytes, off: int) -> int | None:
    pos = off + 8
    while pos + 60 <= len(data) and data[pos + 58:pos + 60] == b"`\n":
        size_text = data[pos + 48:pos + 58].decode("ascii", "replace").strip()
        if not size_text.isdigit():
            return None
        pos += 60 + int(size_text)
        if pos % 2:
            pos += 1
    return pos - off if pos <= len(data) else None


def _spirv_extent(data: bytes, off: int) -> int | None:
    pos = off + 20
    while pos + 4 <= len(data):
        word = struct.unpack_from("<I", data, pos)[0]
        if word == 0:
            break  # zero padding after the module
        length = word >> 16
        if length == 0 or pos + 4 * length > len(data):
            break
        pos += 4 * length
    return pos - off if pos > off + 20 else None


def _offload_extent(data: bytes, off: int) -> int | None:
    if off + 16 > len(data):
        return None
    size = struct.unpack_from("<Q", data, off + 8)[0]
    return size if 16 <= size <= len(data) - off else None


def _zstd_frame(data: bytes | Buffer, off: int, limit: int | None = None
                ) -> tuple[int | None, bytes | None, str | None]:
    """(compressed length, decompressed bytes, skip reason) of the frame at `off`.  `limit`: the
    decompressed size the image's record promises (a frame that makes more is refused)."""
    import zstandard

    obj = zstandard.ZstdDecompressor().decompressobj()
    out = bytearray()
    pos = off
    chunk = 1 << 16
    cap = envvars.value("ZEINSPECT_MAX_DECOMPRESSED")
    try:
        while pos < len(data) and not obj.eof:
            piece = bytes(data[pos:pos + chunk])
            out += obj.decompress(piece)
            pos += len(piece)
            if limit is not None and len(out) > limit:
                return None, None, f"zstd image decompresses to more than the {limit} bytes its record gives"
            if len(out) > cap:
                return None, None, f"zstd image decompresses to more than {cap} bytes: refused as a decompression bomb"
    except zstandard.ZstdError as exc:
        return None, None, f"damaged zstd frame: {exc}"
    if not obj.eof:
        return None, None, "truncated zstd frame"
    return pos - off - len(obj.unused_data), bytes(out), None


def _runtime_refuses(img: Image, length: int | None) -> str | None:
    """Why the SYCL runtime could not decompress an image its descriptor marks compressed
    (Format 4), or None.  CompressedRTDeviceBinaryImage sizes its buffer from the frame's
    content size, which must be there (compression.hpp, GetDecompressedSize), and hands all of
    BinaryStart..BinaryEnd to one ZSTD_decompressDCtx call (DecompressBlob): one frame, nothing
    after it."""
    if img.info is None or img.info.format != "compressed_none":
        return None
    import zstandard

    try:
        size = zstandard.get_frame_parameters(bytes(img.data[:18])).content_size
    except zstandard.ZstdError as exc:
        return f"damaged zstd frame header: {exc}"
    if size == zstandard.CONTENTSIZE_UNKNOWN:
        return "zstd frame without its content size: the SYCL runtime refuses it (GetDecompressedSize)"
    if length is not None and length != len(img.data):
        return (f"BinaryStart..BinaryEnd holds {len(img.data) - length} bytes after its zstd frame: the SYCL "
                "runtime's one decompression call fails on them")
    return None


def _next_known(data: bytes, start: int) -> int:
    """The next 4-aligned offset where a known image starts (for images without a length)."""
    for pos in range(start + 4, len(data) - 3, 4):
        if classify(data[pos:pos + 20]) in (InputKind.ZEBIN, InputKind.FATBIN, InputKind.SPIRV,
                                            InputKind.OFFLOAD_BINARY, InputKind.ZSTD, InputKind.PATCHTOKENS):
            return pos
    return len(data)


def split_end_to_end(blob: bytes, base: int, source: str) -> list[Image]:
    """Images laid end to end with zero padding (an old-model bundle section)."""
    images: list[Image] = []
    pos = 0
    while pos < len(blob) and len(images) < MAX_IMAGES:
        while pos < len(blob) and blob[pos] == 0:
            pos += 1
        if pos >= len(blob):
            break
        kind = classify(blob[pos:pos + 20])
        label = f"{source}@{pos}"
        if kind in (InputKind.ZEBIN, InputKind.PATCHTOKENS, InputKind.ELF):
            length = _elf_extent(blob, pos)
        elif kind == InputKind.FATBIN:
            length = _ar_extent(blob, pos)
        elif kind == InputKind.SPIRV:
            length = _spirv_extent(blob, pos)
        elif kind == InputKind.OFFLOAD_BINARY:
            length = _offload_extent(blob, pos)
        elif kind == InputKind.ZSTD:
            length, _, why = _zstd_frame(blob, pos)
            if length is None:
                images.append(Image(label, base + pos, len(blob) - pos, InputKind.UNKNOWN, skipped=why))
                break
        elif kind == InputKind.BITCODE:
            length = _next_known(blob, pos) - pos
        else:
            images.append(Image(label, base + pos, len(blob) - pos, InputKind.UNKNOWN,
                                skipped="unrecognised bytes where an image should start"))
            break
        if not length:
            images.append(Image(label, base + pos, len(blob) - pos, kind,
                                skipped=f"{kind} image runs past the end of its section"))
            break
        images.append(Image(label, base + pos, length, kind, data=blob[pos:pos + length]))
        pos += length
    return images


# -- OffloadBinary ------------------------------------------------------------------------

def _cstr(blob: bytes, off: int, limit: int = 4096) -> str:
    if not 0 <= off < len(blob):
        raise FormatError("string offset out of bounds")
    end = blob.find(b"\0", off, off + limit)
    if end < 0:
        raise FormatError("unterminated string")
    return blob[off:end].decode("utf-8", "replace")


def offload_entries(blob: bytes) -> list[tuple[int, int, dict, bytes]]:
    """(image kind, offload kind, strings, image bytes) for each entry of one OffloadBinary blob."""
    if len(blob) < 32 or blob[:4] != OFFLOAD_MAGIC:
        raise FormatError("not an OffloadBinary")
    version, size = struct.unpack_from("<IQ", blob, 4)
    if size > len(blob) or size < 32:
        raise FormatError(f"OffloadBinary size {size} does not fit its {len(blob)} bytes")
    blob = blob[:size]
    if version == 1:
        entry_off, entry_size = struct.unpack_from("<QQ", blob, 16)
        entries = [(entry_off, 1)]
        string_size = 16
    elif version in (2, 3):
        entry_off, count = struct.unpack_from("<QQ", blob, 16)
        if version == 3 and len(blob) >= 40 and struct.unpack_from("<Q", blob, 32)[0]:
            raise FormatError("compressed OffloadBinary (version 3) is not supported")
        if count > MAX_IMAGES:
            raise FormatError(f"OffloadBinary claims {count} entries")
        entries = [(entry_off, count)]
        string_size = 24
    else:
        raise FormatError(f"OffloadBinary version {version} is not supported (1, 2)")
    out = []
    off, count = entries[0]
    for i in range(count):
        e = off + 40 * i
        if e < 0 or e + 40 > len(blob):
            raise FormatError("OffloadBinary entry out of bounds")
        image_kind, offload_kind, _flags, str_off, n_str, img_off, img_size = struct.unpack_from("<HHIQQQQ", blob, e)
        if n_str > 1024 or str_off + n_str * string_size > len(blob):
            raise FormatError("OffloadBinary string table out of bounds")
        strings = {}
        for j in range(n_str):
            s = str_off + j * string_size
            key_off, val_off = struct.unpack_from("<QQ", blob, s)
            if string_size == 24:
                val_size = struct.unpack_from("<Q", blob, s + 16)[0]
                if val_off + val_size > len(blob):
                    raise FormatError("OffloadBinary string value out of bounds")
                strings[_cstr(blob, key_off)] = blob[val_off:val_off + val_size].decode("utf-8", "replace")
            else:
                strings[_cstr(blob, key_off)] = _cstr(blob, val_off)
        if img_off + img_size > len(blob):
            raise FormatError("OffloadBinary image out of bounds")
        out.append((image_kind, offload_kind, strings, blob[img_off:img_off + img_size]))
    return out


def split_offloading(blob: bytes, base: int, source: str) -> list[Image]:
    """A `.llvm.offloading` section: OffloadBinary blobs, each 8-byte aligned."""
    images: list[Image] = []
    pos = 0
    while pos + 32 <= len(blob) and len(images) < MAX_IMAGES:
        if blob[pos:pos + 4] != OFFLOAD_MAGIC:
            if any(blob[pos:]):
                images.append(Image(f"{source}@{pos}", base + pos, len(blob) - pos, InputKind.UNKNOWN,
                                    skipped="bytes that are not an OffloadBinary"))
            break
        size = _offload_extent(blob, pos)
        if size is None:
            images.append(Image(f"{source}@{pos}", base + pos, len(blob) - pos, InputKind.OFFLOAD_BINARY,
                                skipped="OffloadBinary runs past the end of its section"))
            break
        images.append(Image(f"{source}@{pos}", base + pos, size, InputKind.OFFLOAD_BINARY, data=blob[pos:pos + size]))
        pos += (size + 7) & ~7
    return images


# -- host ELF -----------------------------------------------------------------------------

def _elf_errors(reader: Callable) -> Callable:
    from .zebin import elf_errors_as_format_errors

    return elf_errors_as_format_errors(reader)


def _host_sections(data: Buffer, what: str) -> tuple[Any, list]:
    from .zebin import read_elf

    elf, sections = read_elf(data, what)
    return elf, sections


def _tgtimg_images(data: Buffer, elf: Any, sections: list) -> list[Image] | None:
    by_name = {s.name: s for s in sections}
    tgt = by_name.get(".tgtimg")
    if tgt is None or tgt["sh_type"] == "SHT_NOBITS":
        return None
    raw = tgt.data()
    if len(raw) % 16:
        return [Image(".tgtimg", tgt["sh_offset"], len(raw), InputKind.UNKNOWN,
                      skipped=".tgtimg is not a whole number of 16-byte records")]
    records = [struct.unpack_from("<QQ", raw, i) for i in range(0, len(raw), 16)]
    addrs: list[int | None] = [addr for addr, _ in records]
    infos: list[ImageInfo | None] = [None] * len(records)
    if elf.header["e_type"] == "ET_REL":
        rela = by_name.get(".rela.tgtimg")
        if rela is None:
            return [Image(".tgtimg", tgt["sh_offset"], len(raw), InputKind.UNKNOWN,
                          skipped="object without relocations for its .tgtimg records")]
        file_offsets = _object_offsets(rela, sections, len(records))
    else:
        relative = _relative_relocations(by_name.get(".rela.dyn"))
        addrs = [relative.get(tgt["sh_addr"] + 16 * i, addr) for i, addr in enumerate(addrs)]
        file_offsets = [_file_offset(sections, addr) for addr in addrs]
        from .sycl_image import descriptors

        span = (tgt["sh_addr"], tgt["sh_addr"] + len(raw))
        infos = descriptors(data, sections, relative, [(a or 0, size) for a, (_, size) in zip(addrs, records)], span,
                            sycl_abi=_sycl_abi(by_name.get(".dynamic")))
    images = []
    tgt_start, tgt_end = tgt["sh_offset"], tgt["sh_offset"] + len(raw)
    for i, ((_, record_size), off) in enumerate(zip(records, file_offsets)):
        label = f".tgtimg[{i}]"
        if off is None and not addrs[i] and not record_size:
            # The linker may pad the records of several wrapper objects with zeros: no image
            # (clang-offload-extract skips a record whose address is 0); the indices stay.
            continue
        if off is None:
            images.append(Image(label, 0, record_size, InputKind.UNKNOWN, info=infos[i],
                                skipped="record address does not resolve into the file"))
            continue
        size, expanded = _extent(data, off, record_size, infos[i])
        if size is None or size <= 0 or off < 0 or off + size > len(data):
            images.append(Image(label, off, record_size, InputKind.UNKNOWN, info=infos[i],
                                skipped=expanded if isinstance(expanded, str) else "record points past the end of the file"))
        elif off < tgt_end and off + size > tgt_start:
            images.append(Image(label, off, size, InputKind.UNKNOWN, info=infos[i],
                                skipped="record points into .tgtimg itself"))
        else:
            images.append(Image(label, off, size, InputKind.UNKNOWN, info=infos[i], backing=data,
                                expanded_size=expanded))
    return images


def _extent(data: Buffer, off: int, record_size: int, info: ImageInfo | None) -> tuple[int | None, Any]:
    """(the image's bytes in the file, the decompressed size its record gives when compressed).

    Where the SYCL runtime takes them (docs/how-it-works.md#compressed-images): the image is
    BinaryStart..BinaryEnd of its descriptor, compressed or not.  With `--offload-compress` the
    wrapper compresses each image and its `.tgtimg` record then gives the size *before*
    compression: a bound on the decompressed image, not on the bytes in the file.  Without a
    descriptor, a zstd frame's own end says where it stops.  On failure: (None, why)."""
    compressed = bytes(data[off:off + 4]) == ZSTD_MAGIC if 0 <= off < len(data) else False
    if info is not None and info.binary_size:
        # The record bounds the decompression only where it says more than the bytes on disk (the
        # size before compression, as the old model's wrapper writes it); a wrapper that records
        # the compressed size instead gives no bound, and the runtime reads no record at all.
        return info.binary_size, (record_size if compressed and record_size > info.binary_size else None)
    if not compressed:
        return record_size, None
    length, _, why = _zstd_frame(data, off, limit=record_size if record_size > 0 else None)
    if length is None:
        return None, f"compressed image: {why}"
    return length, record_size


def _object_offsets(rela: Any, sections: list, count: int) -> list[int | None]:
    """In a relocatable object, where each record's image starts in the file: its relocation's
    symbol's section offset, plus the symbol's value and the addend."""
    offsets: list[int | None] = [None] * count
    symtab = sections[rela["sh_link"]] if rela["sh_link"] < len(sections) else None
    for rel in rela.iter_relocations():
        index = rel["r_offset"] // 16
        if rel["r_offset"] % 16 or index >= count or symtab is None:
            continue
        sym = symtab.get_symbol(rel["r_info_sym"])
        shndx = sym["st_shndx"]
        if isinstance(shndx, int) and shndx < len(sections):
            offsets[index] = sections[shndx]["sh_offset"] + sym["st_value"] + rel["r_addend"]
    return offsets


def _relative_relocations(rela: Any) -> dict[int, int]:
    """address -> addend of every R_X86_64_RELATIVE relocation of a linked file."""
    relative: dict[int, int] = {}
    if rela is not None and rela["sh_entsize"] == 24 and rela["sh_type"] != "SHT_NOBITS":
        # Elf64_Rela {u64 r_offset; u64 r_info; i64 r_addend}, read in one pass: a large
        # shared object has hundreds of thousands (pyelftools' per-entry parse took seconds).
        raw_rela = rela.data()
        for r_offset, r_info, r_addend in struct.iter_unpack("<QQq", raw_rela[:len(raw_rela) // 24 * 24]):
            if r_info & 0xFFFFFFFF == R_X86_64_RELATIVE:
                relative[r_offset] = r_addend
    elif rela is not None:
        for rel in rela.iter_relocations():
            if rel["r_info_type"] == R_X86_64_RELATIVE:
                relative[rel["r_offset"]] = rel["r_addend"]
    return relative


def _file_offset(sections: list, addr: int | None) -> int | None:
    """The file offset of a loaded address (in an allocated section with bytes in the file)."""
    if addr is None:
        return None
    for s in sections:
        if s["sh_type"] != "SHT_NOBITS" and s["sh_flags"] & 2 and s["sh_addr"] <= addr < s["sh_addr"] + s["sh_size"]:
            return s["sh_offset"] + addr - s["sh_addr"]
    return None


def _sycl_abi(dynamic: Any) -> int | None:
    """N of the libsycl.so.N a linked file needs (its images' aspect numbering), or None."""
    if dynamic is None or not hasattr(dynamic, "iter_tags"):
        return None
    try:
        for tag in dynamic.iter_tags("DT_NEEDED"):
            m = re.fullmatch(r"libsycl(?:-preview)?\.so\.(\d+)", getattr(tag, "needed", "") or "")
            if m:
                return int(m[1])
    except Exception:  # a damaged dynamic section only loses the numbering, never the audit
        return None
    return None


def _section_images(sections: list) -> list[Image]:
    images = []
    for s in sections:
        if s["sh_type"] == "SHT_NOBITS":
            continue
        if s.name.startswith(BUNDLE_PREFIX):
            triple = s.name[len(BUNDLE_PREFIX):]
            for img in split_end_to_end(s.data(), s["sh_offset"], s.name):
                img.triple = img.triple or triple
                images.append(img)
        elif s.name == ".llvm.offloading" or s["sh_type"] == 0x6FFF4C0B:
            images.extend(split_offloading(s.data(), s["sh_offset"], s.name))
    return images


def _expand(images: Iterable[Image], depth: int) -> Iterator[Image]:
    """Decode zstd, open OffloadBinary entries, recurse; keep every image, usable or not.
    Each image's bytes are read as it is reached (`Image.load`)."""
    for img in images:
        if img.skipped or depth > MAX_DEPTH:
            if depth > MAX_DEPTH and not img.skipped:
                img.skipped = "images nested too deeply"
            yield img
            continue
        img.load()
        if img.kind == InputKind.ZSTD or img.data[:4] == ZSTD_MAGIC:
            length, payload, why = _zstd_frame(img.data, 0, limit=img.expanded_size)
            why = why or _runtime_refuses(img, length)
            if payload is None or why:
                img.kind, img.skipped = InputKind.ZSTD, why
                yield img
                continue
            img.data, img.compression, img.kind = payload, "zstd", classify(payload[:20])
        if img.kind == InputKind.OFFLOAD_BINARY:
            try:
                entries = offload_entries(img.data)
            except FormatError as exc:
                img.skipped = str(exc)
                yield img
                continue
            from .sycl_image import ImageInfo

            for j, (image_kind, offload_kind, strings, payload) in enumerate(entries):
                info = ImageInfo(target_spec=strings.get("triple"), compile_options=strings.get("compile-opts", ""),
                                 link_options=strings.get("link-opts", ""))
                child = Image(f"{img.source}/entry[{j}]", img.offset, len(payload), classify(payload[:20]),
                              data=payload, triple=strings.get("triple"), arch=strings.get("arch") or None,
                              compression=img.compression, member=img.member, info=info)
                child.source += f" ({IMAGE_KINDS.get(image_kind, image_kind)}, {OFFLOAD_KINDS.get(offload_kind, offload_kind)})"
                yield from _expand([child], depth + 1)
            continue
        yield img


def find_images(data: Buffer, what: str, *, member: str | None = None, depth: int = 0) -> list[Image]:
    """Every device image in a host object, executable, shared object or static archive."""
    return list(iter_images(data, what, member=member, depth=depth))


def iter_images(data: Buffer, what: str, *, member: str | None = None, depth: int = 0) -> Iterator[Image]:
    """`find_images`, one image at a time: each image's bytes are read when it is reached, so a
    caller that lets each go holds one image, however many the file has.  A file that does not
    read raises FormatError before the first image."""
    if data[:8] == b"!<arch>\n":
        return _archive_images(data, what, depth)
    images = _host_images(data, what)
    for img in images:
        img.member = member
    return _expand(_let_go(images), depth)


def _let_go(images: list[Image]) -> Iterator[Image]:
    """The images in order, each dropped from the list as it is handed out: the list must not
    keep every image's bytes once they are read."""
    images.reverse()
    while images:
        yield images.pop()


@_elf_errors
def _host_images(data: Buffer, what: str) -> list[Image]:
    """The images of one host ELF file, their bytes not yet read."""
    elf, sections = _host_sections(data, what)
    try:
        images = _tgtimg_images(data, elf, sections)
        return images if images is not None else _section_images(sections)
    finally:
        elf.stream.close()
        release(data)  # what the headers, records and descriptors paged in is not needed again


def _archive_images(data: Buffer, what: str, depth: int) -> Iterator[Image]:
    from .fatbin import read_members

    members = read_members(data, what)  # a damaged archive raises here, before any image
    return _archive_member_images(members, what, depth)


def _archive_member_images(members: list, what: str, depth: int) -> Iterator[Image]:
    long_names = next((m.data for m in members if m.name == "//"), b"")
    for m in members:
        if m.name in ("/", "//", "/SYM64/") or m.name.startswith("//"):
            continue
        name = m.name
        if re.fullmatch(r"/\d+", name):
            start = int(name[1:])
            end = long_names.find(b"/\n", start)
            name = long_names[start:end if end >= 0 else None].decode("utf-8", "replace")
        if not is_host_elf(m.data):
            continue
        try:
            found = find_images(m.data, f"{what}({name})", member=name, depth=depth + 1)
        except FormatError as exc:
            found = [Image(name, m.offset, len(m.data), InputKind.UNKNOWN, member=name, skipped=str(exc))]
        for img in found:
            img.offset += m.offset  # offsets count from the archive's first byte
        yield from found


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
EXTENSIONS = {InputKind.ZEBIN: "zebin", InputKind.FATBIN: "ar", InputKind.PATCHTOKENS: "bin", InputKind.SPIRV: "spv",
              InputKind.BITCODE: "bc", InputKind.UNKNOWN: "bin", InputKind.ELF: "elf", InputKind.ZSTD: "zst",
              InputKind.OFFLOAD_BINARY: "offload"}


def safe_name(index: int, img: Image) -> str:
    """A file name that cannot leave its folder: an index, a sanitised label, a known extension."""
    label = img.arch or (img.triple or "").replace(BUNDLE_PREFIX, "") or img.kind
    label = _SAFE.sub("_", label).strip("._")[:48] or "image"
    return f"{index:03d}-{label}.{EXTENSIONS.get(img.kind, 'bin')}"


# -- sniffing a file for device images without reading it ----------------------------------

SNIFF_MEMBERS = 100_000
"""Members of a static archive looked at, at most (each costs two small reads)."""


def _section_names(f: Any, base: int, size: int) -> list[str]:
    """The section names of the ELF64 little-endian object at `base` in `f` (its header, its
    section table and its section-name table only); [] for anything else or anything damaged."""
    f.seek(base)
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", head, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
    if not shoff or shentsize < 64 or not 0 < shnum <= 65535 or shstrndx >= shnum or shoff + shnum * shentsize > size:
        return []
    f.seek(base + shoff)
    table = f.read(shnum * shentsize)
    if len(table) < shnum * shentsize:
        return []
    str_off, str_size = struct.unpack_from("<QQ", table, shstrndx * shentsize + 0x18)
    if str_off + str_size > size or str_size > 1 << 24:
        return []
    f.seek(base + str_off)
    strings = f.read(str_size)
    names = []
    for i in range(shnum):
        at, = struct.unpack_from("<I", table, i * shentsize)
        end = strings.find(b"\0", at)
        names.append(strings[at:end if end >= 0 else None].decode("latin-1"))
    return names


def _names_carry_images(names: list[str]) -> bool:
    return any(n.startswith(BUNDLE_PREFIX) or n in (".llvm.offloading", ".tgtimg") for n in names)


def carries_device_images(path: str) -> bool:
    """Whether a host file (an x86-64 object, shared object, executable or static archive)
    holds device images, from its section names alone: what a folder walk asks of every file,
    reading a few kilobytes of each however large (a package's other libraries hold none)."""
    try:
        with open(path, "rb") as f:
            return stream_carries_device_images(f, os.fstat(f.fileno()).st_size)
    except OSError:
        return False


def stream_carries_device_images(f: Any, size: int) -> bool:
    """`carries_device_images` for a seekable stream of `size` bytes (a file, a package's member)."""
    f.seek(0)
    head = f.read(8)
    if head[:4] == b"\x7fELF":
        return _names_carry_images(_section_names(f, 0, size))
    if head != b"!<arch>\n":
        return False
    at = 8
    for _ in range(SNIFF_MEMBERS):
        f.seek(at)
        header = f.read(60)
        if len(header) < 60 or header[58:60] != b"`\n":
            return False
        try:
            length = int(header[48:58].decode("ascii").strip() or "0")
        except ValueError:
            return False
        body = at + 60
        if _names_carry_images(_section_names(f, body, min(length, size - body))):
            return True
        at = body + length + (length & 1)
        if at >= size:
            return False
    return False
