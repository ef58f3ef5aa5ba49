"""Scratch traffic in loops for Triton kernels (`zeinspect triton --cost`; a gate's `cost` or
`loop_bound` on its `triton:` entries).

A Triton report's build is its own SPIR-V artifact (triton.probes.audit keeps it on disk, one per
kernel and target) compiled with the report's options.  Its cost is read as a SYCL or OpenCL
build's is (probes.explain.scratch_costs): the same SPIR-V, the same options, on the same
target, compiled with IGC's ISA dump, and cached like it; with `--cost` the screen's own
compiles were those dumping compiles (probes.executor Job.dump), so the dump is read from the
cache and nothing is compiled again.  Only the scratch users are
measured (a library's screen is mostly clean kernels).  A report's cost is its kernel's by the
name Triton gave it (the metadata's), whatever its row is called (a library screen names rows
by what sets a specialization apart); IGC's own symbol-table program beside it is not a kernel.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...inputs import Input
from ...inputs.kinds import InputKind
from ...names import INTERNAL_KERNELS
from ...probes.explain import scratch_costs_each
from ...probes.results import Collection
from ...probes.session import Session
from ...settings import Settings
from ..model.part import triton_part


def attach_costs(collection: Collection, config: Settings, session: Session) -> None:
    """Each built Triton scratch user's `cost`, from a dumping compile of its own SPIR-V; what
    cannot be measured (its SPIR-V gone from disk, a failed dump) is counted in a note."""
    users = [(k, r, spirv, part.metadata.get("name")) for k, r in enumerate(collection.reports)
             if r.cost is None and r.built and r.uses_scratch and (part := triton_part(r)) is not None
             and (spirv := part.spirv)]
    if not users:
        return
    # One (inputs, config) pair per (options, target).
    groups: dict[tuple[str, str], dict[str, Input]] = {}
    gone = 0
    for _, r, spirv, _name in users:
        try:
            data = Path(spirv).read_bytes()
        except OSError:
            gone += 1
            continue
        groups.setdefault((r.options or "", r.target), {})[spirv] = Input(path=spirv, kind=InputKind.SPIRV, data=data)
    found: dict[tuple[str, str], dict[str, dict]] = {}
    # All groups' dumping compiles at once: batched across them (probes.explain._batches), one pool.
    asked = [(list(inputs.values()), replace(config, options=options, targets=(target,), kernels=()))
             for (options, target), inputs in groups.items()]
    for costs, problems in scratch_costs_each(asked, session):
        collection.incidents += problems
        for (path, kernel, on), measured in costs.items():
            if kernel not in INTERNAL_KERNELS:
                found.setdefault((path, on), {})[kernel] = measured
    unmeasured = 0
    for k, r, spirv, name in users:
        built = found.get((spirv, r.target), {})
        one = built.get(name) if name else next(iter(built.values())) if len(built) == 1 else None
        if one is not None:
            collection.reports[k] = r.replace(cost=one)
        else:
            unmeasured += 1
    if unmeasured:
        # A failed dump is an incident (scratch_costs); a dump without this kernel, neither.
        why = f" ({gone} of them: the SPIR-V kept for it is gone from disk)" if gone else ""
        collection.notes.append(f"--cost: {unmeasured} Triton scratch {'user' if unmeasured == 1 else 'users'} "
                                f"could not be measured{why}")
