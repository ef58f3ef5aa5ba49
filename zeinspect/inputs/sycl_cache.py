"""An entry of the SYCL runtime's persistent device-code cache: a module an application
JIT-compiled at run time, as the runtime keeps it.

With `SYCL_CACHE_PERSISTENT=1` the DPC++ runtime keeps every program it builds from a JIT
image under `SYCL_CACHE_DIR` (by default `$XDG_CACHE_HOME/libsycl_cache`), one folder per
device, image, build options and specialization constants (hashes), each holding `N.src`,
`N.bin` and `N_access_time.txt` (N from 0, for hash collisions).  `N.src` says what the entry
was built from, as a sequence of items, each a little-endian 64-bit length and its bytes:

1. the device, as `platform/device/device version/driver version`;
2. the build options the runtime gave the device's compiler (the image's own and those the
   runtime adds for that device);
3. the specialization constants' values (empty without any);
4. the device image: SPIR-V for a JIT image.

`N.bin` is what that device's compiler made of it, which for a device other than an Intel
GPU is nothing zeinspect reads.  The SPIR-V is the module the same application JIT-compiles on
an Intel GPU: zeinspect audits it on the targets with the entry's build options, like a SYCL
image of a host file.  Options the runtime adds only for an Intel GPU (a register-file size
property's) are not in an entry built for another device; the note says which device built it.

Read on entries the runtime of intel-sycl-rt 2026.2 wrote for Open3D's XPU build running on
the OpenCL CPU device (tests/integration/inputs/test_sycl_cache.py makes them).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".src"
ITEMS = 4
MAX_TEXT = 1 << 16
"""The longest device string or build options an entry is taken to have (a few hundred bytes
in practice): what keeps another file with a `.src` suffix from being read as an entry."""


@dataclass(frozen=True)
class CacheEntry:
    device: str
    """The device the runtime built the entry for: `platform/device/version/driver`."""
    options: str
    """The build options the runtime gave that device's compiler."""
    spec_constants: bytes
    image: bytes

    @property
    def device_name(self) -> str:
        parts = self.device.split("/")
        return parts[1] if len(parts) > 1 else self.device


def _items(data: bytes) -> list[bytes] | None:
    out, offset = [], 0
    while offset < len(data):
        if offset + 8 > len(data):
            return None
        (size,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        if size > len(data) - offset:
            return None
        out.append(data[offset:offset + size])
        offset += size
    return out


def _text(item: bytes) -> str | None:
    if len(item) > MAX_TEXT:
        return None
    try:
        text = item.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() else None


def read_entry(data: bytes) -> CacheEntry | None:
    """The entry, or None when the bytes are not one (exactly four items that use the whole file,
    the first two printable text, the device string with its `/` separators, an image)."""
    if len(data) < 8 * ITEMS:
        return None
    items = _items(data)
    if items is None or len(items) != ITEMS:
        return None
    device, options = _text(items[0]), _text(items[1])
    if not device or "/" not in device or options is None or not items[3]:
        return None
    return CacheEntry(device=device, options=options, spec_constants=items[2], image=items[3])


def is_entry_file(path: Path, head: bytes) -> bool:
    """How a folder's file is taken for an entry before it is read whole: its `.src` suffix and
    its first bytes."""
    return path.suffix == SUFFIX and may_be_entry(head)


def may_be_entry(head: bytes) -> bool:
    """From a file's first bytes: whether it starts as an entry does (a short device string)."""
    if len(head) < 8:
        return False
    (size,) = struct.unpack_from("<Q", head, 0)
    return 0 < size <= MAX_TEXT and (_text(head[8:8 + size]) is not None if len(head) >= 8 + size else True)
