"""The SLM staging pass for large FMA dots: a TTGIR-to-TTGIR rewrite (seed 000).

On targets without DPAS, Triton lowers `tt.dot` to a fully unrolled FMA nest whose
operands (converted to f32 and staged through SLM by Triton itself) stay live in
registers: a 64x128x128 f16 dot needs ~325 KB of spill per thread on arl-s and does not
build.  The pass stages both operands in SLM in their native dtype and loops over K in
K_TILE slices, so only one slice of each operand is live at a time.

It fires only when all four gates pass; otherwise the module is returned unchanged, byte
for byte, with the gate that declined:
  1. no DPAS path: the target has no DPAS and the dot's layout is the FMA (blocked) one;
  2. register pressure: the estimated per-lane bytes of A, B and C exceed the budget
     (4096 bytes, the threshold Intel's own pass uses);
  3. K tiles: K_TILE, the largest power of two whose A slice fits the per-iteration register
     budget (1024 bytes per lane), at least 16, below K and dividing K;
  4. SLM: both staged operands fit the target's SLM minus what the kernel uses besides the
     copies the pass replaces.

The rewrite works on the text of exactly the ops it touches (tt.dot, the local_load /
local_alloc / cast chain feeding it) and leaves everything else as printed; Triton's own
MLIR parser and verifier then check the result.  Two forms: an `scf.for` over K tiles
(subviews, local loads, a small tt.dot, the accumulator carried) or an unrolled chain of
tiles; `FORM` is the one the measurements in docs/guides/triton.md favour.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from ..model.ttgir import ELEM_BYTES, SSA, parse_tensor, split_top

REGISTER_BUDGET_BYTES = 4096
SLICE_BUDGET_BYTES = 1024
MIN_K_TILE = 8
FORM = "loop"
_SSA = SSA
_DEF = re.compile(rf"^(?P<indent>\s*)(?P<res>{_SSA}) = (?P<op>[\w.]+) (?P<rest>.*)$")
_ALIAS = re.compile(r"^(?P<name>#[\w.]+) = (?P<value>.*)$")


@dataclass
class DotDecision:
    result: str
    applied: bool
    gate: int | None = None
    reason: str = ""
    k_tile: int | None = None
    slm_bytes: int | None = None
    m: int | None = None
    n: int | None = None
    k: int | None = None

    def describe(self) -> str:
        if self.applied:
            return (f"{self.result}: staged {self.m}x{self.n}x{self.k} in SLM ({self.slm_bytes} bytes), "
                    f"K_TILE {self.k_tile}")
        return f"{self.result}: declined by gate {self.gate}: {self.reason}"


@dataclass
class StagingResult:
    ttgir: str
    changed: bool
    dots: list[DotDecision] = field(default_factory=list)
    form: str = FORM

    def describe(self) -> str:
        if not self.dots:
            return "no tt.dot in the module"
        return "; ".join(d.describe() for d in self.dots)


def _strip_loc(rest: str) -> tuple[str, str]:
    idx = rest.rfind(" loc(")
    return (rest[:idx], rest[idx:]) if idx >= 0 and rest.endswith(")") else (rest, "")


def _blocked(definition: str) -> dict | None:
    if not definition.startswith("#ttg.blocked<"):
        return None
    fields = {}
    for key in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"):
        m = re.search(rf"{key} = \[([\d, ]+)\]", definition)
        if not m:
            return None
        fields[key] = [int(x) for x in m.group(1).split(",")]
    return fields


class Module:
    """Just enough of a printed TTGIR module to find and rewrite dots."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.aliases = {}
        self.defs = {}
        for i, line in enumerate(self.lines):
            a = _ALIAS.match(line)
            if a:
                self.aliases[a["name"]] = a["value"]
                continue
            d = _DEF.match(line)
            if d:
                self.defs[d["res"]] = i

    def op(self, name: str) -> tuple[int, str, str] | None:
        i = self.defs.get(name)
        if i is None:
            return None
        m = _DEF.match(self.lines[i])
        assert m is not None  # the line was found by matching _DEF
        body, _ = _strip_loc(m["rest"])
        return i, m["op"], body

    def uses(self, name: str) -> list[int]:
        pattern = re.compile(re.escape(name) + r"(?![\w$.-])")
        out = []
        for i, line in enumerate(self.lines):
            if i == self.defs.get(name):
                continue
            code, _ = _strip_loc(line)
            if pattern.search(code):
                out.append(i)
        return out


@dataclass
class _Operand:
    load_line: int
    alloc_line: int
    cast_line: int | None
    native: str
    native_type: str
    native_elem: str
    layout: str
    shared: str
    smem: str
    cast_op: str | None
    dot_type: str
    dot_elem: str
    dims: list[int]


def _trace(mod: Module, value: str) -> _Operand | str:
    """Follow a dot operand back through local_load / local_alloc / cast to its native tensor."""
    load = mod.op(value)
    if load is None or load[1] != "ttg.local_load":
        return "operand does not come from a ttg.local_load"
    load_line, _, body = load
    m = re.match(rf"({_SSA}) : (.*) -> (tensor<.*>)$", body)
    if not m:
        return "unexpected ttg.local_load form"
    mem, dot_type = m.group(1), m.group(3)
    alloc = mod.op(mem)
    if alloc is None or alloc[1] != "ttg.local_alloc":
        return "operand memory does not come from a ttg.local_alloc"
    alloc_line, _, body = alloc
    m = re.match(rf"({_SSA}) : \((tensor<.*>)\) -> !ttg\.memdesc<(.*)>$", body)
    if not m:
        return "unexpected ttg.local_alloc form"
    src, src_type, memdesc = m.group(1), m.group(2), m.group(3)
    parts = split_top(memdesc)
    if len(parts) < 3:
        return "unexpected memory descriptor"
    shared, smem = parts[1], parts[2]
    dims, dot_elem, _ = parse_tensor(dot_type)
    cast_line, cast_op, native, native_type = None, None, src, src_type
    cast = mod.op(src)
    if cast is not None and cast[1] in ("tt.fp_to_fp", "arith.extf"):
        m = re.match(rf"({_SSA})(?: \{{[^}}]*\}})? : (tensor<.*>) (?:->|to) (tensor<.*>)$", cast[2])
        if m:
            cast_line, cast_op, native, native_type = cast[0], cast[1], m.group(1), m.group(2)
    _, native_elem, layout = parse_tensor(native_type)
    return _Operand(load_line, alloc_line, cast_line, native, native_type, native_elem, layout or "", shared, smem,
                    cast_op, dot_type, dot_elem, dims)


def _bit_floor(x: float) -> int:
    return 1 << int(math.floor(math.log2(x))) if x >= 1 else 0


def stage(ttgir: str, caps: dict, *, slm_total: int, shared_in_use: int, form: str = FORM) -> StagingResult:
    """Rewrite every dot that passes the four gates; return the text unchanged otherwise."""
    mod = Module(ttgir)
    result = StagingResult(ttgir=ttgir, changed=False, form=form)
    plans: list[_Plan] = []
    for line_no, line in enumerate(mod.lines):
        d = _DEF.match(line)
        if not d or d["op"] != "tt.dot":
            continue
        decision = _judge(mod, line_no, d, caps, slm_total, shared_in_use)
        result.dots.append(decision[0])
        if isinstance(decision, _Plan):
            plans.append(decision)
    if not plans:
        return result
    lines = list(mod.lines)
    doomed: set[int] = set()
    for n, plan in enumerate(plans):
        line_no = plan.line_no
        for op in (plan.a, plan.b):
            for ln in (op.load_line, op.alloc_line, op.cast_line):
                if ln is not None:
                    doomed.add(ln)
        defined = _DEF.match(lines[line_no])
        assert defined is not None  # the dot's own line
        indent = defined["indent"]
        lines[line_no] = "\n".join(_emit(plan, n, indent, form))
    text = "\n".join(line for i, line in enumerate(lines) if i not in doomed)
    result.ttgir, result.changed = text, True
    return result


def _per_lane(blocked: dict, m_dim: int, n_dim: int, k_dim: int, elem: int, c_elem: int) -> tuple[int, int]:
    """(bytes of A, B and C each lane holds, rows of A each lane holds) for the blocked layout."""
    spt, tpw, wpc = blocked["sizePerThread"], blocked["threadsPerWarp"], blocked["warpsPerCTA"]
    a_rows = max(1, math.ceil(m_dim / (spt[0] * tpw[0] * wpc[0]))) * spt[0]
    b_cols = max(1, math.ceil(n_dim / (spt[1] * tpw[1] * wpc[1]))) * spt[1]
    return (a_rows * k_dim + b_cols * k_dim) * elem + a_rows * b_cols * c_elem, a_rows


def _k_tile(k_dim: int, a_row_bytes: int) -> int:
    """The largest power of two whose A slice fits SLICE_BUDGET_BYTES per lane and that is below
    K and divides it; under MIN_K_TILE when there is none."""
    k_tile = _bit_floor(SLICE_BUDGET_BYTES / a_row_bytes)
    while k_tile >= MIN_K_TILE and not (k_tile < k_dim and k_dim % k_tile == 0):
        k_tile //= 2
    return k_tile


def _judge(mod: Module, line_no: int, d: re.Match, caps: dict, slm_total: int, shared_in_use: int
           ) -> tuple[DotDecision] | _Plan:
    """The dot's decision, alone where a gate declines it, or with what its rewrite needs."""
    res = d["res"]
    body, loc = _strip_loc(d["rest"])
    decision = DotDecision(result=res, applied=False)
    try:
        operands, types = body.split(" : ", 1)
        a_name, b_name, acc_name, *attr_parts = split_top(operands)
        ab, c_type = types.split(" -> ")
        a_type, b_type = [t.strip() for t in ab.split(" * ")]
        (m_dim, k_dim), _, a_enc = parse_tensor(a_type)
        (_, n_dim), _, _ = parse_tensor(b_type)
        _, c_elem, c_enc = parse_tensor(c_type)
    except (ValueError, TypeError):
        decision.gate, decision.reason = 1, "unexpected tt.dot form"
        return (decision,)
    decision.m, decision.n, decision.k = m_dim, n_dim, k_dim
    # Gate 1: the FMA path only.
    parent = mod.aliases.get(c_enc or "", "")
    blocked = _blocked(parent)
    if caps.get("has_subgroup_matrix_multiply_accumulate"):
        decision.gate, decision.reason = 1, "the target has DPAS: the dot takes the DPAS path"
        return (decision,)
    if blocked is None:
        decision.gate, decision.reason = 1, f"the dot's layout {c_enc} is not the FMA (blocked) one"
        return (decision,)
    a = _trace(mod, a_name)
    b = _trace(mod, b_name)
    if isinstance(a, str) or isinstance(b, str):  # why an operand could not be traced
        decision.gate, decision.reason = 1, a if isinstance(a, str) else str(b)
        return (decision,)
    # Gate 2: register pressure, per lane.
    elem = ELEM_BYTES.get(a.dot_elem, 4)
    estimate, a_rows = _per_lane(blocked, m_dim, n_dim, k_dim, elem, ELEM_BYTES.get(c_elem, 4))
    if estimate <= REGISTER_BUDGET_BYTES:
        decision.gate = 2
        decision.reason = f"about {estimate} bytes per lane, within the {REGISTER_BUDGET_BYTES}-byte budget"
        return (decision,)
    # Gate 3: a K tile.
    k_tile = _k_tile(k_dim, a_rows * elem)
    if k_tile < MIN_K_TILE:
        decision.gate = 3
        decision.reason = f"K = {k_dim} has no tile of at least {MIN_K_TILE} below it that divides it"
        return (decision,)
    # Gate 4: SLM.
    staged = m_dim * k_dim * ELEM_BYTES.get(a.native_elem, 4) + k_dim * n_dim * ELEM_BYTES.get(b.native_elem, 4)
    replaced = m_dim * k_dim * elem + k_dim * n_dim * ELEM_BYTES.get(b.dot_elem, 4)
    others = max(0, shared_in_use - replaced)
    if staged > slm_total - others:
        decision.gate = 4
        decision.reason = f"the staged operands need {staged} bytes of SLM, {slm_total - others} are free"
        return (decision,)
    decision.applied, decision.k_tile, decision.slm_bytes = True, k_tile, staged
    attrs = (", " + ", ".join(attr_parts)) if attr_parts else ""
    return _Plan(decision, line_no, a, b, acc_name, c_type, attrs, loc)


class _Plan(NamedTuple):
    """A dot the pass stages: its decision, its line, its traced operands, the accumulator, the
    result type, its other attributes and its location, as the rewrite writes them again."""

    dec: DotDecision
    line_no: int
    a: _Operand
    b: _Operand
    acc: str
    c_type: str
    attrs: str
    loc: str


def _emit(plan: _Plan, n: int, ind: str, form: str) -> list[str]:
    dec, _, a, b, acc, c_type, attrs, loc = plan
    p = f"%zs{n}_"
    m, k, nn, t = dec.m, dec.k, dec.n, dec.k_tile
    assert t is not None and k is not None  # only applied decisions are emitted
    a_mem = f"!ttg.memdesc<{m}x{k}x{a.native_elem}, {a.shared}, {a.smem}>"
    b_mem = f"!ttg.memdesc<{k}x{nn}x{b.native_elem}, {b.shared}, {b.smem}>"
    a_sub = f"!ttg.memdesc<{m}x{t}x{a.native_elem}, {a.shared}, {a.smem}, {m}x{k}>"
    b_sub = f"!ttg.memdesc<{t}x{nn}x{b.native_elem}, {b.shared}, {b.smem}, {k}x{nn}>"
    _, _, a_dot_enc = parse_tensor(a.dot_type)
    _, _, b_dot_enc = parse_tensor(b.dot_type)
    a_tile_native = f"tensor<{m}x{t}x{a.native_elem}, {a_dot_enc}>"
    b_tile_native = f"tensor<{t}x{nn}x{b.native_elem}, {b_dot_enc}>"
    a_tile = f"tensor<{m}x{t}x{a.dot_elem}, {a_dot_enc}>"
    b_tile = f"tensor<{t}x{nn}x{b.dot_elem}, {b_dot_enc}>"
    out = [
        f"{ind}{p}sa = ttg.local_alloc {a.native} : ({a.native_type}) -> {a_mem}",
        f"{ind}{p}sb = ttg.local_alloc {b.native} : ({b.native_type}) -> {b_mem}",
        f"{ind}{p}c0 = arith.constant 0 : i32",
    ]

    def tile(ki: str, acc_in: str, res: str, in_ind: str, dot_name: str | None = None) -> list[str]:
        lines = [
            f"{in_ind}{p}av{res} = ttg.memdesc_subview {p}sa[{p}c0, {ki}] : {a_mem} -> {a_sub}",
            f"{in_ind}{p}al{res} = ttg.local_load {p}av{res} : {a_sub} -> {a_tile_native}",
            f"{in_ind}{p}bv{res} = ttg.memdesc_subview {p}sb[{ki}, {p}c0] : {b_mem} -> {b_sub}",
            f"{in_ind}{p}bl{res} = ttg.local_load {p}bv{res} : {b_sub} -> {b_tile_native}",
        ]
        a_val, b_val = f"{p}al{res}", f"{p}bl{res}"
        if a.native_elem != a.dot_elem:
            lines.append(f"{in_ind}{p}ac{res} = tt.fp_to_fp {a_val} : {a_tile_native} -> {a_tile}")
            a_val = f"{p}ac{res}"
        if b.native_elem != b.dot_elem:
            lines.append(f"{in_ind}{p}bc{res} = tt.fp_to_fp {b_val} : {b_tile_native} -> {b_tile}")
            b_val = f"{p}bc{res}"
        name = dot_name or f"{p}d{res}"
        lines.append(f"{in_ind}{name} = tt.dot {a_val}, {b_val}, {acc_in}{attrs} : {a_tile} * {b_tile} -> {c_type}")
        return lines

    if form == "loop":
        out += [f"{ind}{p}ck = arith.constant {k} : i32", f"{ind}{p}ct = arith.constant {t} : i32",
                f"{ind}{dec.result} = scf.for {p}k = {p}c0 to {p}ck step {p}ct iter_args({p}acc = {acc}) -> "
                f"({c_type})  : i32 {{"]
        out += tile(f"{p}k", f"{p}acc", "", ind + "  ")
        out += [f"{ind}  scf.yield {p}d : {c_type}", f"{ind}}}{loc}"]
    else:
        acc_in, count = acc, k // t
        for i in range(count):
            out.append(f"{ind}{p}k{i} = arith.constant {i * t} : i32")
            last = i == count - 1
            out += tile(f"{p}k{i}", acc_in, str(i), ind, dot_name=dec.result if last else None)
            acc_in = f"{p}d{i}"
        out[-1] += loc
    return out


def verify(ttgir: str) -> str | None:
    """None when Triton's own MLIR parser and verifier accept the module; the complaint otherwise."""
    import tempfile

    from triton._C.libtriton import intel, ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    intel.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir") as fh:
        fh.write(ttgir)
        fh.flush()
        try:
            module = ir.parse_mlir_module(fh.name, ctx)
        except Exception as exc:  # noqa: BLE001 - MLIR reports parse errors as plain exceptions
            return f"does not parse: {exc}"
    try:
        ok = module.verify()
    except Exception as exc:  # noqa: BLE001
        return f"does not verify: {exc}"
    return None if ok in (True, None) else "does not verify"
