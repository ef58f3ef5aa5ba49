"""`zeinspect explain` in text and JSON: per kernel and target, the lines that spill.  Pure."""

from __future__ import annotations

from ..probes.explain import ExplainResult
from .common import safe

TOP_LINES = 15


def text(result: ExplainResult) -> str:
    out = []
    for e in result.explanations:
        isa = e.isa
        head = (f"kernel {safe(isa.kernel)} on {e.target} ({e.ip}), SIMD{isa.simd or '?'}, {isa.grf or '?'} GRF, "
                f"{isa.instructions or '?'} instructions: ")
        if not isa.spill_size and not isa.spills and not isa.fills:
            out.append(head + "no spill")
            continue
        out.append(head + f"spill size {isa.spill_size} bytes, {isa.spills} spill and {isa.fills} fill messages")
        if not isa.has_lines:
            out.append("  no line information: counts per ISA block below; build OpenCL C with -g (explain does), "
                       "or the SYCL image with debug information (-g), to see source lines")
        rows = [x for x in isa.lines if x.spills or x.fills][:TOP_LINES]
        if rows:
            out.append(f"  {'line':>6}  {'depth':>5}  {'spills':>6}  {'fills':>6}  {'bytes':>7}  {'weight':>8}  source")
            for x in rows:
                out.append(f"  {x.line if x.line is not None else '-':>6}  {x.depth:>5}  {x.spills:>6}  {x.fills:>6}  "
                           f"{x.bytes_moved:>7}  {x.weight:>8}  {safe(x.text)[:100]}")
        if isa.spilled_variables:
            shown = ", ".join(f"{n} ({b} B)" for n, b in isa.spilled_variables[:8])
            more = len(isa.spilled_variables) - 8
            out.append(f"  spilled variables: {shown}" + (f" and {more} more" if more > 0 else ""))
    out.append("weight = (spill + fill messages) x 8^loop depth: a heuristic for ranking lines")
    for note in result.notes:
        out.append(f"note: {safe(note)}")
    return "\n".join(out) + "\n"


def document(result: ExplainResult) -> dict:
    return {
        "schema": "zeinspect.explain/1",
        "compilers": [c.to_json() for c in result.compilers],
        "explanations": [{
            "input": e.input, "target": e.target, "ip": e.ip, "compiler": e.compiler, "kernel": e.isa.kernel,
            "simd": e.isa.simd, "grf": e.isa.grf, "instructions": e.isa.instructions,
            "spill_size": e.isa.spill_size, "spill_refs": e.isa.spill_refs, "spills": e.isa.spills,
            "fills": e.isa.fills, "has_lines": e.isa.has_lines,
            "lines": [{"line": x.line, "block": x.block, "text": x.text, "spills": x.spills, "fills": x.fills,
                       "bytes_moved": x.bytes_moved, "depth": x.depth, "weight": x.weight}
                      for x in e.isa.lines if x.spills or x.fills],
            "spilled_variables": [{"name": n, "bytes": b} for n, b in e.isa.spilled_variables],
        } for e in result.explanations],
        "notes": result.notes,
        "incidents": result.incidents,
    }
