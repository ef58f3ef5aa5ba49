"""unitrace's text outputs, read as unitrace 2.3.0 writes them (docs/guides/profile.md#unitrace).

Read from intel/pti-gpu at fcd0ca813a6c (`tools/unitrace/src/version.h:4`: "2.3.0"); ZE is
`src/levelzero/ze_collector.h`, CL `src/opencl/cl_collector.h`:

- `-d` (device timing summary): `=== Device Timing Summary ===`, its totals (`Total Device Time
  for L0 backend (ns):`, tracer.h:453-501), then per backend (`== L0 Backend ==`, `== CL GPU
  Backend ==`, ...) a table `Kernel, Calls, Time (ns), Time (%), Average (ns), Min (ns), Max (ns)`
  (ZE:1478-1533: every field right-aligned with spaces, `", "` between them; CL:453-498: `","`).
  A Level Zero name is quoted and demangled and may hold commas; with `--separate-tiles`,
  `Tile #N: ` stands before its quotes.  So a row is split from the right: its last six fields
  are numbers, the rest is the name.  Then, Level Zero only, `=== Kernel Properties ===`
  (ZE:1537-1580): the driver's figures per kernel.
- `-s` (kernel submission summary, ZE:1588-1660, CL:500-554): its time is `Execute (ns)`.
- `-t` (device timeline, ZE:2764-2772): `Thread T Device D : NAME [ns] A (append) S (submit)
  B (start) E (end)`, one line per command; its time is end - start.
- Names (ZE:1160-1196, CL:282-306) carry a tail in `-t`, in Chrome traces and with `-v`:
  `[SIMD32 {gx; gy; gz} {lx; ly; lz}]` (`SIMD_ANY` for width 1) for a kernel, `[BYTES]` for a
  copy or fill.  The tail is the launch shape, not the kernel: matching strips it
  (`split_name`), and the shapes seen are kept.
- Device work that is not a kernel is named by a fixed list (ZE:401-521: the copies, fills,
  barriers and event resets; CL: the `clEnqueue*` transfers): counted apart (`command_kind`).

Without `-o`, unitrace writes to stderr, where the application's own lines may come between its
blocks; each process prints its own summaries (tracer.h:637-680), so a file may hold several,
and all are read.  What unitrace never writes (a `*` for a time, which only its hand-edited test
data for ze_graph_api holds) is refused, naming the format, rather than read as a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InputError

VERSION = "unitrace 2.3.0 (intel/pti-gpu fcd0ca813a6c)"

DEVICE_COLUMNS = ("Kernel", "Calls", "Time (ns)", "Time (%)", "Average (ns)", "Min (ns)", "Max (ns)")
SUBMISSION_COLUMNS = ("Kernel", "Calls", "Append (ns)", "Append (%)", "Submit (ns)", "Submit (%)", "Execute (ns)",
                      "Execute (%)")
QUEUED_COLUMNS = ("Kernel", "Calls", "Queued (ns)", "Queued (%)", "Submit (ns)", "Submit (%)", "Execute (ns)",
                  "Execute (%)")
PROPERTY_COLUMNS = ("Kernel", "Compiled", "SIMD", "Number of Arguments", "SLM Per Work Group",
                    "Private Memory Per Thread", "Spill Memory Per Thread", "Register File Size Per Thread")
TABLES = {DEVICE_COLUMNS: ("device", "Time (ns)"), SUBMISSION_COLUMNS: ("submission", "Execute (ns)"),
          QUEUED_COLUMNS: ("submission", "Execute (ns)"), PROPERTY_COLUMNS: ("properties", None)}

_TIMELINE = re.compile(r"Thread (\d+) Device (\S+) : (.+) \[ns\] (\d+) \(append\) (\d+) \(submit\) "
                       r"(\d+) \(start\) (\d+) \(end\)")
_TOTAL = re.compile(r"^\s*Total Device Time for (L0|CL CPU|CL GPU) backend \(ns\):\s*(\S+)\s*$")
_SECTION = re.compile(r"^=== (.+) ===$")
_BACKEND = re.compile(r"^== (L0|CL CPU|CL GPU) Backend ==$")
_TILE = re.compile(r"^Tile #\d+: ")
_SHAPE = re.compile(r"(?:\[SIMD(?:\d+|_ANY))? ?\{[^{}]*\} \{[^{}]*\}\]$")
_BYTES = re.compile(r"\[\d+\]$")

# ZE:401-521 and CL:1451-1675: the names of device work that is not a kernel, by kind.
_COMMANDS = (("copy", re.compile(r"^zeCommandListAppend(?:MemoryCopy|ImageCopy)\w*(?:\([HDMS]2[HDMS]\))?$|"
                                 r"^clEnqueue(?:Read|Write|Copy)\w*$")),
             ("fill", re.compile(r"^zeCommandListAppendMemoryFill(?:\([HDMS]\))?$|^clEnqueueFill\w*$")),
             ("barrier", re.compile(r"^zeCommandListAppend(?:MemoryRanges)?Barrier$")),
             ("event reset", re.compile(r"^zeCommandListAppendEventReset$")))


def command_kind(name: str) -> str | None:
    """The kind of device work a name is when it is not a kernel (copy, fill, barrier, event
    reset), from unitrace's own names; None for a kernel."""
    return next((kind for kind, pattern in _COMMANDS if pattern.match(name)), None)


def split_name(raw: str) -> tuple[str, str]:
    """(the kernel's or command's name, the launch shape or size unitrace added to it): the
    `Tile #N: ` prefix, the quotes and the `[SIMD.. {..} {..}]` or `[BYTES]` tail removed."""
    text = _TILE.sub("", raw.strip())
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    text = _TILE.sub("", text)
    tail = _SHAPE.search(text)
    if tail is None and text.startswith(("zeCommandListAppend", "clEnqueue")):
        tail = _BYTES.search(text)
    if tail is None:
        return text.strip(), ""
    return text[:tail.start()].strip(), tail.group().strip()


@dataclass(frozen=True)
class DriverFigures:
    """A row of unitrace's Kernel Properties table: what the user's own driver reported for the
    kernel on their GPU (zeKernelGetProperties, ZE:1537-1580)."""

    kernel: str
    compiled: str
    """`AOT` or `JIT`."""
    simd: int | None
    """None for `ANY`."""
    arguments: int
    slm_bytes: int
    private_bytes: int
    spill_bytes: int
    registers: int | None
    """The register file size per thread; None where the driver said `unknown`."""

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "compiled": self.compiled, "simd": self.simd, "arguments": self.arguments,
                "slm_bytes": self.slm_bytes, "private_bytes": self.private_bytes, "spill_bytes": self.spill_bytes,
                "registers": self.registers}


@dataclass
class Row:
    name: str
    shape: str
    calls: int
    nanoseconds: int


@dataclass
class UnitraceText:
    """What a file of unitrace's text output holds: its timed rows (of `-d`, else `-s`, else
    `-t`), the device time its summaries declare, and the driver's Kernel Properties."""

    form: str
    """`-d`, `-s` or `-t`: which output the times come from."""
    rows: list[Row] = field(default_factory=list)
    declared_ns: int | None = None
    """The summaries' `Total Device Time` (every backend, every process), where they give one."""
    properties: dict[str, DriverFigures] = field(default_factory=dict)
    summaries: int = 0


def looks_like_unitrace(text: str) -> bool:
    return bool(re.search(r"^=== (Device Timing|Kernel Submission) Summary ===$", text, re.M)
                or _TIMELINE.search(text[:1 << 20]))


def read_text(text: str, path: str) -> UnitraceText:
    """Every summary and timeline line of unitrace's in `text` (other lines, the application's,
    are passed over).  InputError (exit 2) for a table unitrace 2.3.0 would not write."""
    tables: dict[str, list[list[Row]]] = {"device": [], "submission": []}
    totals: dict[str, int] = {}
    properties: dict[str, DriverFigures] = {}
    timeline: list[Row] = []
    section = ""
    cpu = False
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _SECTION.match(line.strip())
        if head:
            section = head.group(1)
            if section in ("Device Timing Summary", "Kernel Submission Summary"):
                key = "device" if section.startswith("Device") else "submission"
                totals[key] = totals.get(key, 0)
            i += 1
            continue
        backend = _BACKEND.match(line.strip())
        if backend:
            cpu = backend.group(1) == "CL CPU"
            i += 1
            continue
        total = _TOTAL.match(line)
        if total and total.group(1) == "CL CPU":
            i += 1  # the OpenCL CPU device's time: not an Intel GPU's
            continue
        if total and section in ("Device Timing Summary", "Kernel Submission Summary"):
            key = "device" if section.startswith("Device") else "submission"
            totals[key] += _number(total.group(2), f"{section}'s Total Device Time", path)
            i += 1
            continue
        columns = _columns(line)
        if columns is not None:
            kind, time_column = TABLES[columns]
            body, i = _table(lines, i + 1, len(columns))
            if kind == "properties":
                for fields in body:
                    figures = _properties(fields, path)
                    properties.setdefault(figures.kernel, figures)
            elif not cpu:  # a CL CPU backend's table is the CPU's time, not an Intel GPU's
                assert time_column is not None  # every timed table names its time column (TABLES)
                tables[kind].append([_timed(fields, columns, time_column, path) for fields in body])
            continue
        stamp = _TIMELINE.search(line)
        if stamp:
            name, shape = split_name(stamp.group(3))
            start, end = (_number(stamp.group(n), f"a timeline time for {name[:80]!r}", path) for n in (6, 7))
            if end < start:
                raise InputError(f"unitrace timeline line {i + 1}: {name[:80]!r} ends before it starts", path=path)
            timeline.append(Row(name, shape, 1, end - start))
        i += 1
    for form, key in (("-d", "device"), ("-s", "submission")):
        if tables[key]:
            if not any(tables[key]):
                raise InputError(f"has a unitrace {form} table with no row ({VERSION})", path=path)
            return UnitraceText(form, [r for t in tables[key] for r in t], totals.get(key) or None, properties,
                                len(tables[key]))
    if timeline:
        return UnitraceText("-t", timeline, None, properties)
    raise InputError(f"holds no table or timeline line of unitrace's this reads (-d, -s or -t of {VERSION})",
                     path=path)


def _split(line: str, count: int) -> list[str] | None:
    """A table line as its fields: the last `count - 1` are split off from the right (the name,
    first, may hold commas), each stripped of its padding."""
    parts = line.rsplit(",", count - 1)
    return [p.strip() for p in parts] if len(parts) == count else None


def _columns(line: str) -> tuple[str, ...] | None:
    if "," not in line or "Kernel" not in line:
        return None
    for columns in TABLES:
        fields = _split(line, len(columns))
        if fields is not None and tuple(fields) == columns:
            return columns
    return None


def _table(lines: list[str], i: int, count: int) -> tuple[list[list[str]], int]:
    """The rows of a table from line `i`: until a blank line or a line that is no row of it (one
    Log call writes a table whole: nothing comes between its rows)."""
    body = []
    while i < len(lines) and lines[i].strip():
        fields = _split(lines[i], count)
        if fields is None or not fields[0] or _columns(lines[i]) is not None:
            break
        body.append(fields)
        i += 1
    return body, i


def _number(text: str, what: str, path: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 20):
        raise InputError(f"has {what} {text[:20]!r}, not a number: unitrace writes whole nanoseconds ({VERSION}); "
                         "this is not its output", path=path)
    return int(text)


def _timed(fields: list[str], columns: tuple[str, ...], time_column: str, path: str) -> Row:
    name, shape = split_name(fields[0])
    calls = _number(fields[1], f"a call count for {name[:80]!r}", path)
    return Row(name, shape, calls, _number(fields[columns.index(time_column)], f"a {time_column} for {name[:80]!r}",
                                          path))


def _properties(fields: list[str], path: str) -> DriverFigures:
    name, _ = split_name(fields[0])
    compiled, simd, args, slm, private, spill, registers = fields[1:]

    def count(text: str, what: str) -> int:
        return _number(text, f"a Kernel Properties {what} for {name[:80]!r}", path)

    return DriverFigures(name, compiled, None if simd == "ANY" else count(simd, "SIMD"), count(args, "argument count"),
                         count(slm, "SLM size"), count(private, "private memory size"),
                         count(spill, "spill memory size"),
                         None if registers == "unknown" else count(registers, "register file size"))
