"""A reference evaluator for the TTGIR the staging pass reads and writes, on numpy.

It runs one `tt.func` of a printed TTGIR module on given buffers, so the original and the
staged module can be run on the same random tensors and their outputs compared.  Layouts
and encodings do not change values, so they are ignored; SLM is a copy of the stored
tensor; a pointer is a (buffer, element offsets) pair.  Covered: arith.constant, addi,
subi, muli, addf, mulf, extf, truncf; tt.make_range, expand_dims, splat, broadcast,
addptr, load, store, fp_to_fp, dot, return; ttg.local_alloc, local_load,
memdesc_subview, convert_layout; scf.for with iter_args, scf.yield.  Anything else is an
error, never silently skipped.  f16 and bf16 values are kept in float32 after rounding to
their precision; dots accumulate in float32.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from zeinspect.triton.model.ttgir import SSA as _SSA
from zeinspect.triton.model.ttgir import parse_type

_LOC = re.compile(r"\s+loc\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$")



def _attribute(pattern: str, code: str) -> str:
    """The first group of `pattern` in an op's text; EvalError when the op lacks it."""
    m = re.search(pattern, code)
    if m is None:
        raise EvalError(f"unsupported op (no {pattern!r}): {code[:120]}")
    return m.group(1)


class EvalError(Exception):
    pass


@dataclass
class Ptr:
    buffer: str
    offsets: np.ndarray  # int64, the tensor's shape (or a 0-d array for a scalar pointer)


def round_to(values: np.ndarray, elem: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float32)
    if elem == "f16":
        return values.astype(np.float16).astype(np.float32)
    if elem == "bf16":
        bits = values.view(np.uint32)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)  # round to nearest even
        return bits.view(np.float32)
    return values


def _shape_elem(type_text: str) -> tuple[list[int], str]:
    t = parse_type(type_text)
    return list(t.dims), t.elem


def _operands(text: str) -> list[str]:
    return re.findall(_SSA, text)


def _split_types(rest: str) -> tuple[str, str]:
    """Operands and attributes before the first ' : ' outside brackets; the types after it."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "{<([":
            depth += 1
        elif ch in "}>)]":
            depth -= 1
        elif depth == 0 and rest.startswith(" : ", i):
            return rest[:i], rest[i + 3:]
    return rest, ""


class Function:
    def __init__(self, ttgir: str, name: str | None = None):
        lines = [_LOC.sub("", line) for line in ttgir.split("\n")]
        start = next((i for i, line in enumerate(lines) if "tt.func" in line and (name is None or f"@{name}(" in line)),
                     None)
        if start is None:
            raise EvalError("no tt.func in the module")
        header = lines[start]
        self.args = re.findall(rf"({_SSA}): ([^,)]+(?:<[^>]*>)?)", header[header.index("("):])
        body, depth = [], 1
        for line in lines[start + 1:]:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                break
            body.append(line)
        self.body = body

    def run(self, buffers: dict[str, np.ndarray], args: list) -> None:
        env = {}
        for (name, _), value in zip(self.args, args):
            env[name] = value
        self._block(self.body, env, buffers)

    def _block(self, lines: list[str], env: dict, buffers: dict) -> list | None:
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            if not line or line == "}":
                continue
            if " = scf.for " in line:
                depth = line.count("{") - line.count("}")
                inner = []
                while depth > 0 and i < len(lines):
                    depth += lines[i].count("{") - lines[i].count("}")
                    if depth > 0:
                        inner.append(lines[i])
                    i += 1
                self._for(line, inner, env, buffers)
                continue
            if line.startswith("scf.yield"):
                return [env[v] for v in _operands(_split_types(line)[0])]
            if line.startswith("tt.return"):
                return None
            if line.startswith("tt.store"):
                self._store(line, env, buffers)
                continue
            self._op(line, env, buffers)
        return None

    def _for(self, head: str, body: list[str], env: dict, buffers: dict) -> None:
        m = re.match(rf"(?P<res>{_SSA}(?:, {_SSA})*|{_SSA}:\d+) = scf\.for (?P<iv>{_SSA}) = (?P<lb>{_SSA}) to "
                     rf"(?P<ub>{_SSA}) step (?P<st>{_SSA}) iter_args\((?P<iters>[^)]*)\)", head)
        if not m:
            raise EvalError(f"unsupported scf.for: {head[:120]}")
        pairs = [p.split(" = ") for p in m["iters"].split(", ")]
        carried = [env[init] for _, init in pairs]
        lb, ub, st = (int(env[m[k]]) for k in ("lb", "ub", "st"))
        for iv in range(lb, ub, st):
            scope = dict(env)
            scope[m["iv"]] = np.int64(iv)
            for (name, _), value in zip(pairs, carried):
                scope[name] = value
            carried = self._block(body, scope, buffers) or []
        res = m["res"]
        if ":" in res:
            base, count = res.split(":")
            for k in range(int(count)):
                env[f"{base}#{k}"] = carried[k]
            env[base] = carried[0]
        else:
            for name, value in zip(res.split(", "), carried):
                env[name] = value

    def _store(self, line: str, env: dict, buffers: dict) -> None:
        ops = _operands(_split_types(line)[0])
        ptr, value = env[ops[0]], env[ops[1]]
        mask = env[ops[2]] if len(ops) > 2 else None
        buf = buffers[ptr.buffer]
        offs = ptr.offsets.reshape(-1)
        vals = np.broadcast_to(np.asarray(value, dtype=buf.dtype), ptr.offsets.shape).reshape(-1)
        if mask is not None:
            keep = np.broadcast_to(mask, ptr.offsets.shape).reshape(-1)
            offs, vals = offs[keep], vals[keep]
        buf[offs] = vals

    def _op(self, line: str, env: dict, buffers: dict) -> None:
        m = re.match(rf"({_SSA}) = ([\w.]+) (.*)$", line)
        if not m:
            raise EvalError(f"unsupported line: {line[:120]}")
        res, op, rest = m.groups()
        code, types = _split_types(rest)
        args = [env[a] for a in _operands(code) if a in env]
        if op == "arith.constant":
            if code.startswith("dense<"):
                value = code[len("dense<"):code.rindex(">")]
                shape, elem = _shape_elem(types)
                dtype = np.float32 if elem.startswith(("f", "bf")) else np.int64
                env[res] = np.full(shape, float(value) if dtype is np.float32 else int(value), dtype=dtype)
            else:
                text = code.strip()
                env[res] = np.float32(float(text)) if "." in text or "e" in text else np.int64(int(text))
        elif op == "tt.make_range":
            start, end = int(_attribute(r"start = (-?\d+)", code)), int(_attribute(r"end = (-?\d+)", code))
            env[res] = np.arange(start, end, dtype=np.int64)
        elif op == "tt.expand_dims":
            axis = int(_attribute(r"axis = (\d+)", code))
            env[res] = _map(args[0], lambda a: np.expand_dims(a, axis))
        elif op in ("tt.splat", "tt.broadcast"):
            shape, _ = _shape_elem(types.split("->")[-1])
            env[res] = _map(args[0], lambda a: np.broadcast_to(a, shape).copy())
        elif op == "tt.addptr":
            ptr, off = args
            env[res] = Ptr(ptr.buffer, ptr.offsets + np.asarray(off, dtype=np.int64))
        elif op == "tt.load":
            ptr = args[0]
            env[res] = buffers[ptr.buffer][ptr.offsets].astype(np.float32)
        elif op in ("tt.fp_to_fp", "arith.extf", "arith.truncf"):
            _, elem = _shape_elem(types.split("->")[-1] if "->" in types else types.split(" to ")[-1])
            env[res] = round_to(args[0], elem)
        elif op in ("ttg.local_alloc", "ttg.local_load", "ttg.convert_layout"):
            env[res] = np.array(args[0], copy=True)
        elif op == "ttg.memdesc_subview":
            offsets = [int(env[o]) for o in _operands(code[code.index("["):code.index("]")])]
            shape, _ = _shape_elem(types.split("->")[-1])
            slices = tuple(slice(o, o + s) for o, s in zip(offsets, shape))
            env[res] = np.array(args[0][slices], copy=True)
        elif op == "tt.dot":
            a, b, c = args[:3]
            env[res] = (np.asarray(a, np.float32) @ np.asarray(b, np.float32) + np.asarray(c, np.float32)).astype(np.float32)
        elif op in ("arith.addi", "arith.subi", "arith.muli"):
            int_op = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply}[op]
            env[res] = int_op(np.asarray(args[0], np.int64), np.asarray(args[1], np.int64))
        elif op in ("arith.addf", "arith.mulf"):
            float_op = {"arith.addf": np.add, "arith.mulf": np.multiply}[op]
            env[res] = float_op(np.asarray(args[0], np.float32), np.asarray(args[1], np.float32)).astype(np.float32)
        else:
            raise EvalError(f"the evaluator does not know {op}")


def _map(value, fn):
    if isinstance(value, Ptr):
        return Ptr(value.buffer, fn(value.offsets))
    return fn(value)


def run_dot_kernel(ttgir: str, m: int, n: int, k: int, elem: str, seed: int = 7) -> np.ndarray:
    """Run a (a_ptr, b_ptr, c_ptr) dot kernel on seeded random inputs; return C."""
    rng = np.random.default_rng(seed)
    a = round_to(rng.standard_normal(m * k).astype(np.float32), elem)
    b = round_to(rng.standard_normal(k * n).astype(np.float32), elem)
    buffers = {"a": a, "b": b, "c": np.zeros(m * n, dtype=np.float32)}
    fn = Function(ttgir)
    zero = np.zeros((), dtype=np.int64)
    fn.run(buffers, [Ptr("a", zero), Ptr("b", zero), Ptr("c", zero)])
    return buffers["c"].reshape(m, n)
