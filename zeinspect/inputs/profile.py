"""A profile of the user's own run: how much device time each kernel took, by name, and where the
rest of the device time went.

Four ways in, recognised by content (docs/guides/profile.md):
- a Chrome trace JSON (`{"traceEvents": [...]}` or a bare list of events): PyTorch's profiler
  (`torch.profiler`, `export_chrome_trace`, written by Kineto) and unitrace's Chrome-format
  output.  A device event is a complete event (`"ph": "X"`) of category `kernel` (Kineto's
  CONCURRENT_KERNEL, CUDA's and XPU's alike), `gpu_memcpy` or `gpu_memset` (Kineto's copies and
  fills), or `gpu_op` (unitrace's device events: kernels, copies, fills, barriers, resets,
  told apart by unitrace's names, inputs.unitrace.command_kind); `dur` is microseconds.  The GPU
  is Kineto's `deviceProperties[].name`, or unitrace's device process name
  (`DEVICE<host>[<device name>] ...`, chromelogger.h:184-215).
- unitrace's text outputs (`-d`, `-s`, `-t`; inputs.unitrace), from a file or captured stderr;
- a plain CSV `kernel,time` (any unit: shares are what is used), for anything else.
A name's launch-shape tail and tile prefix (unitrace's) are stripped, the shapes kept; several
launches of one name add up.  The trace is decoded into typed events by msgspec, keeping only
the fields used, so a 100 MB trace is read in a second in bounded memory.  Anything else is an
input error naming the file (InputError, exit 2).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from ..errors import InputError
from .files import read_file
from .unitrace import DriverFigures, command_kind, looks_like_unitrace, read_text, split_name

MAX_PROFILE_BYTES = 4 * 1024 * 1024 * 1024
KERNEL_CATEGORIES = frozenset({"kernel", "gpu_op"})
OTHER_CATEGORIES = {"gpu_memcpy": "copy", "gpu_memset": "fill"}
"""Kineto's device activities that are not kernels (ActivityType.h: GPU_MEMCPY, GPU_MEMSET)."""


class _Event(msgspec.Struct):
    name: str = ""
    cat: str = ""
    ph: str = ""
    dur: float = 0.0
    args: msgspec.Raw = msgspec.Raw(b"{}")


class _Args(msgspec.Struct):
    name: str = ""


class _Device(msgspec.Struct):
    name: str = ""


class _Trace(msgspec.Struct):
    # Events stay raw (a view of the file's bytes) until each is decoded on its own, so the
    # hundreds of thousands of CPU and runtime events of a long run are never held as objects.
    traceEvents: list[msgspec.Raw] = []  # noqa: N815 - the trace format's own key
    deviceProperties: list[_Device] = []  # noqa: N815


_EVENT = msgspec.json.Decoder(_Event)
_ARGS = msgspec.json.Decoder(_Args)
_UNITRACE_DEVICE = re.compile(r"DEVICE<[^>]*>\[(.+?)\]")


@dataclass
class KernelTime:
    seconds: float = 0.0
    launches: int = 0
    kind: str | None = None
    """For device work that is not a kernel: copy, fill, barrier, event reset."""


@dataclass
class Profile:
    path: str
    source: str
    """`pytorch` (a Kineto Chrome trace), `chrome` (another Chrome trace: unitrace's), `unitrace
    -d`, `unitrace -s`, `unitrace -t`, or `csv`."""
    kernels: dict[str, KernelTime] = field(default_factory=dict)
    device: str | None = None
    """The GPU the profile names (Kineto's deviceProperties, unitrace's device process), if any."""
    other: dict[str, KernelTime] = field(default_factory=dict)
    """Device work that is not a kernel, by name (each with its kind)."""
    declared_seconds: float | None = None
    """The device time the profile itself states (unitrace's `Total Device Time`), if it does."""
    shapes: dict[str, set[str]] = field(default_factory=dict)
    """A kernel's launch shapes as the profile named them (unitrace's `[SIMD.. {..} {..}]` tails)."""
    properties: dict[str, DriverFigures] = field(default_factory=dict)
    """The driver's figures per kernel (unitrace -d's Kernel Properties table)."""
    reader: str | None = None
    """The format's version this was read as (unitrace's), where it has one."""

    @property
    def total(self) -> float:
        """Kernel time: what every share is of."""
        return sum(k.seconds for k in self.kernels.values())

    @property
    def other_seconds(self) -> float:
        return sum(k.seconds for k in self.other.values())

    @property
    def device_seconds(self) -> float:
        """All device time: the profile's own statement where it makes one (never less than what
        its rows add up to), else its kernels and its other device work."""
        rows = self.total + self.other_seconds
        return max(self.declared_seconds or 0.0, rows)

    @property
    def unattributed_seconds(self) -> float:
        """Device time no row accounts for (overlap, unknown): the declared total less the rows."""
        return max(0.0, self.device_seconds - self.total - self.other_seconds)  # never below 0 by rounding

    def other_by_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in self.other.values():
            out[k.kind or "other"] = out.get(k.kind or "other", 0.0) + k.seconds
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    @property
    def foreign(self) -> bool:
        """Whether the trace was taken on a GPU other than Intel's (its time shares a proxy).
        SYCL names every Intel GPU `Intel(R) ...` (Kineto's XPU deviceProperties carry that name)."""
        return bool(self.device) and "intel" not in (self.device or "").lower()

    def add(self, raw: str, seconds: float, launches: int = 1, kind: str | None = None) -> None:
        """One row or event: a kernel, or (`kind`, or a name unitrace gives device work that is
        not a kernel) other device work; its shape tail and tile prefix stripped and kept."""
        name, shape = split_name(raw)
        kind = kind or command_kind(name)
        k = (self.other if kind else self.kernels).setdefault(name, KernelTime(kind=kind))
        k.seconds += seconds
        k.launches += launches
        if shape and not kind:
            self.shapes.setdefault(name, set()).add(shape)


def read_profile(path: str) -> Profile:
    data = read_file(path, "profile", MAX_PROFILE_BYTES)
    head = data[:4096].lstrip()
    # JSON: an object, or a list of objects; not a captured run whose first line is `[INFO] ...`.
    if head[:1] == b"{" or (head[:1] == b"[" and head[1:].lstrip()[:1] in (b"{", b"]", b"")):
        return _chrome(data, path)
    text = data.decode("utf-8", "replace")
    if looks_like_unitrace(text):
        return _unitrace(text, path)
    return _csv(text, path)


def _chrome(data: bytes, path: str) -> Profile:
    try:
        if data.lstrip()[:1] == b"[":
            trace = _Trace(traceEvents=msgspec.json.decode(data, type=list[msgspec.Raw]))
        else:
            trace = msgspec.json.decode(data, type=_Trace)
        device = next((d.name for d in trace.deviceProperties if d.name), None)
        out = Profile(path, "pytorch" if trace.deviceProperties else "chrome", device=device)
        events = (_EVENT.decode(raw) for raw in trace.traceEvents)
        out = _device_events(events, out, path)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"is not a Chrome trace this reads ({' '.join(str(exc).split())[:200]})", path=path) from None
    if not out.kernels:
        raise InputError("holds no GPU kernel events (complete events of category kernel or gpu_op)", path=path)
    return out


def _device_events(events: Iterator[_Event], out: Profile, path: str) -> Profile:
    for e in events:
        if e.ph == "M":
            if e.name == "process_name" and out.device is None and (m := _UNITRACE_DEVICE.search(
                    _ARGS.decode(e.args).name)):
                out.device = m.group(1)
            continue
        if e.ph != "X" or not e.name:
            continue
        kind = OTHER_CATEGORIES.get(e.cat)
        if kind is None and e.cat not in KERNEL_CATEGORIES:
            continue
        if not 0 <= e.dur < math.inf:
            raise InputError(f"device event {e.name[:80]!r} has a duration of {e.dur}", path=path)
        out.add(e.name, e.dur / 1e6, kind=kind)
    return out


def _unitrace(text: str, path: str) -> Profile:
    from .unitrace import VERSION

    got = read_text(text, path)
    out = Profile(path, f"unitrace {got.form}", properties=got.properties, reader=VERSION,
                  declared_seconds=got.declared_ns / 1e9 if got.declared_ns is not None else None)
    for row in got.rows:
        out.add(f"{row.name}{row.shape}", row.nanoseconds / 1e9, row.calls)
    if not out.kernels:
        raise InputError(f"has a unitrace {got.form} output with no kernel, only other device work", path=path)
    return out


def _csv(text: str, path: str) -> Profile:
    out = Profile(path, "csv")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"is not a CSV this reads ({exc})", path=path) from None
    if not rows or [c.strip().lower() for c in rows[0][:2]] != ["kernel", "time"]:
        raise InputError("is not a profile: a Chrome trace JSON, unitrace's -d, -s or -t output, or a CSV whose header "
                         "is kernel,time", path=path)
    for n, row in enumerate(rows[1:], start=2):
        if not row or not any(c.strip() for c in row):
            continue
        try:
            seconds = float(row[1])
        except (IndexError, ValueError):
            raise InputError(f"line {n}: not KERNEL,TIME", path=path) from None
        if not 0 <= seconds < math.inf:
            raise InputError(f"line {n}: a time of {row[1].strip()}, not a positive number", path=path)
        out.kernels.setdefault(row[0].strip(), KernelTime())
        out.kernels[row[0].strip()].seconds += seconds
        out.kernels[row[0].strip()].launches += 1
    if not out.kernels:
        raise InputError("has no kernel rows", path=path)
    return out
