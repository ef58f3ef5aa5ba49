"""The paths of shipped kernels (judge.paths) in text and JSON: what the runtime runs on each
target (kernels with the same paths grouped), and every kernel whose native and JIT builds
disagree."""

from __future__ import annotations

from collections.abc import Iterator

from .. import names
from ..judge.paths import PathDifference, product_label, taken_counts
from ..model import KernelReport, RunPath

SHOWN = 10
"""Groups of kernels the text names one by one (the JSON has every report's path)."""


def groups(reports: list[KernelReport]) -> list[tuple[str, list[str], list[tuple[str, list[str]]]]]:
    """(product, kernels, [(path, targets)]) for the kernels that take the same paths, largest first."""
    by_kernel: dict[tuple[str, str], dict[str, list[str]]] = {}
    for r in reports:
        if r.path is not None and r.path_taken:
            by_kernel.setdefault((product_label(r), r.kernel), {}).setdefault(r.path.value, []).append(r.target)
    shared: dict[tuple[str, tuple], list[str]] = {}
    for (product, kernel), paths in by_kernel.items():
        key = tuple(sorted((via, tuple(sorted(targets))) for via, targets in paths.items()))
        shared.setdefault((product, key), []).append(kernel)
    out = [(product, sorted(kernels), [(via, list(targets)) for via, targets in key])
           for (product, key), kernels in shared.items()]
    return sorted(out, key=lambda g: -len(g[1]))


def first_launch(reports: list[KernelReport]) -> list[dict]:
    """Per target, what its first launch compiles (the JIT builds it takes) and what that took
    here: each build's compile time, counted once per module."""
    modules: dict[str, dict[str, float]] = {}
    for r in reports:
        if r.path is not None and r.path.jit and r.path_taken and r.compile_seconds is not None:
            modules.setdefault(r.target, {})[r.input] = r.compile_seconds
    return [{"target": target, "modules": len(times), "seconds": round(sum(times.values()), 3)}
            for target, times in sorted(modules.items())]


def text(reports: list[KernelReport], found: list[PathDifference]) -> Iterator[str]:
    counts = taken_counts(reports)
    if not counts:
        return
    yield "paths: " + ", ".join(f"{n} kernel-target pairs by {RunPath(via).label}" for via, n in counts.items()) + "\n"
    found_groups = groups(reports)
    for product, kernels, paths in found_groups[:SHOWN]:
        who = names.short(kernels[0]) if len(kernels) == 1 else f"{len(kernels)} kernels"
        ways = "; ".join(f"{', '.join(targets)}: {RunPath(via).label}" for via, targets in paths)
        yield f"  {who} of {product}: {ways}\n"
    if len(found_groups) > SHOWN:
        yield f"  ({len(found_groups) - SHOWN} more groups: --json has every report's path)\n"
    launches = first_launch(reports)
    if launches:
        yield "first launch, JIT compile (as built here): " + ", ".join(
            f"{x['target']} {x['seconds']:.1f} s ({x['modules']} module{'s' if x['modules'] != 1 else ''})"
            for x in launches) + "\n"
    for d in found:
        yield f"paths differ: {d.product}: {d.text}\n"


def document(reports: list[KernelReport], found: list[PathDifference]) -> dict:
    counts = taken_counts(reports)
    if not counts and not found:
        return {}
    return {"taken": counts, "differences": [d.to_json() for d in found], "first_launch": first_launch(reports)}
