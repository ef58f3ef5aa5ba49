"""Read IGC's final ISA dumps (toolchain.shader_dump): where a kernel spills, line by line.

What a dump gives, on both compiler generations:
  - a header: `//.kernel NAME`, `//.thread_config numGRF=N`, `//.instCount N`,
    `//.spill size N` (bytes), `//.spill GRF est. ref count N`;
  - declarations: `//.declare NAME (id) rf=r size=N ... (spilled -> Scratch[...])` for each
    spilled virtual register;
  - `// Line N:  <source text>` before the instructions of a source line (with -g / OpLine),
    and `// File: PATH` where the file changes (Triton: the kernel's module and triton's own
    language files, whose functions are inlined);
  - spill and fill messages annotated in the instruction's comment: `scratch space spill` /
    `scratch space fill` (Xe-HPG and earlier), `spill to offset[...]` / `fill from offset[...]`
    (Xe2);
  - labels (`_0_007:`) and branches (`goto`, `jmpi`, `while`, with label operands).
Loop depth is read from the control flow: a branch back to a label above it closes a loop
over the instructions between them.  Register pressure per line comes from inputs.liveness.
Spilled variables are tied to lines through scratch offsets: a declaration says where in
scratch a variable lives (`Scratch[4x32]`: 4 GRFs of 32 bytes in), a message where it reads or
writes (`offset[4x32]`, `offset[4*64]`) and its size how far; this works on both generations,
even where the message names no variable (Xe2 writes `of ?`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .liveness import EXEC_SIZE, Instruction, block_header, grf_bytes_for, live_registers

_LINE = re.compile(r"^// Line (\d+):\s?(.*)$")
_FILE = re.compile(r"^// File: (.*?)\s*$")
_LABEL = re.compile(r"^([A-Za-z_][\w.$]*):\s*(?://.*)?$")
_BRANCH = re.compile(r"\b(goto|jmpi|while|brc|brd)\b")
_SPILLED = re.compile(r"^//\.declare (\S+) \(\d+\)\s+rf=r size=(\d+).*\(spilled -> Scratch\[(\d+)[x*](\d+)\]\)")
_OFFSET = re.compile(r"offset\[(\d+)[x*](\d+)\]")
_OFFSET_UNITS = re.compile(r"(?:offset|Scratch)\[\d+[x*](\d+)\]")
_MESSAGE_SIZE = re.compile(r"\b(hword|oword)\b[^/]*? x(\d+)")
_LSC_ONE = re.compile(r"\.(?:ugm|slm|scratch)\.d(\d+)(?:u\d+)?\.")
_LSC_SIZE = re.compile(r"\.d(\d+)(?:u\d+)?x(\d+)(t?)\.")  # Xe2: load/store.ugm.d32x64t: 32-bit x 64, transposed
_HEADER = {"kernel": re.compile(r"^//\.kernel (\S+)"), "grf": re.compile(r"^//\.thread_config numGRF=(\d+)"),
           "instructions": re.compile(r"^//\.instCount (\d+)"),
           "platform": re.compile(r"^//\.platform (\S+)"), "spill_size": re.compile(r"^//\.spill size (\d+)"),
           "spill_refs": re.compile(r"^//\.spill GRF est\. ref count (\d+)")}
_SIMD = re.compile(r"_simd(\d+)_")
WORD_BYTES = {"hword": 32, "oword": 16}
NO_SLOT = (1 << 27) - 1
"""The slot IGC declares for a variable it marks spilled but gives no scratch (seen on Xe-LP and
Xe-HPG for 4-byte scalars: `Scratch[134217727x32]`)."""


@dataclass
class LineFigures:
    line: int | None
    """None: instructions before any line comment (or a module without line information)."""
    text: str = ""
    file: str | None = None
    """The source file, from the dump's `// File:` comment (None where it names none)."""
    block: str | None = None
    """For messages with no line: the ISA block (the label above them, `entry` before any)."""
    spills: int = 0
    fills: int = 0
    bytes_moved: int = 0
    """Bytes the spill and fill messages move, where their descriptors say (hword/oword x N)."""
    depth: int = 0
    """How many loops enclose the line's deepest spill or fill (0: none)."""
    pressure: int | None = None
    """The most GRFs occupied while one of the line's instructions executes (inputs.liveness)."""

    @property
    def weight(self) -> int:
        """Messages x 8^depth: a heuristic for ranking lines, not a measured cost."""
        return (self.spills + self.fills) * 8 ** self.depth


@dataclass(frozen=True)
class IsaInstruction:
    text: str
    line: LineFigures
    live: int
    """GRFs occupied while it runs: live before it, or written by it (inputs.liveness)."""

    @property
    def moves(self) -> str | None:
        """`spill` / `fill` for a spill or fill message, None otherwise."""
        return message_kind(self.text.partition("//")[2])


@dataclass
class SpilledVariable:
    name: str
    """IGC's virtual register (`V0101`)."""
    bytes: int
    offset: int | None = None
    """Where in scratch it lives (bytes), None where IGC gives no slot (its placeholder 2^27-1)."""
    lines: list[LineFigures] = field(default_factory=list)
    """The lines (or ISA blocks) whose spill or fill messages move this variable's slots."""


DUMP_KINDS = ("spill", "fill", "private")
NATIVE_KINDS = ("write", "read")


@dataclass(frozen=True)
class ScratchAccess:
    """One message that moves scratch memory: a spill, a fill, or a private-memory access."""

    kind: str
    """`spill`, `fill` or `private` (an IGC dump); `write` or `read` (a native binary's disassembly)."""
    bytes: int
    """What it moves, where its descriptor says (0 when unsaid)."""
    loop: int | None
    """The innermost loop around it (an index into KernelIsa.loops), None outside loops."""


@dataclass(frozen=True)
class ScratchCost:
    """What a kernel's scratch traffic costs, from the ISA's own control flow: the bytes it moves
    per iteration of the innermost loop that moves any, and in all by loop depth."""

    per_iteration: int
    """Bytes moved per iteration of the innermost (deepest) loop with scratch traffic, the most
    of such loops when several; 0 when scratch is touched only outside loops."""
    depth: int
    """That loop's nesting depth (0: no loop touches scratch)."""
    by_depth: dict[int, int]
    """Loop depth -> bytes moved by the messages at that depth, once each (0: outside loops)."""
    messages: dict[str, int]
    """Kind (spill, fill, private) -> messages."""

    @property
    def in_loops(self) -> bool:
        return self.depth > 0

    def to_json(self) -> dict:
        return {"per_iteration_bytes": self.per_iteration, "loop_depth": self.depth,
                "bytes_by_depth": {str(d): b for d, b in sorted(self.by_depth.items())},
                "messages": dict(self.messages), "in_loops": self.in_loops}

    def describe(self) -> str:
        if not self.in_loops:
            return "scratch touched outside loops only" if any(self.messages.values()) else "no scratch traffic"
        return (f"{self.per_iteration} bytes of scratch per iteration of its innermost loop with any "
                f"(depth {self.depth})")


@dataclass
class KernelIsa:
    kernel: str
    simd: int | None
    grf: int | None
    instructions: int | None
    spill_size: int | None
    spill_refs: int | None
    has_lines: bool
    lines: list[LineFigures] = field(default_factory=list)
    spilled_variables: list[SpilledVariable] = field(default_factory=list)
    platform: str | None = None
    listing: list[IsaInstruction] = field(default_factory=list, repr=False)
    """Every instruction, with its line and the GRFs occupied while it runs."""
    loops: list[tuple[int, int]] = field(default_factory=list, repr=False)
    """(first, last) row of each loop of the dump."""
    accesses: list[ScratchAccess] = field(default_factory=list, repr=False)
    """Every message that moves scratch, in order."""

    def cost(self) -> ScratchCost:
        """The scratch traffic's cost (ScratchCost), from `accesses` and `loops`."""
        depth_of = [sum(1 for a, b in self.loops if a <= first and last <= b) for first, last in self.loops]
        by_depth: dict[int, int] = {}
        by_loop: dict[int, int] = {}
        # A dump's kinds; a native binary's disassembly says only `write` and `read` (read_disasm).
        native = any(a.kind in NATIVE_KINDS for a in self.accesses)
        messages = dict.fromkeys(NATIVE_KINDS if native else DUMP_KINDS, 0)
        for access in self.accesses:
            messages[access.kind] += 1
            depth = depth_of[access.loop] if access.loop is not None else 0
            by_depth[depth] = by_depth.get(depth, 0) + access.bytes
            if access.loop is not None:
                by_loop[access.loop] = by_loop.get(access.loop, 0) + access.bytes
        if not by_loop:
            return ScratchCost(0, 0, by_depth, messages)
        deepest = max(depth_of[i] for i in by_loop)
        return ScratchCost(max(b for i, b in by_loop.items() if depth_of[i] == deepest), deepest, by_depth, messages)

    @property
    def peak(self) -> LineFigures | None:
        """The line with the most GRFs occupied (the first such line in the source)."""
        rows = [x for x in self.lines if x.pressure is not None]
        return max(rows, key=lambda x: (x.pressure, -(x.line or 0))) if rows else None

    @property
    def spilling(self) -> bool:
        return bool(self.spill_size or self.spills or self.fills)

    @property
    def weight(self) -> int:
        """The lines' weights together: how much spill traffic the kernel has, for ranking."""
        return sum(x.weight for x in self.lines)

    @property
    def spills(self) -> int:
        return sum(x.spills for x in self.lines)

    @property
    def fills(self) -> int:
        return sum(x.fills for x in self.lines)


def message_kind(comment: str) -> str | None:
    """`spill` / `fill` from an instruction's comment (Xe-HPG and earlier: `scratch space spill`,
    Xe2: `spill to offset`), None for any other instruction."""
    if "scratch space spill" in comment or "spill to offset" in comment:
        return "spill"
    if "scratch space fill" in comment or "fill from offset" in comment:
        return "fill"
    return None


def _loops(rows: list[str]) -> list[tuple[int, int]]:
    """(first, last) row of each loop.  From IGC's block comments where it prints them: a block
    with a successor at or above it closes a loop from that successor's first row to its own
    last.  Otherwise from labels: a branch to a label above it (any of its label operands:
    `goto.b` names two)."""
    headers = [(i, block_header(row.strip())) for i, row in enumerate(rows)]
    blocks = [(i, h) for i, h in headers if h is not None]
    if blocks:
        start = {name: i for i, (name, _) in blocks}
        loops = []
        for k, (i, (_, successors)) in enumerate(blocks):
            end = blocks[k + 1][0] - 1 if k + 1 < len(blocks) else len(rows) - 1
            loops += [(start[s], end) for s in successors if s in start and start[s] <= i]
        return loops
    labels: dict[str, int] = {}
    loops = []
    for i, row in enumerate(rows):
        m = _LABEL.match(row.strip())
        if m:
            labels[m.group(1)] = i
            continue
        if _BRANCH.search(row):
            code = row.partition("//")[0]
            targets = {t for t in re.findall(r"\b([A-Za-z_][\w.$]*)\b", code) if t in labels}
            loops += [(labels[t], i) for t in targets]
    return loops


_PRIVATE = re.compile(r"(?<![\w])ss\[a0")
"""A private-memory message on Xe2: an LSC access through the scratch surface (`ss[a0.0]`) that
is neither a spill nor a fill.  Xe-LP's are legacy sends whose comment says `scratch block`.
Xe-HPG's go through a bindless surface (`bss[a0.0]`), as its global buffers do: they cannot be
told apart in the ISA, so they are not counted (docs/how-it-works.md#cost)."""


def _private_access(row: str, loops: list[tuple[int, int]], i: int) -> list[ScratchAccess]:
    """The private-memory access row `i` makes, as a one-item list (none: it makes none)."""
    code, _, comment = row.partition("//")
    if (_PRIVATE.search(code) and ("load" in code or "store" in code)) or "scratch block" in comment:
        return [ScratchAccess("private", _message_bytes(code, comment), _innermost(loops, i))]
    return []


def _innermost(loops: list[tuple[int, int]], row: int) -> int | None:
    inside = [k for k, (first, last) in enumerate(loops) if first <= row <= last]
    return min(inside, key=lambda k: loops[k][1] - loops[k][0]) if inside else None


def _message_bytes(instruction: str, comment: str) -> int:
    """Bytes a spill or fill message moves: hword (32 B) / oword (16 B) blocks x N on Xe-HPG and
    earlier; on Xe2 the LSC data size x count (x lanes unless transposed).  0 when unsaid."""
    size = _MESSAGE_SIZE.search(comment)
    if size:
        return WORD_BYTES[size.group(1)] * int(size.group(2))
    lsc = _LSC_SIZE.search(instruction)
    lanes = EXEC_SIZE.search(instruction)
    if lsc:
        per = int(lsc.group(1)) // 8 * int(lsc.group(2))
        return per if lsc.group(3) or lanes is None else per * int(lanes.group(1))
    one = _LSC_ONE.search(instruction)  # Xe-HPG and Xe2 private accesses: one d32 per lane
    if one and lanes is not None:
        return int(one.group(1)) // 8 * int(lanes.group(1))
    return 0


def read_dump(text: str, file: str = "", *, pressure: bool = True) -> KernelIsa:
    """One kernel's dump.  `pressure=False` skips the register-pressure pass (inputs.liveness),
    most of the reading's time, for a caller that needs only the scratch traffic (its cost):
    the lines then have no pressure and the listing is empty."""
    rows = text.splitlines()
    header: dict[str, str] = {}
    for row in rows[:40]:
        for key, pattern in _HEADER.items():
            m = pattern.match(row)
            if m:
                header[key] = m.group(1)
    grf_bytes = grf_bytes_for(header.get("platform"))
    simd = _SIMD.search(file)
    loops = _loops(rows)
    per_line: dict[tuple[str | None, int] | str, LineFigures] = {}
    current: LineFigures | None = None
    source: str | None = None
    label = "entry"
    block: str | None = None
    successors: dict[str, list[str]] = {}
    spilled: list[SpilledVariable] = []
    moved: list[tuple[LineFigures, int, int]] = []  # line, scratch offset, bytes
    accesses: list[ScratchAccess] = []
    instructions: list[Instruction] = []
    owners: list[LineFigures] = []
    has_lines = False
    for i, row in enumerate(rows):
        stripped = row.strip()
        if not stripped:
            continue
        m = _LABEL.match(stripped)
        if m:
            label = m.group(1)
            continue
        b = block_header(stripped)
        if b:
            block, successors[b[0]] = b
            continue
        m = _FILE.match(stripped)
        if m:
            source = m.group(1)
            continue
        m = _LINE.match(row)
        if m:
            has_lines = True
            number = int(m.group(1))
            current = per_line.setdefault((source, number), LineFigures(number, m.group(2).strip(), source))
            continue
        d = _SPILLED.match(row)
        if d:
            slot = int(d.group(3))
            spilled.append(SpilledVariable(d.group(1), int(d.group(2)), slot * int(d.group(4)) if slot < NO_SLOT else None))
            continue
        if stripped.startswith("//"):
            continue
        figures = current if current is not None else per_line.setdefault(
            f"block {label}", LineFigures(None, f"block {label}", block=label))
        instructions.append(Instruction(stripped, block))
        owners.append(figures)
        comment = row.partition("//")[2]
        kind = message_kind(comment)
        if kind is None:
            accesses += _private_access(row, loops, i)
            continue
        spill, fill = kind == "spill", kind == "fill"
        moved_bytes = _message_bytes(row.partition("//")[0], comment)
        accesses.append(ScratchAccess(kind, moved_bytes, _innermost(loops, i)))
        figures.spills += spill
        figures.fills += fill
        figures.bytes_moved += moved_bytes
        figures.depth = max(figures.depth, sum(1 for first, last in loops if first <= i <= last))
        o = _OFFSET.search(comment)
        if o:
            unit = int(o.group(2))
            moved.append((figures, int(o.group(1)) * unit, max(unit, moved_bytes)))
    live = live_registers(instructions, successors, grf_bytes) if pressure else []
    for figures, count in zip(owners, live):
        figures.pressure = max(figures.pressure or 0, count)
    # Scratch is moved in whole GRFs: index the messages by the GRF-sized slots they cover.
    unit = min((int(o) for o in _OFFSET_UNITS.findall(text)), default=32)
    by_slot: dict[int, dict[int, LineFigures]] = {}
    for figures, at, n in moved:
        for slot in range(at // unit, (at + n - 1) // unit + 1):
            by_slot.setdefault(slot, {})[id(figures)] = figures
    for variable in spilled:
        if variable.offset is not None:
            touched: dict[int, LineFigures] = {}
            for slot in range(variable.offset // unit, (variable.offset + variable.bytes - 1) // unit + 1):
                touched.update(by_slot.get(slot, {}))
            variable.lines = sorted(touched.values(), key=_order)
    # Lines without instructions of their own keep pressure None; blocks without messages are
    # shown only where the module has no line information.
    kept = [x for x in per_line.values() if x.line is not None or x.spills or x.fills or not has_lines]
    return KernelIsa(kernel=header.get("kernel", "?"), simd=int(simd.group(1)) if simd else None,
                     grf=int(header["grf"]) if "grf" in header else None,
                     instructions=int(header["instructions"]) if "instructions" in header else None,
                     spill_size=int(header["spill_size"]) if "spill_size" in header else None,
                     spill_refs=int(header["spill_refs"]) if "spill_refs" in header else None,
                     has_lines=has_lines, lines=sorted(kept, key=lambda x: (-x.weight, _order(x))),
                     spilled_variables=spilled, platform=header.get("platform"),
                     listing=[IsaInstruction(i.text, f, n) for i, f, n in zip(instructions, owners, live)],
                     loops=loops, accesses=accesses)


def _order(x: LineFigures) -> tuple:
    return (x.line is None, x.file or "", x.line or 0, x.text)


_DECODED = re.compile(r"\b(load|store)\.ugm\.[^\s;]*\bss\[a0|\bscratch block (read|write)\b")
"""A scratch message in IGA's disassembly (`ocloc disasm`), from its send descriptor decoded in
the comment: an LSC load or store through the scratch surface (`ss[a0.2]`: Xe2 and later), or a
legacy `hword scratch block read/write xN` (Xe-LP to Xe-HPC)."""


def read_disasm(text: str, kernel: str) -> KernelIsa:
    """One kernel's scratch traffic from IGA's disassembly of a native zebin (toolchain.disasm).

    A shipped binary carries no IGC dump: its code says where scratch is read and written, not
    whether a message is a spill, a fill or a private-memory access, so the messages are
    counted as `write` and `read`.  What counts as a scratch message is what the dump reader
    counts (Xe-HPG's private accesses go through a bindless surface, as global buffers do, and
    are counted by neither); the loops are read as in a dump (a branch back to a label above)."""
    rows = text.splitlines()
    loops = _loops(rows)
    accesses = []
    for i, row in enumerate(rows):
        code, _, comment = row.partition("//")
        decoded = comment.rpartition(";")[2].strip()
        m = _DECODED.search(decoded)
        if m is None:
            continue
        lanes = EXEC_SIZE.search(code)
        message = f"{decoded} ({lanes.group(1)}|M0)" if lanes else decoded
        kind = "write" if (m.group(1) or m.group(2)) in ("store", "write") else "read"
        accesses.append(ScratchAccess(kind, _message_bytes(message, decoded), _innermost(loops, i)))
    return KernelIsa(kernel=kernel, simd=None, grf=None, instructions=None, spill_size=None, spill_refs=None,
                     has_lines=False, loops=loops, accesses=accesses)
