"""JUnit XML for CI systems: one test case per (kernel, target), one per stale ratchet line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..judge.audit import AuditResult
from ..model import Verdict
from .audit import summary as audit_summary

# Characters XML 1.0 cannot hold at all; they are dropped, not escaped.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _ILLEGAL.sub("", text)


def junit(result: AuditResult, *, strict: bool) -> bytes:
    suite = ET.Element("testsuite", name="zeinspect.audit")
    failures = skipped = 0
    for j in result.judgements:
        if j.report is not None:
            classname = _clean(j.report.input)
            name = _clean(f"{j.report.kernel} [{j.report.target}]")
        elif j.entry is not None:  # a judgement of a ratchet line
            classname = _clean(result.ratchet_path)
            name = _clean(f"line {j.entry.lineno}: {j.entry.kernel} {j.entry.targets}")
        else:
            continue
        case = ET.SubElement(suite, "testcase", classname=classname, name=name)
        if j.fails(strict):
            failures += 1
            failure = ET.SubElement(case, "failure", message=_clean(f"{j.verdict.label}: {j.message}")[:1000],
                                    type=j.verdict.label)
            failure.text = _clean(j.message)
        elif j.verdict is Verdict.NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=_clean(j.message)[:1000])
            skipped += 1
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _clean(f"{j.verdict.label}: {j.message}")
    suite.set("tests", str(len(result.judgements)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="summary", value=_clean(audit_summary(result)))
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True) + b"\n"
