"""Each scratch user's loop traffic (`--cost`, a gate's loop rule), measured where its code is: a
dumping compile of the module zeinspect built (probes.explain.users_costs), or the native image's
own code, disassembled (probes.native_cost).  The images are disassembled on a pool of threads,
`jobs` at a time, here in the probes layer; the use cases call `attach_costs`.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..model import KernelReport
from ..settings import Settings
from .explain import users_costs
from .results import Collection


def attach_costs(got: Collection, paths: list[str], config: Settings, session: Any, *,
                 skip: set[str] | frozenset[str] = frozenset()) -> None:
    """Each scratch user's cost (inputs.isa.ScratchCost): for a kernel zeinspect built, from IGC's
    ISA of the same build (a dumping compile of its module for the targets where it uses
    scratch); for one read from a native image, from that image's own code, disassembled
    (probes.native_cost).  Both cached like any compile.  `skip`: inputs costed already (built
    in recorded shapes: judge.shapes_file), by normalised path."""
    from ..inputs import host_info, iter_host_images, iter_inputs
    from ..inputs.kinds import InputKind
    from ..model import Source
    from ..probes.native_cost import native_costs

    users = [r for r in got.reports if r.built and r.uses_scratch and r.source is Source.AOT
             and os.path.normpath(r.input) not in skip]
    native = [r for r in got.reports if r.built and r.uses_scratch and r.source is Source.BINARY and r.ip]
    users_of: dict[str, list[KernelReport]] = {}
    for r in users:
        users_of.setdefault(r.input, []).append(r)
    by_ip: dict[str, dict[str, set[str]]] = {}
    for r in native:
        by_ip.setdefault(r.input, {}).setdefault(r.ip, set()).add(r.kernel)  # type: ignore[arg-type]
    compiler_for = session.plan(config.targets).compiler_for_ip if native else {}
    costs: dict[tuple[str, str, str], dict] = {}
    native_found: dict[tuple[str, str, str], dict] = {}
    # Native images are disassembled in parallel (one ocloc each, `config.jobs` at a time), at
    # most twice that many images held at once; their results are taken in input order.
    workers = max(1, config.jobs or os.cpu_count() or 1)
    pending: deque[tuple[str, Future]] = deque()

    def take(keep: int) -> None:
        while len(pending) > keep:
            path, future = pending.popleft()
            found, problems = future.result()
            got.incidents.extend(problems)
            native_found.update(((path, k, ip), c) for (k, ip), c in found.items())

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for inp in iter_inputs(list(paths)):
            for one in (iter_host_images(inp, [], host_info()) if inp.kind == InputKind.HOST else [inp]):
                if one.path in by_ip and not one.compilable:
                    pending.append((one.path, pool.submit(native_costs, one, by_ip[one.path], compiler_for, config,
                                                          session.cache)))
                    take(2 * workers)
                if one.path not in users_of or not one.compilable:
                    continue
                found_aot, problems = users_costs(one, users_of[one.path], config, session)
                got.incidents += problems
                costs.update(found_aot)
        take(0)
    measured = {id(r) for r in users}  # by identity: comparing reports field by field is a library's hot path
    from_code = {id(r) for r in native}
    got.reports = [r.replace(cost=costs.get((r.input, r.kernel, r.target))) if id(r) in measured else
                   r.replace(cost=native_found.get((r.input, r.kernel, r.ip or ""))) if id(r) in from_code else r
                   for r in got.reports]
    unmeasured = {r.identity for r in native if (r.input, r.kernel, r.ip) not in native_found}
    if unmeasured:
        got.notes.append(f"--cost: {len(unmeasured)} scratch users read from native images could not be measured "
                         "(see the incidents)")
