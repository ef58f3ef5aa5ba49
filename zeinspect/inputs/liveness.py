"""Live registers before each instruction of IGC's final ISA: register pressure per line.

What AMD's analyzer shows for its ISA, computed here for Intel's: a backward liveness pass
over the GRF operands of the allocated ISA and the control flow IGC prints with it.

- Granularity is the dword: an instruction that writes r48.1:ud ends the life of that dword
  only, so scalars packed into one register do not keep each other alive.  A GRF counts as
  live when any of its dwords is.  Sets are Python integers used as bit sets.
- An operand's bytes follow from its region and type (`r12.0<8;8,1>:f` over the execution
  size), from an explicit length (`r22:8` on LSC messages), or, for Xe-HPG's `send`, from
  the message lengths IGC comments (`wr:1h+2, rd:4`).  `dpas.DxR` operands follow the
  systolic shapes.  Indirect operands (`r[a0.0]`) cannot be resolved and are left out.
- A predicated write, or one to part of a dword, does not end a life (it may not happen).
- Control flow: IGC's block comments (`// B004: Preds:{...}, Succs:{B005, B004}`); without
  them the listing is one straight block.
The figure for an instruction is the GRFs live before it plus those it writes, i.e. the
registers occupied while it executes.  It is an analysis of the binary as allocated: on a
kernel that spills it is at most the register file, and the spill messages show the rest.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

EXEC_SIZE = re.compile(r"\((\d+)\|M\d+\)")
"""An instruction's execution size: `(16|M0)`."""
_REG = re.compile(r"(?<![\w.])r(\d+)(?:\.(\d+))?(?:<([\d;,]+)>)?(?::(\w+))?")
_MESSAGE_LENGTHS = re.compile(r"wr:(\d+)h?\+(\d+), rd:(\d+)")
_DPAS = re.compile(r"^dpas\w*\.(\d+)x(\d+)")
_BLOCK = re.compile(r"^// (B\d+):.*Succs:\{([^}]*)\}")
TYPE_BYTES = {"b": 1, "ub": 1, "bf8": 1, "hf8": 1, "w": 2, "uw": 2, "hf": 2, "bf": 2, "d": 4, "ud": 4, "f": 4,
              "tf32": 4, "q": 8, "uq": 8, "df": 8}
# Instructions without a destination register (their operands are labels, flags or none).
_NO_DESTINATION = {"goto", "join", "jmpi", "while", "if", "else", "endif", "brc", "brd", "call", "calla", "ret",
                   "halt", "break", "cont", "nop", "illegal", "wait", "sync"}


@dataclass(frozen=True)
class Instruction:
    text: str
    """The instruction as IGC printed it, comment included."""
    block: str | None
    """IGC's basic block (`B004`), None when the dump prints none."""


@dataclass
class _Effect:
    uses: int = 0
    defines: int = 0
    kills: int = 0


def grf_bytes_for(platform: str | None) -> int:
    """Xe-HPC, Xe2 and later have 64-byte GRFs; Xe-LP and Xe-HPG 32-byte ones."""
    p = (platform or "").upper()
    return 64 if p.startswith(("XE2", "XE3", "PVC", "XE_HPC", "XEHPC")) else 32


@functools.lru_cache(maxsize=65536)
def _operand_dwords(number: int, sub: int, region: str | None, type_: str | None, lanes: int,
                    grf: int) -> tuple[int, bool]:
    """(bit set of the dwords an operand touches, whether it covers each of them whole).
    Bit = GRF number x dwords per GRF + dword."""
    size = TYPE_BYTES.get(type_ or "", 4)
    if region is None:
        positions: range | list[int] = range(lanes)
    else:
        parts = [int(x) for x in re.split("[;,]", region)]
        if len(parts) == 3:  # <vertical; width, horizontal>
            v, w, h = parts
            w = max(w, 1)
            positions = [(i // w) * v + (i % w) * h for i in range(lanes)]
        elif len(parts) == 2:  # three-source <vertical; horizontal>: width 1 when horizontal is 0
            v, h = parts
            positions = [i * (h or v) for i in range(lanes)]
        else:  # destination <horizontal>
            positions = [i * parts[0] for i in range(lanes)]
    base = number * grf + sub * size
    covered = {base + p * size + b for p in set(positions) for b in range(size)}
    dwords = {x // 4 for x in covered}
    whole = all(4 * d + b in covered for d in dwords for b in range(4))
    mask = 0
    for d in dwords:
        mask |= 1 << d
    return mask, whole


def _span(number: int, registers: int, grf: int) -> int:
    dwords = grf // 4
    return ((1 << (registers * dwords)) - 1) << (number * dwords)


def _operand(token: str) -> str | None:
    """An operand token without its source modifier (`(abs)r12...` -> `r12...`); None for SWSB
    tokens (`{A@1,$3}`) and condition modifiers (`(gt)f1.0`), which name no GRF."""
    if token.startswith("{"):
        return None
    if token.startswith("("):
        token = token.partition(")")[2]
        if re.match(r"f\d", token):
            return None
    return token or None


def _dpas_bytes(index: int, depth: int, repeat: int, lanes: int, type_: str | None) -> int:
    """Bytes of a `dpas.DxR` operand: destination and accumulator (0, 1) hold R rows of the
    execution width, B (2) D dwords per lane, A (3) R rows of D dwords."""
    if index in (0, 1):
        return repeat * lanes * TYPE_BYTES.get(type_ or "", 4)
    if index == 2:
        return depth * lanes * 4
    return repeat * depth * 4


def effect(text: str, grf: int) -> _Effect:
    """The registers one instruction reads, writes and (wholly, unconditionally) overwrites."""
    code, _, comment = text.partition("//")
    code = code.strip()
    predicated = False
    if code.startswith("("):
        guard, _, code = code.partition(")")
        predicated = "f" in guard
        code = code.strip()
    opcode, _, rest = code.partition(" ")
    family = opcode.split(".")[0]
    out = _Effect()
    if family in _NO_DESTINATION:
        return out
    m = EXEC_SIZE.search(rest)
    lanes = int(m.group(1)) if m else 1
    rest = rest[m.end():] if m else rest
    tokens = [t for t in (_operand(t) for t in rest.split()) if t]
    lengths = _MESSAGE_LENGTHS.search(comment)
    send_lengths = [int(lengths.group(3)), int(lengths.group(1)), int(lengths.group(2))] if lengths else None
    dpas = _DPAS.match(opcode)
    for index, token in enumerate(tokens):
        is_destination = index == 0 and "[" not in token
        for reg in _REG.finditer(token):
            number, sub, region, type_ = int(reg.group(1)), int(reg.group(2) or 0), reg.group(3), reg.group(4)
            if type_ and type_.isdigit():  # r22:8 - eight whole registers
                mask = _span(number, int(type_), grf)
                whole = True
            elif dpas and region is None:
                size = _dpas_bytes(index, int(dpas.group(1)), int(dpas.group(2)), lanes, type_)
                mask = _span(number, -(-size // grf), grf)
                whole = True
            elif send_lengths is not None and region is None and type_ is None and index < 3:
                count = send_lengths[index]
                mask = _span(number, count, grf) if count else 0
                whole = True
            else:
                mask, whole = _operand_dwords(number, sub, region, type_, lanes, grf)
            if is_destination:
                out.defines |= mask
                if whole and not predicated:
                    out.kills |= mask
            else:
                out.uses |= mask
    return out


def live_registers(instructions: list[Instruction], successors: dict[str, list[str]], grf: int) -> list[int]:
    """For each instruction, how many GRFs are occupied while it executes (live before it, or
    written by it).  `successors`: IGC's block -> the blocks that may follow it."""
    effects = [effect(i.text, grf) for i in instructions]
    blocks: list[tuple[str | None, list[int]]] = []
    for index, instruction in enumerate(instructions):
        if not blocks or blocks[-1][0] != instruction.block:
            blocks.append((instruction.block, []))
        blocks[-1][1].append(index)
    following = _successors(blocks, successors)
    gen: list[int] = []
    kill: list[int] = []
    for _, members in blocks:
        g = k = 0
        for index in reversed(members):
            e = effects[index]
            g = (g & ~e.kills) | e.uses
            k |= e.kills
        gen.append(g)
        kill.append(k)
    live_in = [0] * len(blocks)
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(blocks))):
            out = 0
            for s in following[b]:
                out |= live_in[s]
            new = gen[b] | (out & ~kill[b])
            if new != live_in[b]:
                live_in[b] = new
                changed = True
    counts = [0] * len(instructions)
    dwords = grf // 4
    for b, (_, members) in enumerate(blocks):
        live = 0
        for s in following[b]:
            live |= live_in[s]
        for index in reversed(members):
            e = effects[index]
            counts[index] = _registers_in(live | e.defines | e.uses, dwords)
            live = (live & ~e.kills) | e.uses
    return counts


def _successors(blocks: list[tuple[str | None, list[int]]], named: dict[str, list[str]]) -> list[list[int]]:
    """Block successors from IGC's block comments; a straight line for blocks it names none for."""
    position = {name: i for i, (name, _) in enumerate(blocks) if name is not None}

    def reach(name: str, seen: set[str]) -> list[int]:
        # A block with no instruction (only a label) passes control on to its own successors.
        if name in position:
            return [position[name]]
        if name in seen:
            return []
        seen.add(name)
        return [p for s in named.get(name, []) for p in reach(s, seen)]

    out = []
    for i, (name, _) in enumerate(blocks):
        if name is not None and name in named:
            out.append(sorted({p for s in named[name] for p in reach(s, set())}))
        else:
            out.append([i + 1] if i + 1 < len(blocks) else [])
    return out


def block_header(row: str) -> tuple[str, list[str]] | None:
    """(`B004`, [`B005`, `B004`]) from IGC's `// B004: ... Succs:{B005, B004}`, or None."""
    m = _BLOCK.match(row)
    if not m:
        return None
    return m.group(1), [s.strip() for s in m.group(2).split(",") if s.strip()]


@functools.lru_cache(maxsize=4)
def _grf_bits(dwords: int) -> int:
    return sum(1 << (g * dwords) for g in range(512))


def _registers_in(mask: int, dwords: int) -> int:
    """How many GRFs have at least one dword in the set: fold each GRF's dwords onto its first."""
    shift = 1
    while shift < dwords:
        mask |= mask >> shift
        shift *= 2
    return (mask & _grf_bits(dwords)).bit_count()
