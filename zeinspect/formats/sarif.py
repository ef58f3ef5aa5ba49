"""SARIF 2.1.0 for code scanning: one result per kernel and finding, its figures per target.

The rule is the verdict; the level is `error` when the verdict fails the gate (under the
run's --strict), `note` otherwise; the message is the one-line finding; the location is the
kernel's source line where zeinspect can know it (an OpenCL C `__kernel` definition, a
Triton `def`), otherwise the file that was audited (a binary, a library: the image path's
host file); a ratchet finding points at its ratchet line.  Paths relative to the working
directory are given against `%SRCROOT%`, as code-scanning uploads expect.  Pure, except that
it reads the audited source files to find kernel lines.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from .. import __version__, names
from ..judge.audit import AuditResult, Judgement
from ..model import Verdict, environment_of
from .audit import grouped_findings
from .audit import summary as audit_summary

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINDINGS = (Verdict.OVERFLOW, Verdict.FAILED, Verdict.NEW, Verdict.GREW, Verdict.INTENT, Verdict.IMPROVED,
            Verdict.STALE)
_RULE_TEXT = {
    Verdict.OVERFLOW: "The kernel needs more scratch memory per thread than the hardware allows: it does not run.",
    Verdict.FAILED: "The kernel did not build (a compiler error, crash or hang).",
    Verdict.NEW: "The kernel uses scratch memory (register spills or private memory) and the ratchet file does "
                 "not allow it.",
    Verdict.GREW: "The kernel uses more scratch memory than its ratchet entry allows.",
    Verdict.INTENT: "A path of the kernel (its native image, or the SPIR-V the driver compiles at the first launch) "
                    "misses what the gate's intent rules ask of its build: a register file, a sub-group size, a "
                    "native image.",
    Verdict.IMPROVED: "A ratchet entry allows more scratch memory than the kernels it matches use: tighten it.",
    Verdict.STALE: "A ratchet entry matches no kernel that uses scratch memory: remove it.",
}


@lru_cache(maxsize=1024)
def _source_lines(path: str) -> tuple[str, ...]:
    if not path.endswith((".cl", ".py")):
        return ()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return tuple(handle.read(4 * 1024 * 1024).splitlines())
    except OSError:
        return ()


def kernel_line(path: str, kernel: str) -> int | None:
    """The line that defines `kernel` in an OpenCL C or Triton source, or None."""
    short = names.short(kernel)
    pattern = re.compile(rf"(__kernel|kernel)\b[^;{{]*\b{re.escape(short)}\s*\(|^\s*def\s+{re.escape(short)}\s*\(")
    return next((n for n, line in enumerate(_source_lines(path), start=1) if pattern.search(line)), None)


def _location(uri: str, line: int | None) -> dict:
    artifact: dict = {"uri": uri.replace(os.sep, "/")}
    if not os.path.isabs(uri):
        artifact["uriBaseId"] = "%SRCROOT%"
    physical: dict = {"artifactLocation": artifact}
    if line:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _figures(j: Judgement) -> dict:
    r = j.report
    assert r is not None
    return {"status": r.status.value, "ip": r.ip, "spill_bytes": r.spill_bytes, "private_bytes": r.private_bytes,
            "scratch_limit_bytes": r.scratch_limit_bytes, "needed_scratch_bytes": r.needed_scratch_bytes,
            "simd": r.simd, "grf": r.grf, "compiler": r.compiler}


def document(result: AuditResult, *, strict: bool) -> dict:
    rules = [{"id": v.label, "name": v.name.title().replace("_", ""),
              "shortDescription": {"text": _RULE_TEXT[v]},
              "defaultConfiguration": {"level": "error" if v.fails else "note"}} for v in FINDINGS]
    grouped: dict[tuple, list[Judgement]] = {}
    for j in result.judgements:
        if j.verdict not in FINDINGS:
            continue
        key = (j.report.input, j.report.kernel) if j.report is not None else (
            result.ratchet_path, j.entry.lineno if j.entry else 0)
        grouped.setdefault((j.verdict, *key), []).append(j)
    results = []
    for (verdict, where, what), found in grouped.items():
        first = found[0]
        if first.report is not None:
            path = first.report.file
            location = _location(path, kernel_line(path, what))
            targets = {j.report.target: _figures(j) for j in found if j.report is not None}
            message = first.message + (f" (and {len(found) - 1} more target(s))" if len(found) > 1 else "")
            properties: dict = {"kernel": what, "input": where, "targets": targets}
        else:
            location = _location(where, first.entry.lineno if first.entry else None)
            message, properties = first.message, {}
        results.append({"ruleId": verdict.label, "ruleIndex": FINDINGS.index(verdict),
                        "level": "error" if first.fails(strict) else "note",
                        "message": {"text": message}, "locations": [location], "properties": properties})
    run: dict = {"tool": {"driver": {"name": "zeinspect", "version": __version__, "rules": rules}},
                 "results": results,
                 "properties": {"summary": audit_summary(result), "passed": result.passed(strict)}}
    grouped_lines = grouped_findings(result, strict=strict)
    if grouped_lines:  # a library's findings by cause and by family, as the text and HTML lead with them
        run["properties"]["grouped"] = grouped_lines
    environment = environment_of(j.report for j in result.judgements if j.report is not None)
    if environment:
        # The compiler's variables the figures depend on, where SARIF keeps a run's environment.
        run["invocations"] = [{"executionSuccessful": True, "environmentVariables": environment}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def dumps(result: AuditResult, *, strict: bool) -> str:
    from .json import encode

    return encode(document(result, strict=strict), 1) + "\n"
