"""A profile of the user's own run: how much GPU time each kernel took, by name.

Three ways in, recognised by content:
- a Chrome trace JSON (`{"traceEvents": [...]}` or a bare list of events): PyTorch's profiler
  (`torch.profiler`, `export_chrome_trace`, written by Kineto) and unitrace's Chrome-format
  output.  A GPU kernel's event is a complete event (`"ph": "X"`) of category `kernel`
  (Kineto's name for its CONCURRENT_KERNEL activity, CUDA's (CUPTI) and XPU's (XPUPTI) alike)
  or `gpu_op` (unitrace's device-side events); its `name` is the kernel's name as launched,
  its `dur` microseconds.  The trace's `deviceProperties[].name` (Kineto) names the GPU.
- unitrace's device timing summary (`unitrace -d`): the CSV table whose header holds `Kernel`
  and `Time (ns)`, one line per kernel with its calls and total time; a name's bracketed tail
  (`[SIMD32 {..} {..}]`, unitrace's verbose form) is not part of it.
- a plain CSV `kernel,time` (any unit: shares are what is used), for anything else.
Several launches of one kernel add up.  The trace is decoded into typed events by msgspec,
keeping only the fields used, so a 100 MB trace is read in a second in bounded memory.
Anything else is an input error naming the file (InputError, exit 2).
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

MAX_PROFILE_BYTES = 4 * 1024 * 1024 * 1024
KERNEL_CATEGORIES = frozenset({"kernel", "gpu_op"})


class _Event(msgspec.Struct):
    name: str = ""
    cat: str = ""
    ph: str = ""
    dur: float = 0.0


class _Device(msgspec.Struct):
    name: str = ""


class _Trace(msgspec.Struct):
    # Events stay raw (a view of the file's bytes) until each is decoded on its own, so the
    # hundreds of thousands of CPU and runtime events of a long run are never held as objects.
    traceEvents: list[msgspec.Raw] = []  # noqa: N815 - the trace format's own key
    deviceProperties: list[_Device] = []  # noqa: N815


_EVENT = msgspec.json.Decoder(_Event)


@dataclass
class KernelTime:
    seconds: float = 0.0
    launches: int = 0


@dataclass
class Profile:
    path: str
    source: str
    """`pytorch` (a Kineto Chrome trace), `chrome` (another Chrome trace: unitrace's), `unitrace`
    (its summary) or `csv`."""
    kernels: dict[str, KernelTime] = field(default_factory=dict)
    device: str | None = None
    """The GPU the trace names (Kineto's deviceProperties), if any."""

    @property
    def total(self) -> float:
        return sum(k.seconds for k in self.kernels.values())

    @property
    def foreign(self) -> bool:
        """Whether the trace was taken on a GPU other than Intel's (its time shares a proxy).
        SYCL names every Intel GPU `Intel(R) ...` (Kineto's XPU deviceProperties carry that name)."""
        return bool(self.device) and "intel" not in (self.device or "").lower()

    def add(self, name: str, seconds: float, launches: int = 1) -> None:
        k = self.kernels.setdefault(name, KernelTime())
        k.seconds += seconds
        k.launches += launches


def read_profile(path: str) -> Profile:
    data = read_file(path, "profile", MAX_PROFILE_BYTES)
    head = data[:4096].lstrip()
    if head[:1] in (b"{", b"["):
        return _chrome(data, path)
    text = data.decode("utf-8", "replace")
    if re.search(r"^\s*\"?Kernel\"?\s*,.*Time \(ns\)", text, re.M):
        return _unitrace_summary(text, path)
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
        out = _kernels(events, out, path)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InputError(f"is not a Chrome trace this reads ({' '.join(str(exc).split())[:200]})", path=path) from None
    if not out.kernels:
        raise InputError("holds no GPU kernel events (complete events of category kernel or gpu_op)", path=path)
    return out


def _kernels(events: Iterator[_Event], out: Profile, path: str) -> Profile:
    for e in events:
        if e.ph == "X" and e.cat in KERNEL_CATEGORIES and e.name:
            if not 0 <= e.dur < math.inf:
                raise InputError(f"kernel event {e.name[:80]!r} has a duration of {e.dur}", path=path)
            out.add(e.name, e.dur / 1e6)
    return out


def _unitrace_summary(text: str, path: str) -> Profile:
    out = Profile(path, "unitrace")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"Kernel\"?\s*,.*Time \(ns\)", line))
    header = [h.strip().strip('"') for h in next(_rows([lines[start]], path))]
    try:
        name_at, calls_at, time_at = header.index("Kernel"), header.index("Calls"), header.index("Time (ns)")
    except ValueError:
        raise InputError("has a unitrace summary without Kernel, Calls and Time (ns) columns", path=path) from None
    for row in _rows(lines[start + 1:], path):
        if len(row) <= max(name_at, calls_at, time_at) or not row[time_at].strip().replace(".", "").isdigit():
            if out.kernels:
                break  # the table ends at the first line that is not one of its rows
            continue
        name = re.sub(r"\[SIMD\d+.*\]$", "", row[name_at].strip().strip('"')).strip()
        try:
            out.add(name, float(row[time_at]) / 1e9, int(row[calls_at] or 0))
        except ValueError:
            raise InputError(f"has a unitrace summary row for {name[:80]!r} whose calls are not a count",
                             path=path) from None
    if not out.kernels:
        raise InputError("has a unitrace summary with no kernel rows", path=path)
    return out


def _rows(lines: list[str], path: str) -> Iterator[list[str]]:
    try:
        yield from csv.reader(lines)
    except csv.Error as exc:
        raise InputError(f"is not a CSV this reads ({exc})", path=path) from None


def _csv(text: str, path: str) -> Profile:
    out = Profile(path, "csv")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise InputError(f"is not a CSV this reads ({exc})", path=path) from None
    if not rows or [c.strip().lower() for c in rows[0][:2]] != ["kernel", "time"]:
        raise InputError("is not a profile: a Chrome trace JSON, unitrace's summary, or a CSV whose header is "
                         "kernel,time", path=path)
    for n, row in enumerate(rows[1:], start=2):
        if not row or not any(c.strip() for c in row):
            continue
        try:
            seconds = float(row[1])
        except (IndexError, ValueError):
            raise InputError(f"line {n}: not KERNEL,TIME", path=path) from None
        if not 0 <= seconds < math.inf:
            raise InputError(f"line {n}: a time of {row[1].strip()}, not a positive number", path=path)
        out.add(row[0].strip(), seconds)
    if not out.kernels:
        raise InputError("has no kernel rows", path=path)
    return out
