"""`zeinspect fix` in text and JSON: each decision, why, and how to write it in source.  Pure."""

from __future__ import annotations

from ..app import plugins
from ..judge.fix import FixResult, sycl_spelling
from .common import safe


def _state(cleans: bool) -> str:
    return "no scratch memory on any target" if cleans else "still uses scratch memory"


def text(result: FixResult, sources: dict[str, dict]) -> str:
    """`sources`: each gate source's decision records by label (app.fix.FixOutcome)."""
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
    for name, records in sources.items():
        for label, rec in records.items():
            first, *rest = plugins.source(name).describe_fix(safe(label), rec)
            out += [f"{first}: {_state(rec['cleans'])}", *rest]
    left = len([d for d in result.decisions if not d.cleans]) + len([r for records in sources.values()
                                                                   for r in records.values() if not r["cleans"]])
    if left:
        out.append(f"{left} kernel(s) still use scratch memory in their best shape: list them in the ratchet "
                   "(zeinspect ratchet update --shapes ...)")
    return "".join(line + "\n" for line in out)


def document(result: FixResult, sources: dict[str, dict]) -> dict:
    return {
        "decisions": [{"input": d.search.input, "kernel": d.kernel, "shape": d.shape.to_json(), "cleans": d.cleans,
                       "why": d.search.why(), "sycl": sycl_spelling(d.shape, d.search.written),
                       "same_results": d.equivalence.to_json() if d.equivalence is not None else None,
                       "results": {t: r.to_json() for t, r in d.verified.items()}}
                      for d in result.decisions],
        **sources,
        "untouched": result.untouched,
    }
