"""What a user hands us: recognise each file by its content, walk directories.

Kinds (inputs.kinds): OpenCL C source, SPIR-V, zebin, legacy patch-token binary, ocloc fat
binary (an `ar` archive), host file (an x86-64 object, executable, shared object or static
archive that may carry device images: see inputs.offload); an entry of the SYCL runtime's
persistent cache is read as the SPIR-V it holds (inputs.sycl_cache).  Content decides, not the file
name, except that OpenCL C (plain text) is recognised by its `.cl` suffix.  `DETECTORS` is
the one registration of how each kind is recognised, tried in order.

Only a file the user named may be an input error.  Inside a package or a folder, a member that
holds no compute kernel (a Vulkan shader shipped as `.spv`, SPIR-V without entry points, a
file that is not what its name says) is counted and named in a note, and skipped; an internal
error while reading one member is an incident of that member, and the others are read
(`Reading`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import InputError, debugging, internal_incident
from ..ledger import Exclusion, Part, input_of
from ..model import InputId
from . import packages, sycl_cache
from .fatbin import GENERIC_IR_SUFFIX, NATIVE_IR_SUFFIX, generic_ir, is_fatbin, read_members
from .files import Buffer, read_or_map
from .kinds import SOURCE_SUFFIXES, InputKind
from .offload import BUNDLE_PREFIX, carries_device_images, is_host_archive, is_host_elf
from .patchtokens import is_patchtoken_binary
from .spirv import is_spirv
from .zebin import is_zebin, looks_like_elf

if TYPE_CHECKING:  # imported where an image is described: a source file or a zebin needs none (start-up)
    from .sycl_image import ImageInfo

MAX_INPUT_BYTES = 64 * 1024 * 1024 * 1024
"""The largest file read: a host file is mapped (never held in memory), any other is read whole
up to files.MAX_READ_BYTES."""


@dataclass(frozen=True)
class Input:
    path: str
    """As the user spelled it (or as found under a directory they named)."""
    kind: InputKind
    data: bytes
    """Its bytes; a large host file's are a read-only map (inputs.files.read_or_map) typed as
    bytes here: only the host-file readers (inputs.offload) ever see one, and they take any
    buffer."""
    image: ImageInfo | None = field(default=None, compare=False)
    """For a device image taken from a SYCL build: its descriptor (options, property sets)."""
    origin: InputId | None = field(default=None, compare=False)
    """For an image taken from a host file: the file, member and image (None: `path` is the file)."""
    within: str | None = field(default=None, compare=False)
    """The package or folder the user named that holds it (None: named itself): what one part
    that does not read is skipped from, instead of ending the run."""
    digest: str | None = field(default=None, compare=False)
    """The SHA-256 of a module whose bytes are not at hand (`data` is empty): a Triton build's
    SPIR-V, which the build cache does not keep (triton.build.warm).  Only the cached
    compiles of those bytes can answer for it: a compile it would need raises
    probes.executor.ModuleNeeded, and its maker builds the bytes again."""

    @property
    def bodiless(self) -> bool:
        return self.digest is not None

    @property
    def identity(self) -> InputId:
        return self.origin if self.origin is not None else InputId(self.path)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", InputKind(self.kind))  # a kind given by name works too

    @property
    def compilable(self) -> bool:
        return self.kind.compilable


def _is_host_elf(data: bytes) -> bool:
    return looks_like_elf(data) and is_host_elf(data)


# (kind, recognises its bytes), in the order they are tried: content decides.
DETECTORS = (
    (InputKind.SPIRV, is_spirv),
    (InputKind.HOST, is_host_archive),
    (InputKind.FATBIN, is_fatbin),
    (InputKind.ZEBIN, lambda data: looks_like_elf(data) and is_zebin(data)),
    (InputKind.PATCHTOKENS, is_patchtoken_binary),
    (InputKind.HOST, _is_host_elf),
    (InputKind.ELF, looks_like_elf),
)


def detect_kind(path: str, data: bytes) -> InputKind | None:
    kind = next((kind for kind, recognises in DETECTORS if recognises(data)), None)
    if kind is None and path.endswith(SOURCE_SUFFIXES):
        return InputKind.OPENCL
    return kind


def read_input(path: str) -> Input:
    """One file, recognised by content; InputError names the file and the problem.  A name a
    report shows is an input too: `PACKAGE!member` (a package's member) and `FILE[image]` (one
    device image of a host file, as `lib.so[.tgtimg[21]]` or `lib.a(k.o)[__CLANG_...]`)."""
    image = _image_spec(path)
    if image is not None:
        return image
    if packages.split(path) is not None:
        package, member = packages.split(path) or ("", "")
        return _package_member(package, member)
    data = read_or_map(path, "file", MAX_INPUT_BYTES)
    return _recognised(path, data)


def _recognised(path: str, data: Buffer, origin: InputId | None = None) -> Input:
    if not data:
        raise InputError("is empty", path=path)
    if not isinstance(data, bytes):
        # A map (files.read_or_map): what its head says, a host file or an archive (HOST or
        # FATBIN), only ever read in pieces by their readers.
        return Input(path=path, kind=detect_kind(path, bytes(data[:4096])) or InputKind.HOST,
                     data=cast(bytes, data), origin=origin)
    if sycl_cache.may_be_entry(data[:4096]) and (entry := sycl_cache.read_entry(data)) is not None:
        return _cache_entry(path, entry, origin)
    kind = detect_kind(path, data)
    if kind is None:
        raise InputError(
            "is not a SPIR-V module, OpenCL C source (.cl), zebin, patch-token binary, ocloc fat binary, "
            "host object with device images or SYCL cache entry",
            path=path,
        )
    if kind == InputKind.ELF:
        raise InputError("is an ELF file but neither an Intel GPU device binary nor an x86-64 host file", path=path)
    if kind == InputKind.SPIRV:
        from ..errors import FormatError
        from .spirv import read_module

        try:
            module = read_module(data, path)
        except FormatError as exc:
            raise InputError(str(exc).removeprefix(f"{path} ").removeprefix(f"{path}: "), path=path) from None
        if not module.kernel_names():
            from .spirv import not_a_kernel

            raise InputError(f"is {not_a_kernel(data, path)}", path=path)
    if kind == InputKind.OPENCL:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("is named .cl but is not UTF-8 text", path=path) from None
    return Input(path=path, kind=kind, data=data, origin=origin)


def _cache_entry(path: str, entry: sycl_cache.CacheEntry, origin: InputId | None) -> Input:
    """A SYCL persistent cache entry (inputs.sycl_cache): its SPIR-V, built with the options the
    runtime built it with; its variant names the device it was built for."""
    if not is_spirv(entry.image):
        raise InputError(f"is a SYCL cache entry whose image (built for {entry.device_name}) is not SPIR-V: a native "
                         "image, with nothing to rebuild for another device", path=path)
    inp = _recognised(path, entry.image)
    spec = {"SYCL/specialization constants": {"values in the cache entry": entry.spec_constants}} \
        if entry.spec_constants else {}
    from .sycl_image import ImageInfo

    info = ImageInfo(target_spec="spir64", compile_options=entry.options, format="spirv", properties=spec)
    where = origin or InputId(path)
    return dataclasses.replace(inp, image=info, origin=dataclasses.replace(
        where, variant=f"JIT-compiled by the SYCL runtime for {entry.device_name}"))


def _package_member(package: str, member: str) -> Input:
    found = next((m for m in packages.members(package) if m.name == member), None)
    if found is None:
        raise InputError(f"has no member {member!r} that holds kernels", path=package)
    return _member_input(package, found, packages.identity(package))


def _member_input(package: str, member: packages.Member, pkg: packages.Package) -> Input:
    name = f"{package}{packages.SEPARATOR}{member.name}"
    return _recognised(name, member.data, InputId(name, package=pkg.label))


_IMAGE = re.compile(r"^(?P<file>.+?)(?:\((?P<member>[^()\[\]]+)\))?\[(?P<image>.+)\]$")


def _image_spec(spec: str) -> Input | None:
    """`FILE[image]` or `FILE(member)[image]`, when FILE is a host file (or a package's member)
    and it has that image: the image as an input of its own, named as its reports name it."""
    m = _IMAGE.match(spec)
    if m is None or (not os.path.isfile(m["file"]) and packages.split(m["file"]) is None):
        return None
    host = read_input(m["file"])
    if host.kind != InputKind.HOST:
        return None
    for img in iter_host_images(host, [], host_info()):  # one image read at a time, up to the one named
        if img.origin is not None and img.origin.image == m["image"] and img.origin.member == m["member"]:
            return img
    raise InputError(f"has no device image {m['image']!r}" + (f" in member {m['member']!r}" if m["member"] else ""),
                     path=m["file"])


_LIBRARY = re.compile(r"\.(so(\.\d+)*|a|o|dll|pyd)$")
"""Members named as host files (libraries, objects, archives): what may carry device images."""

NAMED_SKIPPED = 40
"""Members a note names one by one (a package of hundreds of host libraries without device
images is counted whole, the first of them named)."""


@dataclass
class Reading:
    """What reading a user's inputs says besides the inputs: the parts of a package or a folder
    that hold no compute kernel, each named with why (a note per package or folder), and the
    internal errors contained to one part (incidents)."""

    skipped: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Package or folder -> (member, why) for each part not audited."""
    incidents: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    """Members that may hold kernels and could not be read (a library too damaged to open): the
    ledger's unread parts, their kernels unknown."""

    def skip(self, container: str, member: str, why: str) -> None:
        self.skipped.setdefault(container, []).append((member, why))

    def notes(self) -> list[str]:
        out = []
        for container, members in self.skipped.items():
            named = "; ".join(f"{m}: {why}" for m, why in members[:NAMED_SKIPPED])
            more = f"; and {len(members) - NAMED_SKIPPED} more" if len(members) > NAMED_SKIPPED else ""
            out.append(f"{container}: {len(members)} {'member' if len(members) == 1 else 'members'} "
                       f"not audited, holding no compute kernel: {named}{more}")
        return out


def contained(part: Input, reading: Reading, work: Callable[[], None]) -> None:
    """`work` on one input, its failure kept to it: an input error of a part of a package, folder
    or host file the user named skips that part with a note (raised for a file named itself);
    an internal error is that input's incident (raised with $ZEINSPECT_DEBUG)."""
    try:
        work()
    except InputError as exc:
        if part.within is None:
            raise
        member = part.path[len(part.within):].lstrip("!/") or part.path
        reading.skip(part.within, member, _reason(exc, part.within, member))
    except Exception as exc:  # noqa: BLE001 - one input's internal error must not end the whole run
        if debugging():
            raise
        reading.incidents.append(internal_incident(part.path, exc))


def _contained(container: str, member: str, read: Callable[[], Iterator[Input]], reading: Reading
               ) -> Iterator[Input]:
    """The inputs one part of a package or folder gives; a part that is no input is skipped and
    named, an internal error reading it is its incident (the other parts are read)."""
    try:
        yield from read()
    except InputError as exc:
        reading.skip(container, member, _reason(exc, container, member))
    except Exception as exc:  # noqa: BLE001 - one part's internal error must not end the whole run
        if debugging():
            raise
        reading.incidents.append(internal_incident(f"{container}{packages.SEPARATOR}{member}", exc))


def _reason(exc: InputError, container: str, member: str) -> str:
    """An input error's text without the file name it starts with (the note names the member)."""
    text = " ".join(str(exc).split())
    for prefix in (f"{container}{packages.SEPARATOR}{member}", str(exc.path or ""), member):
        if prefix and text.startswith(prefix):
            text = text[len(prefix):].lstrip(": ")
    return text.removeprefix("is ")


def _wanted_in_directory(path: Path) -> bool:
    """Whether a file found in a folder holds kernels: a source or SPIR-V module, a device
    binary, or a host file (library, object, archive, executable) that carries device images,
    as its section names say (inputs.offload.carries_device_images reads a few KB of it)."""
    if path.suffix in SOURCE_SUFFIXES or path.suffix == ".spv":
        return True
    try:
        with path.open("rb") as handle:
            head = handle.read(4096 if path.suffix == sycl_cache.SUFFIX else 20)
    except OSError:
        return False
    if sycl_cache.is_entry_file(path, head):
        return True
    if is_spirv(head) or is_fatbin(head) or is_zebin(head) or is_patchtoken_binary(head):
        return True
    if packages.is_package(path.name):
        return True
    return (head[:4] == b"\x7fELF" or head[:8] == b"!<arch>\n") and carries_device_images(str(path))


PRODUCT_KINDS = frozenset({InputKind.HOST, InputKind.FATBIN, InputKind.ZEBIN, InputKind.PATCHTOKENS})
"""What a product ships (libraries, native images), as opposed to sources and SPIR-V modules."""


def kind_of_path(path: str) -> set[InputKind]:
    """The kinds a path holds, from the first bytes of each file (a package: HOST, as what it
    ships; an image of a host file, `FILE[image]`: HOST), without reading them whole."""
    p = Path(path)
    if _IMAGE.match(path) and not p.exists():
        return {InputKind.HOST}
    if (p.is_file() and packages.is_package(path)) or packages.split(path) is not None:
        return {InputKind.HOST}  # what a package ships, or one of its members
    files = [p] if p.is_file() else [f for f in sorted(p.rglob("*")) if f.is_file() and _wanted_in_directory(f)] \
        if p.is_dir() else []
    kinds = set()
    for f in files:
        if packages.is_package(str(f)):
            kinds.add(InputKind.HOST)
            continue
        try:
            with f.open("rb") as handle:
                head = handle.read(4096)
        except OSError:
            continue
        kind = InputKind.SPIRV if sycl_cache.is_entry_file(f, head) else detect_kind(str(f), head)
        if kind is not None:
            kinds.add(kind)
    return kinds


def collect(paths: list[str], reading: Reading | None = None) -> list[Input]:
    """Files as given, directories walked (sorted, hidden entries skipped)."""
    return list(iter_inputs(paths, reading))


def iter_inputs(paths: list[str], reading: Reading | None = None) -> Iterator[Input]:
    """`collect`, one input at a time: a package's members are read as they are reached, so a
    caller that lets each go holds one at a time.  `reading` receives the parts of packages and
    folders that are skipped, and the incidents (none given: they are not kept)."""
    reading = reading if reading is not None else Reading()
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.startswith("."):
                        continue
                    child = Path(root) / name
                    if child.is_file() and _wanted_in_directory(child):
                        found.append(str(child))
            if not found:
                raise InputError("holds no kernels (.cl, .spv, zebins, fat binaries, packages or host files with "
                                 "device images)", path=path)
            for f in found:
                member = os.path.relpath(f, path)
                if packages.is_package(f):
                    yield from _contained(path, member, functools.partial(_package, f, reading), reading)
                else:
                    yield from _contained(path, member, functools.partial(_one, f, path), reading)
        elif packages.is_package(path) and p.is_file():
            empty = True
            for inp in _package(path, reading):
                empty = False
                yield inp
            if empty and path not in reading.skipped:
                raise InputError("holds no kernels (no member is a source, SPIR-V, device binary or host file "
                                 "with device images)", path=path)
        else:
            yield read_input(path)


def _one(path: str, within: str) -> Iterator[Input]:
    yield dataclasses.replace(read_input(path), within=within)


def _one_member(package: str, member: packages.Member, pkg: packages.Package) -> Iterator[Input]:
    yield dataclasses.replace(_member_input(package, member, pkg), within=package)


def _package(path: str, reading: Reading) -> Iterator[Input]:
    """Every member of a package that holds kernels, as inputs named `PACKAGE!member`, one at a
    time; a member that holds none, or does not read, is skipped and named (`reading`)."""
    pkg = packages.identity(path)
    for member in packages.members(path):
        if member.problem is not None:
            reading.skip(path, member.name, member.problem)
            if not member.holds_none and _LIBRARY.search(member.name):
                # A library that may hold kernels, unread: the run fails.
                reading.parts.append(Part(pkg.label, f"{path}{packages.SEPARATOR}{member.name}", None,
                                          "nothing (the member does not read)", unread=member.problem))
            continue
        yield from _contained(path, member.name, functools.partial(_one_member, path, member, pkg), reading)


def expand_host(inp: Input) -> tuple[list[Input], list[str], dict]:
    """The device images inside a host file as inputs of their own, plus notes.

    Returns (inputs, notes, info) where info says which IP versions native images cover and
    whether a SPIR-V image exists (the runtime would compile it for any other target)."""
    notes: list[str] = []
    info = host_info()
    return list(iter_host_images(inp, notes, info)), notes, info


def host_info() -> dict:
    """What `iter_host_images` finds out about a host file beside its images: the IP versions
    native images cover, whether a SPIR-V image exists, how many images, and what each image
    declares (ledger.Part)."""
    return {"ips": set(), "spirv": False, "images": 0, "parts": []}


def iter_host_images(inp: Input, notes: list[str], info: dict) -> Iterator[Input]:
    """`expand_host`, one image at a time (each read from the file as it is reached, so a caller
    that lets each go holds one image of a large library, never all of them); `notes` and
    `info` are complete once the images are.  A file that does not read raises InputError
    before the first image."""
    from ..errors import FormatError
    from .offload import iter_images

    try:
        images = iter_images(inp.data, inp.path)
    except FormatError as exc:
        raise InputError(str(exc).removeprefix(f"{inp.path} ").removeprefix(f"{inp.path}: "), path=inp.path) from None
    return _host_inputs(inp, images, notes, info)


def _host_inputs(inp: Input, images: Iterator, notes: list[str], info: dict) -> Iterator[Input]:
    from ..errors import FormatError

    ips: set[str] = info["ips"]
    parts: list[Part] = info["parts"]
    empty = 0
    try:
        for img in images:
            info["images"] += 1
            origin = InputId(inp.path, img.member, img.source, img.info.variant if img.info is not None else None,
                             inp.origin.package if inp.origin is not None else None)
            where = origin.label
            # A descriptor's table (the runtime's, possibly empty); an OffloadBinary entry's info carries
            # options only, no table: the image's own then declares.
            entries = img.info.kernels if img.info is not None and img.info.version is not None else None
            by = "SYCL offload entries" if entries is not None else ""
            device = _other_device(img)
            if device is not None:
                parts.append(Part(input_of(origin), where, entries, by or "nothing (an image for another device)",
                                  excluded=Exclusion.OTHER_DEVICE, detail=device))
                notes.append(f"{where}: an image for {device}, not an Intel GPU: not audited")
                continue
            if img.skipped:
                parts.append(Part(input_of(origin), where, entries, by or "nothing (no descriptor)", unread=img.skipped))
                notes.append(f"{where}: skipped: {img.skipped}")
                continue
            if img.kind in (InputKind.ZEBIN, InputKind.PATCHTOKENS, InputKind.FATBIN):
                found_ips, kernels = _native_contents(img, where, want_kernels=entries is None)
                ips.update(found_ips)
                parts.append(Part(input_of(origin), where, entries if entries is not None else kernels,
                                  by or NATIVE_DECLARED[img.kind], ips=tuple(sorted(found_ips))))
                yield Input(path=where, kind=img.kind, data=img.data, image=img.info, origin=origin,
                            within=inp.within or inp.path)
            elif img.kind == InputKind.SPIRV:
                points = _entry_points(img.data, where)
                if points == () and not entries:
                    # What a SYCL compiler emits for a translation unit without kernels: not a
                    # kernel, and nothing for the runtime to build.
                    empty += 1
                    parts.append(Part(input_of(origin), where, (), by or "SPIR-V entry points"))
                    continue
                info["spirv"] = True
                parts.append(Part(input_of(origin), where, entries if entries is not None else points,
                                  by or ("SPIR-V entry points" if points is not None else "nothing (the module does "
                                         "not read)"), compiled=True))
                yield Input(path=where, kind=InputKind.SPIRV, data=img.data, image=img.info, origin=origin,
                            within=inp.within or inp.path)
            elif img.kind == InputKind.BITCODE and entries is None and _relocatable(inp.data, img):
                # An object's bitcode (a clang offload bundle, or the new driver's `.llvm.offloading`
                # entries, which carry options but no descriptor) is linked into a program before
                # anything runs (a device library's, a user's object): the program's images are what
                # a device loads.
                parts.append(Part(input_of(origin), where, entries, "nothing (no descriptor)",
                                  excluded=Exclusion.BEFORE_LINK))
                notes.append(f"{where}: LLVM bitcode in an object, before its device link: not audited")
            else:
                why = ("an LLVM bitcode image: zeinspect does not compile LLVM IR" if img.kind == InputKind.BITCODE
                       else f"a {img.kind} image: not a device binary zeinspect reads")
                parts.append(Part(input_of(origin), where, entries, by or "nothing (no descriptor)", unread=why))
                notes.append(f"{where}: {why}")
    except FormatError as exc:  # a static archive read member by member: damaged further on
        raise InputError(str(exc).removeprefix(f"{inp.path} ").removeprefix(f"{inp.path}: "), path=inp.path) from None
    if empty:
        notes.append(f"{inp.path}: {empty} SPIR-V image{'s' if empty > 1 else ''} without kernels "
                     "(no entry points) not audited")
    if not info["images"]:
        notes.append(f"{inp.path}: no device images found")


def declared(inp: Input) -> Part | None:
    """What an input that is not a host file declares: a SPIR-V module its entry points (or, a
    SYCL cache entry's, its image's entries), a native binary its kernels.  An OpenCL C source
    has no table: its front end's SPIR-V declares its kernels once it is made (probes.aot),
    so None here."""
    origin = inp.identity
    entries = inp.image.kernels if inp.image is not None and inp.image.version is not None and inp.image.kernels \
        else None
    if inp.kind == InputKind.SPIRV:
        points = _entry_points(inp.data, inp.path)
        return Part(input_of(origin), inp.path, entries or points,
                    "SYCL offload entries" if entries else "SPIR-V entry points" if points is not None
                    else "nothing (the module does not read)", compiled=True)
    if inp.kind == InputKind.OPENCL:
        return None
    if inp.kind in NATIVE_DECLARED:
        found_ips, kernels = _native_contents(inp, inp.path, want_kernels=True)
        return Part(input_of(origin), inp.path, kernels, NATIVE_DECLARED[inp.kind] if kernels is not None
                    else "nothing (the binary does not read)", ips=tuple(sorted(found_ips)))
    return Part(input_of(origin), inp.path, None, f"not declared (a {inp.kind} input)")


def _relocatable(data: Any, img: Any) -> bool:
    """Whether an image sits in a relocatable object (an `.o`, or a static archive's member):
    ELF e_type ET_REL of the host file, or an archive member's."""
    import struct

    if img.member is not None:
        return True  # a static archive holds objects
    head = bytes(data[:18])
    return head[:4] == b"\x7fELF" and len(head) >= 18 and struct.unpack_from("<H", head, 16)[0] == 1


NATIVE_DECLARED = {InputKind.ZEBIN: "zebin kernels", InputKind.FATBIN: "fat binary members' kernels",
                   InputKind.PATCHTOKENS: "patch-token kernels"}


def _native_contents(img: Any, where: str, *, want_kernels: bool) -> tuple[set[str], tuple[str, ...] | None]:
    """(IP versions, kernels) of a native image: a zebin's, or every member of a fat binary's
    but its generic_ir; the kernels only when asked (an image with a descriptor has its table)
    and None where the image does not read (its reader then reports the damage)."""
    from ..errors import FormatError
    from .fatbin import read_members
    from .patchtokens import read_patchtoken_binary
    from .zebin import read_zebin

    try:
        if img.kind == InputKind.ZEBIN:
            zebin = read_zebin(img.data, where)
            return ({zebin.ip} if zebin.ip else set()), tuple(k.name for k in zebin.kernels)
        if img.kind == InputKind.PATCHTOKENS:
            return set(), tuple(k.name for k in read_patchtoken_binary(img.data, where)[1]) if want_kernels else None
        members = [m for m in read_members(img.data, where) if m.name != "generic_ir"]
        found = {m.ip for m in members if m.ip}
        if not want_kernels:
            return found, None
        kernels: dict[str, None] = {}
        for m in members:
            if is_zebin(m.data):
                kernels.update(dict.fromkeys(k.name for k in read_zebin(m.data, f"{where}[{m.name}]").kernels))
        return found, tuple(kernels)
    except FormatError:
        return set(), None


def _other_device(img: Any) -> str | None:
    """The device an image is for when it is not an Intel GPU (a CPU's, an FPGA's, another
    vendor's GPU), from its triple or its descriptor's target: None for an Intel GPU's or
    when nothing says."""
    spec = (img.info.target_spec if img.info is not None and img.info.target_spec else None) or img.triple or ""
    spec = spec.removeprefix(BUNDLE_PREFIX).removeprefix("sycl-").removeprefix("openmp-")
    if not spec:
        return None
    if spec.startswith(("spir64_x86_64", "spir64_fpga", "spir_x86", "spir_fpga")):
        return spec.split("-")[0]
    if spec.startswith(("spir", "spirv")):
        return None
    return spec


def _entry_points(data: bytes, where: str) -> tuple[str, ...] | None:
    """The kernels a SPIR-V module declares (its OpEntryPoint ... Kernel); None for a module that
    does not read, left to the compiler to say what is wrong with it."""
    from ..errors import FormatError
    from .spirv import kernel_names

    try:
        return tuple(kernel_names(data, where))
    except FormatError:
        return None



def generic_ir_input(image: Input) -> Input | None:
    """A fat binary's `generic_ir` member as a SPIR-V input the JIT path builds: the SPIR-V with
    the build options its native members were built with (the options the member records, which
    the driver builds it with: compute-runtime module_imp.cpp, `this->options =
    singleDeviceBinary.buildOptions`); None when the fat binary carries none."""
    member = next((m for m in read_members(image.data, image.path) if m.entry == "generic_ir"), None)
    if member is None:
        return None
    spirv, options = generic_ir(member.data, image.path + GENERIC_IR_SUFFIX)
    return _ir_input(image, GENERIC_IR_SUFFIX, spirv, options)


def native_ir_input(image: Input) -> Input | None:
    """A zebin's own SPIR-V (`.spv`) as the input the driver rebuilds on a device the zebin was not
    built for, with the options it records (inputs.zebin.zebin_ir); None without one."""
    from .zebin import zebin_ir

    found = zebin_ir(image.data, image.path)
    return _ir_input(image, NATIVE_IR_SUFFIX, *found) if found is not None else None


def _ir_input(image: Input, suffix: str, spirv: bytes, options: str) -> Input:
    from .sycl_image import ImageInfo

    # The origin stays the native image's file: the product both paths belong to (probes.paths).
    return Input(path=image.path + suffix, kind=InputKind.SPIRV, data=spirv, origin=image.identity,
                 image=ImageInfo(compile_options=options), within=image.within)
