"""The paths of shipped kernels (judge.paths) in text and JSON: how many (kernel, target) pairs
the runtime serves by each path, and every kernel whose native and JIT builds disagree."""

from __future__ import annotations

from collections.abc import Iterator

from ..judge.paths import PathDifference, taken_counts
from ..model import KernelReport

LABELS = {"native": "native image", "spirv": "SPIR-V JIT", "generic_ir": "generic_ir JIT",
          "native_ir": "JIT of a zebin's own SPIR-V"}


def text(reports: list[KernelReport], found: list[PathDifference]) -> Iterator[str]:
    counts = taken_counts(reports)
    if not counts:
        return
    yield "paths: " + ", ".join(f"{n} kernel-target pairs by {LABELS[via]}" for via, n in counts.items()) + "\n"
    for d in found:
        yield f"paths differ: {d.product}: {d.text}\n"


def document(reports: list[KernelReport], found: list[PathDifference]) -> dict:
    counts = taken_counts(reports)
    if not counts and not found:
        return {}
    return {"taken": counts, "differences": [d.to_json() for d in found]}
