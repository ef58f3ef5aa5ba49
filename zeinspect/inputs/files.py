"""Reading a file the user named: its bytes, or one InputError naming it and the problem."""

from __future__ import annotations

import io
import mmap
import os
import struct
import tempfile
from pathlib import Path
from typing import IO, Any, BinaryIO

from ..errors import InputError

Buffer = bytes | mmap.mmap
"""What a reader of device images takes: the bytes of a file, or its map (`map_file`)."""


def read_file(path: str | os.PathLike, what: str, limit: int) -> bytes:
    """The bytes of `path`; `what` names the kind of file in messages ("build log")."""
    data = _read(path, what, limit, mapped=False)
    assert isinstance(data, bytes)
    return data


def read_or_map(path: str | os.PathLike, what: str, limit: int) -> bytes | mmap.mmap:
    """`read_file`, except that a large host file (`is_host_head`, MAP_BYTES or more) is mapped."""
    return _read(path, what, limit, mapped=True)


def _read(path: str | os.PathLike, what: str, limit: int, *, mapped: bool) -> bytes | mmap.mmap:
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"is a directory, not a {what}", path=str(path))
        size = p.stat().st_size
        if size > limit:
            raise InputError(f"is {size} bytes, over the {limit} byte limit for a {what}", path=str(path))
        if mapped and size >= MAP_BYTES:
            with p.open("rb") as handle:
                if is_host_head(handle.read(20)):
                    return map_file(handle)
        if size > MAX_READ_BYTES:
            raise InputError(f"is {size} bytes, over the {MAX_READ_BYTES} byte limit for a {what} read whole "
                             "(only a host file, mapped, may be larger)", path=str(path))
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such {what}", path=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", path=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, not a {what}", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or exc}", path=str(path)) from None


# -- large host files: mapped, not read --------------------------------------------------
#
# A SYCL library can be hundreds of megabytes of device images (vLLM's attention library:
# 330 MB, 1,004 zebins).  Read whole, it sat in memory twice (the file, then every image cut
# from it).  Mapped instead, only what is looked at is paged in: the ELF headers, the image
# records, and one image at a time (`cut` copies it out and gives the mapped pages back).

MAP_BYTES = 16 * 1024 * 1024
MAX_READ_BYTES = 2 * 1024 * 1024 * 1024
"""The largest file read into memory whole (a larger host file is mapped)."""
"""Files and package members this large or larger are mapped (members: spooled first)."""


EM_X86_64 = 62


def is_host_elf(data: Buffer) -> bool:
    """An x86-64 ELF file (an object, executable or shared object that may carry device images)."""
    return data[:4] == b"\x7fELF" and len(data) >= 20 and struct.unpack_from("<H", data, 18)[0] == EM_X86_64


def is_host_head(head: bytes) -> bool:
    """Whether a file's first bytes are an x86-64 ELF file or a static archive: what may be
    large and is only ever read in pieces (device images, headers, records)."""
    return is_host_elf(head) or head[:8] == b"!<arch>\n"


def map_file(handle: BinaryIO) -> mmap.mmap:
    """A read-only map of an open file (which may be closed afterwards: the map stays valid)."""
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def spool(stream: IO[bytes], limit: int, *, head: bytes = b"") -> mmap.mmap | None:
    """A stream's bytes (a package's member being decompressed), copied in chunks into an
    unnamed temporary file and mapped: memory holds a chunk, not the member.  The file has no
    name anyone can see and is gone once the map is.  None when the stream is longer than
    `limit` after `head` (bytes already read from it, which lead the copy)."""
    with tempfile.TemporaryFile(prefix="zeinspect-member-") as tmp:
        tmp.write(head)
        copied = 0
        while chunk := stream.read(1 << 20):
            copied += len(chunk)
            if copied > limit:
                return None
            tmp.write(chunk)
        tmp.flush()
        if not copied + len(head):
            return None
        return map_file(tmp)


def cut(data: Buffer, offset: int, size: int) -> bytes:
    """`data[offset:offset + size]` as bytes of their own; from a map, every page it holds is
    handed back after the copy (they stay in the page cache), so that reading every image of
    a large library one after another never holds more than one of them.  The whole map, not
    the image's span: the kernel maps a file's cached pages in large blocks (folios), which
    reach into the neighbouring images; handing back a map's unmapped pages costs little."""
    piece = bytes(data[offset:offset + size])
    release(data)
    return piece


def release(data: Buffer) -> None:
    """Hand back every page of a map that reading paged in: they stay in the page cache and
    come back if read again.  Nothing for bytes."""
    if isinstance(data, mmap.mmap) and not data.closed and len(data):
        data.madvise(mmap.MADV_DONTNEED)


class BufferStream(io.RawIOBase):
    """A seekable read-only stream over bytes or a map, without copying them (io.BytesIO copies
    anything that is not `bytes`): what pyelftools, zipfile and tarfile are given."""

    def __init__(self, data: Buffer) -> None:
        super().__init__()
        self._data = data
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        piece = self._data[self._pos:self._pos + len(buffer)]
        buffer[:len(piece)] = piece
        self._pos += len(piece)
        return len(piece)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._data)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        # pyelftools' objects refer to one another (a cycle the collector frees late): closing
        # lets go of the bytes now, so that a large library's map is unmapped when it is done.
        self._data = b""
        super().close()
