"""`zeinspect triton --explain`: which Python lines of a Triton kernel spill.

Triton's SPIR-V carries the Python file and line of every operation (OpLine), and IGC's dump
names them (`// File:` and `// Line N:`), inlined triton.language functions included.  What
is explained is exactly what was audited: each report's own SPIR-V artifact, built with the
report's own options on its target (after Triton's rebuild rule, when it applied).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...inputs import Input
from ...inputs.kinds import InputKind
from ...model import KernelReport
from ...probes.explain import ExplainResult, explain
from ...probes.session import Session
from ...settings import Settings
from ..model.part import triton_part


def explain_reports(label: str, module_file: str, reports: list[KernelReport], config: Settings,
                    session: Session) -> ExplainResult:
    """Explain the builds behind Triton reports (triton.probes.audit), grouped by artifact and options;
    `label` (`module.py:kernel`) names them as the reports do."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in reports:
        part = triton_part(r)
        spirv = part.spirv if part is not None else None
        # Any report with the zebin's figures had a binary (an SLM overflow builds; it cannot launch).
        if spirv and r.applicable and r.spill_bytes is not None:
            groups.setdefault((spirv, r.options or ""), []).append(r.target)
    out = ExplainResult()
    for (spirv, options), targets in groups.items():
        inp = Input(path=spirv, kind=InputKind.SPIRV, data=Path(spirv).read_bytes())
        got = explain([inp], replace(config, options=options, targets=tuple(targets)), session,
                      module_files={spirv: str(Path(module_file).resolve())})
        for e in got.explanations:
            e.input = label
        out.extend(got)
    return out
