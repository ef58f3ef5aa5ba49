"""Fuzz targets: every reader of untrusted bytes, with the property each must keep.

The property common to all: the reader either returns or raises zeinspect's own error
type (ZeinspectError: a one-line message for the user).  Anything else — an IndexError, a
RecursionError, a hang, unbounded memory — is a bug.  Some targets check more (the ratchet
file must render back byte for byte whatever it parsed).
"""

from __future__ import annotations

from zeinspect.errors import ZeinspectError


def zebin(data: bytes) -> None:
    from zeinspect.inputs.zebin import read_zebin
    from zeinspect.toolchain.disasm import short_names

    for ip in (None, "12.0.0", "20.1.0"):
        read_zebin(data, "fuzz", target_ip=ip)
    # What `ocloc disasm` is handed (--cost on a native image): renamed, one more section.
    renamed, _ = short_names(data, "fuzz")
    assert len(renamed) >= len(data)


def zeinfo(data: bytes) -> None:
    from zeinspect.inputs.strict_yaml import load_yaml_strictly
    from zeinspect.inputs.zeinfo import derive_kernels

    doc = load_yaml_strictly(data, "fuzz")
    for rule in (True, False, None):
        derive_kernels(doc, xe_hp_or_later=rule)


def patchtokens(data: bytes) -> None:
    from zeinspect.inputs.patchtokens import read_patchtoken_binary

    read_patchtoken_binary(data, "fuzz")


def fatbin(data: bytes) -> None:
    from zeinspect.inputs.fatbin import read_members

    for member in read_members(data, "fuzz"):
        _ = member.ip, member.entry


def offload(data: bytes) -> None:
    from zeinspect.inputs.offload import find_images, offload_entries, split_end_to_end, split_offloading

    try:
        find_images(data, "fuzz")
    except ZeinspectError:
        pass
    split_end_to_end(data, 0, "fuzz")
    split_offloading(data, 0, "fuzz")
    try:
        offload_entries(data)
    except ZeinspectError:
        pass


def spirv(data: bytes) -> None:
    from zeinspect.inputs.spirv import read_module
    from zeinspect.levers.sub_group import check_structure, depends_on_sub_group, set_sub_group

    module = read_module(data, "fuzz")
    names = module.kernel_names()
    for name in names[:2]:
        depends_on_sub_group(data, name)
        for size in (0, 16):
            rewritten = set_sub_group(data, name, size)
            check_structure(rewritten, name, size)


def sycl_cache(data: bytes) -> None:
    """A SYCL persistent cache entry.  Seeds: the runtime's framing and the device and options
    items of a real entry (intel-sycl-rt 2026.2 on the OpenCL CPU device, as
    tests/integration/inputs/test_sycl_cache.py makes them) around the spirv target's seeds."""
    from zeinspect.inputs import sycl_cache as reader

    reader.may_be_entry(data[:4096])
    entry = reader.read_entry(data)
    if entry is not None:
        assert entry.image and "/" in entry.device
        spirv(entry.image)


def buildlog(data: bytes) -> None:
    from zeinspect.inputs.buildlog import lines_for_kernel, parse_log
    from zeinspect.probes.logs import reports_from_log

    text = data.decode("utf-8", "replace")
    events = parse_log(text)
    for event in events[:3]:
        if event.kernel:
            lines_for_kernel(text, event.kernel)
    reports_from_log("fuzz.log", text)


def ratchet(data: bytes) -> None:
    from zeinspect.judge.ratchet import parse

    text = data.decode("utf-8", "replace")
    parsed = parse(text, "fuzz.txt")
    assert parsed.render() == text, "a parsed ratchet file must render back unchanged"


def gate(data: bytes) -> None:
    from zeinspect.judge.gate import parse

    parse(data, "ratchet/gate.yaml")


def shapes(data: bytes) -> None:
    from zeinspect.judge.shapes_file import parse

    parse(data, "ratchet/shapes.yaml")


def package(data: bytes) -> None:
    """A package (zip: a wheel or a conda package; else a tar, plain or compressed) read member by member."""
    import tempfile

    from zeinspect.inputs import packages

    suffix = ".whl" if data[:2] == b"PK" else ".tar.bz2" if data[:3] == b"BZh" else ".tar.gz" \
        if data[:2] == b"\x1f\x8b" else ".tar"
    with tempfile.NamedTemporaryFile(suffix=suffix) as fh:
        fh.write(data)
        fh.flush()
        for member in packages.members(fh.name):
            assert ".." not in member.name.split("/") and not member.name.startswith("/")


def profile(data: bytes) -> None:
    """A run's profile (a Chrome trace, unitrace's summary, a CSV), read and joined."""
    import tempfile

    from zeinspect.inputs.profile import read_profile
    from zeinspect.judge.profile import join

    with tempfile.NamedTemporaryFile(suffix=".json") as fh:
        fh.write(data)
        fh.flush()
        read = read_profile(fh.name)
    joined = join(read, [])
    assert len(joined.kernels) == len(read.kernels) and all(k.share >= 0 for k in joined.kernels)


TARGETS = {f.__name__: f for f in (zebin, zeinfo, patchtokens, fatbin, offload, spirv, sycl_cache, buildlog, ratchet,
                                   gate, shapes, package, profile)}


def run_one(name: str, data: bytes) -> None:
    """The fuzz entry: our own errors are fine, anything else propagates as a finding."""
    try:
        TARGETS[name](data)
    except ZeinspectError:
        pass
