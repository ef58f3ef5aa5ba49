"""What a build costs: each module's compile per target, IGC's retries in it, and the compiles
that cost the most, ranked.  Pure functions of the reports (their `compile_seconds`, `retries`)."""

from __future__ import annotations

from ..model import KernelReport


def compile_times(reports: list[KernelReport]) -> list[dict]:
    """What each module's compile for each target took, and IGC's retries in it (the reports'
    `retries` added up): what the build costs, per image and target."""
    out: dict[tuple[str, str], dict] = {}
    for r in reports:
        if r.compile_seconds is None:
            continue
        row = out.setdefault((r.input, r.target), {"input": r.input, "target": r.target, "seconds": r.compile_seconds,
                                                   "retries": 0, "kernels": 0})
        row["retries"] += r.retries
        row["kernels"] += 1
    return list(out.values())


BUILD_COST_SHOWN = 10


def build_cost(reports: list[KernelReport], limit: int = BUILD_COST_SHOWN) -> list[dict]:
    """The compiles that cost the build the most, the longest first: each module on each target
    (compile_times), with the kernels IGC built again in it.  A kernel's cost is its module's
    compile: IGC compiles a module's kernels together, and its retries are per kernel."""
    retried: dict[tuple[str, str], dict[str, int]] = {}
    for r in reports:
        if r.retries:
            retried.setdefault((r.input, r.target), {})[r.kernel] = r.retries
    ranked = sorted(compile_times(reports), key=lambda row: (-row["seconds"], row["input"], row["target"]))
    return [{**row, "retried": retried.get((row["input"], row["target"]), {})} for row in ranked[:limit]]
