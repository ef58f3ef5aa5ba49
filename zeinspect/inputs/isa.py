"""Read IGC's final ISA dumps (toolchain.shader_dump): where a kernel spills, line by line.

What a dump gives, on both compiler generations:
  - a header: `//.kernel NAME`, `//.thread_config numGRF=N`, `//.instCount N`,
    `//.spill size N` (bytes), `//.spill GRF est. ref count N`;
  - declarations: `//.declare NAME (id) rf=r size=N ... (spilled -> Scratch[...])` for each
    spilled virtual register;
  - `// Line N:  <source text>` before the instructions of a source line (with -g / OpLine);
  - spill and fill messages annotated in the instruction's comment: `scratch space spill` /
    `scratch space fill` (Xe-HPG and earlier), `spill to offset[...]` / `fill from offset[...]`
    (Xe2);
  - labels (`_0_007:`) and branches (`goto`, `jmpi`, `while`, with label operands).
Loop depth is read from the control flow: a branch back to a label above it closes a loop
over the instructions between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LINE = re.compile(r"^// Line (\d+):\s?(.*)$")
_LABEL = re.compile(r"^([A-Za-z_][\w.$]*):\s*(?://.*)?$")
_BRANCH = re.compile(r"\b(goto|jmpi|while|brc|brd)\b[^/]*?\s([A-Za-z_][\w.$]*)\s")
_SPILLED = re.compile(r"^//\.declare (\S+) \(\d+\)\s+rf=r size=(\d+).*\(spilled -> ([^)]*)\)")
_MESSAGE_SIZE = re.compile(r"\b(hword|oword)\b[^/]*? x(\d+)")
_LSC_SIZE = re.compile(r"\.d(\d+)(?:u\d+)?x(\d+)(t?)\.")  # Xe2: load/store.ugm.d32x64t: 32-bit x 64, transposed
_LANES = re.compile(r"\((\d+)\|M\d+\)")
_HEADER = {"kernel": re.compile(r"^//\.kernel (\S+)"), "grf": re.compile(r"^//\.thread_config numGRF=(\d+)"),
           "instructions": re.compile(r"^//\.instCount (\d+)"), "spill_size": re.compile(r"^//\.spill size (\d+)"),
           "spill_refs": re.compile(r"^//\.spill GRF est\. ref count (\d+)")}
_SIMD = re.compile(r"_simd(\d+)_")
WORD_BYTES = {"hword": 32, "oword": 16}


@dataclass
class LineFigures:
    line: int | None
    """None: instructions before any line comment (or a module without line information)."""
    text: str = ""
    block: str | None = None
    """For messages with no line: the ISA block (the label above them, `entry` before any)."""
    spills: int = 0
    fills: int = 0
    bytes_moved: int = 0
    """Bytes the spill and fill messages move, where their descriptors say (hword/oword x N)."""
    depth: int = 0
    """How many loops enclose the line's deepest spill or fill (0: none)."""

    @property
    def weight(self) -> int:
        """Messages x 8^depth: a heuristic for ranking lines, not a measured cost."""
        return (self.spills + self.fills) * 8 ** self.depth


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
    spilled_variables: list[tuple[str, int]] = field(default_factory=list)
    """(vISA name, bytes) of each spilled virtual register."""

    @property
    def spills(self) -> int:
        return sum(x.spills for x in self.lines)

    @property
    def fills(self) -> int:
        return sum(x.fills for x in self.lines)


def _loops(rows: list[str]) -> list[tuple[int, int]]:
    """(first, last) row of each loop: a label and a later branch back to it."""
    labels: dict[str, int] = {}
    loops = []
    for i, row in enumerate(rows):
        m = _LABEL.match(row.strip())
        if m:
            labels[m.group(1)] = i
            continue
        b = _BRANCH.search(row)
        if b and b.group(2) in labels:
            loops.append((labels[b.group(2)], i))
    return loops


def _message_bytes(instruction: str, comment: str) -> int:
    """Bytes a spill or fill message moves: hword (32 B) / oword (16 B) blocks x N on Xe-HPG and
    earlier; on Xe2 the LSC data size x count (x lanes unless transposed).  0 when unsaid."""
    size = _MESSAGE_SIZE.search(comment)
    if size:
        return WORD_BYTES[size.group(1)] * int(size.group(2))
    lsc = _LSC_SIZE.search(instruction)
    if lsc:
        lanes = _LANES.search(instruction)
        per = int(lsc.group(1)) // 8 * int(lsc.group(2))
        return per if lsc.group(3) or lanes is None else per * int(lanes.group(1))
    return 0


def read_dump(text: str, file: str = "") -> KernelIsa:
    rows = text.splitlines()
    header: dict[str, str] = {}
    for row in rows[:40]:
        for key, pattern in _HEADER.items():
            m = pattern.match(row)
            if m:
                header[key] = m.group(1)
    simd = _SIMD.search(file)
    loops = _loops(rows)
    per_line: dict[int | str, LineFigures] = {}
    current: LineFigures | None = None
    block = "entry"
    spilled = []
    has_lines = False
    for i, row in enumerate(rows):
        label = _LABEL.match(row.strip())
        if label:
            block = label.group(1)
            continue
        m = _LINE.match(row)
        if m:
            has_lines = True
            number = int(m.group(1))
            current = per_line.setdefault(number, LineFigures(number, m.group(2).strip()))
            continue
        d = _SPILLED.match(row)
        if d:
            spilled.append((d.group(1), int(d.group(2))))
            continue
        comment = row.partition("//")[2]
        spill = "scratch space spill" in comment or "spill to offset" in comment
        fill = "scratch space fill" in comment or "fill from offset" in comment
        if not (spill or fill):
            continue
        figures = current if current is not None else per_line.setdefault(
            f"block {block}", LineFigures(None, f"block {block}", block))
        figures.spills += spill
        figures.fills += fill
        figures.bytes_moved += _message_bytes(row.partition("//")[0], comment)
        figures.depth = max(figures.depth, sum(1 for first, last in loops if first <= i <= last))
    return KernelIsa(kernel=header.get("kernel", "?"), simd=int(simd.group(1)) if simd else None,
                     grf=int(header["grf"]) if "grf" in header else None,
                     instructions=int(header["instructions"]) if "instructions" in header else None,
                     spill_size=int(header["spill_size"]) if "spill_size" in header else None,
                     spill_refs=int(header["spill_refs"]) if "spill_refs" in header else None,
                     has_lines=has_lines, lines=sorted(per_line.values(), key=lambda x: -x.weight),
                     spilled_variables=spilled)
