"""Reading Triton's TTGIR text: the one type parser, and what the kernel's loops carry.

The staging pass (triton.build.staging), the loop analysis below and the reference evaluator of
the tests (tests/support/ttgir_eval.py) all read types through `parse_type`: a ranked
tensor (`tensor<64x32xf16, #blocked>`, `tensor<64x32x!tt.ptr<f16>, #blocked>`), a shared
memory descriptor (`!ttg.memdesc<64x16xf16, #shared, #smem>`) or a scalar (`f32`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SSA = r"%[\w$.-]+"
ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
              "f8E5M2": 1, "f8E4M3FN": 1}
POINTER_BYTES = 8

_SHAPED_INNER = re.compile(r"^(?P<dims>(?:\d+x)*)(?P<elem>!tt\.ptr<[^<>]*>|[\w.]+)(?:,\s*(?P<enc>.*))?$", re.S)


@dataclass(frozen=True)
class TtgirType:
    """A TTGIR type: `dims` empty for a scalar; `encoding` the text after the element type."""

    dims: tuple[int, ...]
    elem: str
    encoding: str | None = None
    memdesc: bool = False

    @property
    def is_pointer(self) -> bool:
        return self.elem.startswith("!tt.ptr")

    @property
    def elements(self) -> int:
        count = 1
        for d in self.dims:
            count *= d
        return count

    @property
    def elem_bytes(self) -> int:
        return POINTER_BYTES if self.is_pointer else ELEM_BYTES.get(self.elem, 4)


def parse_type(text: str) -> TtgirType:
    """The type spelled by `text` (a scalar when it is not a shaped type)."""
    text = text.strip()
    kind = next((k for k in ("tensor<", "!ttg.memdesc<") if text.startswith(k)), None)
    end = _closing(text, len(kind) - 1) if kind else None
    m = _SHAPED_INNER.match(text[len(kind):end]) if kind and end is not None else None
    if m is None:
        return TtgirType((), text)
    return TtgirType(tuple(int(d) for d in m["dims"].split("x") if d), m["elem"], m["enc"],
                     memdesc=kind != "tensor<")


def _closing(text: str, opening: int) -> int | None:
    """The index of the `>` that closes the `<` at `opening` (the text after it is not read)."""
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth == 0:
                return i
    return None


def parse_tensor(text: str) -> tuple[list[int], str, str | None]:
    """(dims, element, encoding) of a ranked tensor type; ValueError for anything else."""
    t = parse_type(text)
    if not t.dims or t.memdesc:
        raise ValueError(f"not a tensor type: {text[:80]}")
    return list(t.dims), t.elem, t.encoding


def split_top(text: str) -> list[str]:
    """Split at top-level commas (not inside <>, {}, [] or ())."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


_LOOP_RESULTS = re.compile(r"= scf\.for .*? -> \((?P<types>.*)\)\s*(?::\s*\w+)?\s*\{")


def loop_carried(ttgir: str, lanes: int) -> dict | None:
    """Bytes per lane that the kernel's loops carry from one iteration to the next, split into
    pointer tensors and data: a K loop that carries tensors of pointers (`a_ptrs += ...`) holds
    8 bytes per element, four times an f16 tile.  None when no loop carries a tensor."""
    pointers = data = 0
    for m in _LOOP_RESULTS.finditer(ttgir):
        for part in split_top(m.group("types")):
            t = parse_type(part)
            if not t.dims or t.memdesc:
                continue
            size = t.elements * t.elem_bytes // max(1, lanes)
            pointers, data = (pointers + size, data) if t.is_pointer else (pointers, data + size)
    return None if not pointers and not data else {"pointer_bytes_per_lane": pointers, "data_bytes_per_lane": data}


def pointer_note(carried: dict | None) -> str | None:
    """Said where pointer tensors are a large share of what a loop carries (a spill's likely seat)."""
    if not carried or carried["pointer_bytes_per_lane"] < carried["data_bytes_per_lane"] / 2:
        return None
    return (f"the kernel's loops carry {carried['pointer_bytes_per_lane']} bytes per lane of pointer tensors beside "
            f"{carried['data_bytes_per_lane']} of data: block pointers or tensor descriptors (tl.make_block_ptr, "
            "tl.make_tensor_descriptor) would carry a few scalars instead (a rewrite of the source, not one of "
            "zeinspect's levers)")
