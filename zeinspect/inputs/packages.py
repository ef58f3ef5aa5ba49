"""Products as they ship: wheels, conda packages and plain zip and tar archives of a build.

A package is read member by member, never unpacked into a folder: each member that holds kernels
(a source, SPIR-V, a device binary, or a host file whose section names say it carries device
images) becomes an input named `PACKAGE!member` (`vllm_xpu_kernels-0.1.16.2-...whl!
vllm_xpu_kernels/libgdn_attn_kernels_xe_2.so`), a name every command takes back as an input.
The package's name and version (a wheel's or conda package's own metadata) go with it.
A member is decompressed into memory, except a large host file (a library of hundreds of
megabytes): that one is streamed in chunks into an unnamed temporary file, deleted when done,
and mapped, so that memory holds one device image of it at a time (inputs.files.spool).  A
compressed member cannot be read at an offset, and a library's image records sit after its
images: mapping a spooled copy is what keeps memory bounded whatever the member's size.

Archives come from anywhere, so they are read defensively: a member's size, the number of
members and the compression ratio are bounded; a member whose name would leave the archive
(an absolute path, `..`) or that is a link is refused or skipped; what does not read is one
line naming the package (InputError, exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import IO, Any

from ..errors import InputError
from . import files
from .files import Buffer, BufferStream, is_host_head, spool
from .kinds import SOURCE_SUFFIXES

SEPARATOR = "!"
SUFFIXES = (".whl", ".zip", ".conda", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".tar.zst")
MAX_MEMBER_BYTES = 2 * 1024 * 1024 * 1024
"""The largest member read (decompressed), as for any input file."""
MAX_HOST_MEMBER_BYTES = 64 * 1024 * 1024 * 1024
"""The largest host file (a library) read from a package: spooled to disk and mapped, never held
in memory (intel-extension-for-tensorflow-lib ships a 2.3 GB one, 22,000 kernels)."""
MAX_MEMBERS = 200_000
MAX_RATIO = 1000
"""Decompressed to compressed size, at most, for a member over MAX_RATIO_FLOOR bytes: more is a bomb."""
MAX_RATIO_FLOOR = 1 << 20
MAX_NESTING = 2
"""A conda package's inner tarballs are the one nesting a real package has."""


@dataclass(frozen=True)
class Member:
    name: str
    """The member's path inside the package (POSIX, never leaving it)."""
    data: Buffer
    """Its bytes; a large host file's as a map of a spooled copy (inputs.files.spool)."""
    problem: str | None = None
    """Why it could not be read (too large, a bomb, damaged), or why it holds no device code: the
    member is named and skipped, and the package's other members are read."""
    holds_none: bool = False
    """The member was read and holds no device code (`problem` says why): skipped, not unread."""


@dataclass(frozen=True)
class Package:
    path: str
    name: str | None
    version: str | None

    @property
    def label(self) -> str:
        """`name version` as the report shows it (the file name when the metadata says neither)."""
        if self.name:
            return f"{self.name} {self.version}" if self.version else self.name
        return PurePosixPath(self.path).name


def is_package(path: str) -> bool:
    return path.lower().endswith(SUFFIXES)


def split(spec: str) -> tuple[str, str] | None:
    """`PACKAGE!member` -> (package path, member), when the part before `!` is a package."""
    head, sep, member = spec.partition(SEPARATOR)
    if sep and member and is_package(head):
        return head, member
    return None


def _safe_name(name: str, package: str) -> str:
    clean = name.replace("\\", "/")
    parts = PurePosixPath(clean).parts
    if clean.startswith("/") or ".." in parts or re.match(r"^[A-Za-z]:", clean):
        raise InputError(f"member {name[:120]!r} would leave the archive", path=package)
    return "/".join(p for p in parts if p not in ("", "."))


def _bounded_read(stream: IO[bytes], declared: int, compressed: int | None, name: str, package: str,
                  head: bytes = b"") -> Buffer:
    """A member's bytes (after `head`, its first bytes already read, which lead the result),
    refusing what is larger than the bounds or than it said it was.  A large host file is
    spooled and mapped (inputs.files.spool), so that memory never holds a whole library."""
    limit = MAX_HOST_MEMBER_BYTES if is_host_head(head) else MAX_MEMBER_BYTES
    if declared > limit:
        raise InputError(f"member {name!r} is {declared} bytes, over the {limit} byte limit", path=package)
    if compressed is not None and declared > MAX_RATIO_FLOOR and declared > MAX_RATIO * max(compressed, 1):
        raise InputError(f"member {name!r} decompresses {declared // max(compressed, 1)} times its size "
                         "(an archive bomb?)", path=package)
    rest = declared - len(head)
    if declared >= files.MAP_BYTES and is_host_head(head):
        mapped = spool(stream, rest, head=head)
        if mapped is None:
            raise InputError(f"member {name!r} is larger than its header says", path=package)
        return mapped
    data = stream.read(rest + 1)
    if len(data) > rest:
        raise InputError(f"member {name!r} is larger than its header says", path=package)
    return head + data


def _wanted(name: str, data: Buffer) -> bool:
    """Whether a member holds kernels, by its content (a source by its suffix)."""
    from .fatbin import is_fatbin
    from .offload import stream_carries_device_images
    from .patchtokens import is_patchtoken_binary
    from .spirv import is_spirv
    from .zebin import is_zebin

    if name.endswith(SOURCE_SUFFIXES):
        return True
    head = bytes(data[:20])
    if is_spirv(head) or is_fatbin(head) or is_zebin(head) or is_patchtoken_binary(head):
        return True
    return (head[:4] == b"\x7fELF" or head[:8] == b"!<arch>\n") and stream_carries_device_images(
        BufferStream(data), len(data))


def _zip_members(source: Any, package: str, depth: int) -> Iterator[Member]:
    import zipfile  # here: most runs read no package (start-up)

    try:
        archive = zipfile.ZipFile(source)
        infos = archive.infolist()
    except Exception as exc:  # noqa: BLE001 - zipfile raises more than its own errors on damaged input
        raise InputError(f"is not a readable zip archive ({exc})"[:200], path=package) from None
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"has {len(infos)} members, over the {MAX_MEMBERS} limit", path=package)
    for info in infos:
        if not info.filename or info.filename.endswith("/"):
            continue  # a folder (or a nameless entry)
        name = _safe_name(info.filename, package)
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            continue  # a symbolic link: never followed
        try:
            with archive.open(info) as stream:
                head = stream.read(20)
                if not _maybe(name, head, depth):
                    continue
                data = _bounded_read(stream, info.file_size, info.compress_size, name, package, head)
        except InputError as exc:
            # One member too large, a bomb: it is named and skipped, a zip's other members read on.
            yield Member(name, b"", problem=" ".join(str(exc).split()).removeprefix(f"member {name!r} "))
            continue
        except Exception as exc:  # noqa: BLE001 - zlib's, bz2's and lzma's own errors: a damaged member
            yield Member(name, b"", problem=f"does not read ({exc.__class__.__name__}: {exc})"[:200])
            continue
        yield from _member(name, data, package, depth)


def _maybe(name: str, head: bytes, depth: int) -> bool:
    """From a member's first bytes: could it hold kernels (or be a package inside a package)?"""

    if depth < MAX_NESTING and is_package(name):
        return True
    return name.endswith(SOURCE_SUFFIXES + (".spv",)) or head[:4] in (b"\x7fELF", b"\x03\x02#\x07") or \
        head[:8] == b"!<arch>\n"


def _member(name: str, data: Buffer, package: str, depth: int) -> Iterator[Member]:
    if depth < MAX_NESTING and is_package(name):
        # A conda package's inner tarballs (`pkg-*.tar.zst`): their members are the package's.
        yield from _members(BufferStream(data), name, package, depth + 1)
    elif _wanted(name, data):
        yield Member(name, data)
    elif (why := _not_device_code(name, data)) is not None:
        # Looked like device code (its name, an ELF file) and is not: named, so the reader knows.
        yield Member(name, b"", problem=why, holds_none=True)


def _not_device_code(name: str, data: Buffer) -> str | None:
    """Why a member that looked like device code holds none: a `.spv` that is not SPIR-V, a
    host file without device images.  None for what never looked like it."""
    head = bytes(data[:8])
    if name.endswith(".spv"):
        return "named .spv, but not a SPIR-V module"
    if head[:4] == b"\x7fELF" or head == b"!<arch>\n":
        return "a host file without device images"
    return None


def _tar_members(source: Any, suffix: str, package: str, depth: int) -> Iterator[Member]:
    import tarfile

    stream = source
    if suffix.endswith(".zst"):
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(source)
    mode = {"gz": "r|gz", "tgz": "r|gz", "bz2": "r|bz2", "tbz2": "r|bz2", "xz": "r|xz"}.get(
        suffix.rsplit(".", 1)[-1], "r|")
    count = 0
    try:
        with tarfile.open(fileobj=stream, mode=mode) as archive:  # type: ignore[call-overload]
            for info in archive:
                count += 1
                if count > MAX_MEMBERS:
                    raise InputError(f"has over {MAX_MEMBERS} members", path=package)
                if not info.isfile() or not info.name:
                    continue  # folders, and links (never followed)
                name = _safe_name(info.name, package)
                member = archive.extractfile(info)
                if member is None:
                    continue
                head = member.read(20)
                if not _maybe(name, head, depth):
                    continue
                data = _bounded_read(member, info.size, None, name, package, head)
                yield from _member(name, data, package, depth)
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise InputError(f"is not a readable tar archive ({exc})"[:200], path=package) from None
    except Exception as exc:  # zstandard's and bz2's own errors: the archive is damaged
        if isinstance(exc, InputError):
            raise
        raise InputError(f"does not decompress ({exc.__class__.__name__}: {exc})"[:200], path=package) from None


def _members(source: Any, name: str, package: str, depth: int) -> Iterator[Member]:
    lower = name.lower()
    if lower.endswith((".whl", ".zip", ".conda")):
        yield from _zip_members(source, package, depth)
    else:
        suffix = next(s for s in SUFFIXES if lower.endswith(s))
        yield from _tar_members(source, suffix, package, depth)


def members(path: str) -> Iterator[Member]:
    """Each member of the package at `path` that holds kernels, read one at a time."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the generator is done
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror})", path=path) from None
    with handle:
        yield from _members(handle, path, path, 0)


def identity(path: str) -> Package:
    """The package's name and version: a wheel's file name (PEP 427) or a conda package's
    (`name-version-build`), else none."""
    base = PurePosixPath(path).name
    m = re.match(r"^([A-Za-z0-9_.]+)-([0-9][^-]*)-", base)
    if base.endswith(".whl") and m:
        return Package(path, m[1].replace("_", "-"), m[2])
    m = re.match(r"^(.+)-([^-]+)-([^-]+)\.(conda|tar\.bz2)$", base)
    if m:
        return Package(path, m[1], m[2])
    return Package(path, None, None)
