"""`zeinspect fix` in text and JSON: each decision, why, and how to write it in source.  Pure."""

from __future__ import annotations

from ..judge.fix import FixResult, sycl_spelling
from .common import safe


def _state(cleans: bool) -> str:
    return "no scratch memory on any target" if cleans else "still uses scratch memory"


def text(result: FixResult, triton_records: dict) -> str:
    out = []
    for d in result.decisions:
        out.append(f"{safe(d.search.input)}:{safe(d.kernel)}: {d.shape.describe()}: {_state(d.cleans)}")
        out.append(f"  why: {d.search.why()}")
        out.append(f"  SYCL: {sycl_spelling(d.shape, d.search.written)}")
        eq = d.equivalence
        if eq is not None and eq.ran:
            same = ("same results" + (" (bitwise)" if eq.bitwise else f" (max difference {eq.max_abs_diff:g})")
                    if eq.equal else f"DIFFERENT RESULTS (max difference {eq.max_abs_diff:g})")
            out.append(f"  checked: {same} on {eq.device}, {eq.outputs_compared} outputs")
        elif eq is not None:
            out.append(f"  checked: {eq.why}")
    for label, rec in triton_records.items():
        shape = rec["shape"]
        out.append(f"{safe(label)}: {'staged' if shape['stage'] else 'not staged'}, grf_mode {shape['grf_mode']}, "
                   f"{shape['num_warps']} warps of {shape['threads_per_warp']} threads: {_state(rec['cleans'])}")
        out.append(f"  why: {rec['why']}")
        out.append(f"  Triton: {rec['triton']}")
    left = len([d for d in result.decisions if not d.cleans]) + len([r for r in triton_records.values()
                                                                   if not r["cleans"]])
    if left:
        out.append(f"{left} kernel(s) still use scratch memory in their best shape: list them in the ratchet "
                   "(zeinspect ratchet update --shapes ...)")
    return "".join(line + "\n" for line in out)


def document(result: FixResult, triton_records: dict) -> dict:
    return {
        "decisions": [{"input": d.search.input, "kernel": d.kernel, "shape": d.shape.to_json(), "cleans": d.cleans,
                       "why": d.search.why(), "sycl": sycl_spelling(d.shape, d.search.written),
                       "same_results": d.equivalence.to_json() if d.equivalence is not None else None,
                       "results": {t: r.to_json() for t, r in d.verified.items()}}
                      for d in result.decisions],
        "triton": triton_records,
        "untouched": result.untouched,
    }
