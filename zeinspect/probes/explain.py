"""`zeinspect explain`: which source lines spill, per kernel and target, from IGC's own ISA.

Each compilable input is compiled once per planned IP with IGC's shader dumps on
(toolchain.shader_dump), with the options the audit would use; OpenCL C gets `-g` so that
the ISA carries its source lines (SPIR-V keeps the line information it was built with).  The
dumps are read by inputs.isa.  Nothing here is cached: a dump is a debugging aid, asked for
one kernel at a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import names
from ..inputs import Input
from ..inputs.isa import KernelIsa, read_dump
from ..inputs.kinds import InputKind
from ..model import Compiler
from ..toolchain.shader_dump import dump_isa
from ..toolchain.targets import TargetPlan, plan_targets
from .aot import AotConfig, build_options, resolve_compilers


@dataclass
class Explanation:
    input: str
    target: str
    ip: str
    compiler: str
    isa: KernelIsa


@dataclass
class ExplainResult:
    explanations: list[Explanation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    compilers: list[Compiler] = field(default_factory=list)


_PASS = re.compile(r"_(\d+)_simd\d+_entry_")


def _final_passes(dumps) -> list[tuple[KernelIsa, int]]:
    """Per kernel, the dump of IGC's last compile pass, and how many passes there were.  IGC may
    compile a kernel again with other settings (its retry): the dump names the pass
    (`OCL_asm<hash>_simd32_entry_0001.asm` is pass 0, `..._1_simd32_...` pass 1)."""
    by_kernel: dict[str, list[tuple[int, KernelIsa]]] = {}
    for dump in dumps:
        m = _PASS.search(dump.file)
        isa = read_dump(dump.text, dump.file)
        by_kernel.setdefault(isa.kernel, []).append((int(m.group(1)) if m else 0, isa))
    return [(max(found, key=lambda x: x[0])[1], len(found)) for found in by_kernel.values()]


def explain(inputs: list[Input], config: AotConfig, plan: TargetPlan | None = None) -> ExplainResult:
    compilers = resolve_compilers(config)
    plan = plan or plan_targets(config.targets, compilers)
    out = ExplainResult()
    for inp in inputs:
        if not inp.compilable:
            out.notes.append(f"{inp.path}: explain compiles sources and SPIR-V; a {inp.kind} has no ISA to read")
            continue
        for ip in plan.ips:
            compiler = plan.compiler_for_ip[ip]
            if compiler not in out.compilers:
                out.compilers.append(compiler)
            targets = plan.names_for_ip(ip)
            options, internal, _ = build_options(inp, config, compiler, [t for t in plan.targets if t.ip == ip])
            if inp.kind == InputKind.OPENCL:
                options = f"{options} -g".strip()
            dumps, log, failure = dump_isa(compiler, inp.data, spirv=inp.kind == InputKind.SPIRV, ip=ip,
                                           options=options, internal_options=internal, timeout=config.timeout)
            if failure:
                out.incidents.append(f"{inp.path} on {', '.join(targets)}: {failure}")
                continue
            if not dumps:
                out.notes.append(f"{inp.path} on {', '.join(targets)}: the compiler wrote no ISA dump "
                                 f"({' '.join(log.split())[-200:] or 'no output'})")
            for isa, passes in _final_passes(dumps):
                if config.kernels and not any(names.matches(p, isa.kernel) for p in config.kernels):
                    continue
                if passes > 1:
                    out.notes.append(f"{isa.kernel} on {targets[0]}: IGC compiled it {passes} times (its retry with "
                                     "other settings); the last, which made the binary, is shown")
                out.explanations.append(Explanation(inp.path, targets[0], ip, compiler.id, isa))
    return out
