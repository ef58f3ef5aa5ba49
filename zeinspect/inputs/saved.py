"""Saved zeinspect JSON documents (`--json` of kernel, inspect, triton, audit), read for `diff`.

A library's document is large: 100,000 reports of about 1.8 KB each, most of it logs,
commands, notes and the driver's properties, where a diff needs a dozen fields.  Python's
json module builds every one of those objects (2.4 s for 179 MB here), so the document is
first decoded by msgspec into typed structs that declare only the fields a diff reads:
msgspec skips the rest without building them (bench/diff.py gives the figures).  The
structs take any JSON value for each field (`Any`), so a field of the wrong kind still
reaches the judge, which calls it `unreadable` as before.  A document whose outer shape
does not fit (a report that is not an object, say) is read again by the json module, whose
path gives the one-line errors; the two paths give the same reports (tests/unit/inputs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..errors import InputError
from ..model import Remarks

SCHEMAS = ("zeinspect.report/", "zeinspect.audit/")


class _Report(msgspec.Struct, forbid_unknown_fields=False):
    """What judge.diff reads of a report (its identity, figures and status); nothing else is kept."""

    input: Any = None
    kernel: Any = None
    target: Any = None
    compiler: Any = None
    status: Any = None
    reason: Any = None
    spill_bytes: Any = None
    private_bytes: Any = None
    scratch_bytes: Any = None
    scratch_space_bytes: Any = None
    scratch_unknown: Any = None
    grf: Any = None
    simd: Any = None
    code_bytes: Any = None
    work_group_size: Any = None
    origin: Any = None
    occupancy: Any = None
    extra: Any = None
    options: Any = None
    environment: Any = None
    input_sha256: Any = None
    cost: Any = None
    retries: Any = None


REPORT_FIELDS: tuple[str, ...] = _Report.__struct_fields__
"""The fields kept of each report, on either reading path."""


class _Verdict(msgspec.Struct):
    report: _Report | None = None


class _Compiler(msgspec.Struct):
    id: Any = None


class _Document(msgspec.Struct):
    schema: Any = None
    reports: list[_Report] | None = None
    verdicts: list[_Verdict] | None = None
    incidents: list[Any] = []
    compilers: list[_Compiler] = []
    compile_times: list[Any] = []


_DECODER = msgspec.json.Decoder(_Document)


@dataclass
class SavedDocument(Remarks):
    schema: str
    reports: list[dict] = field(default_factory=list)
    """Each report with the fields in REPORT_FIELDS (None where it has none)."""
    compilers: list[str] = field(default_factory=list)
    compile_times: list[dict] = field(default_factory=list)
    """What each module's compile took per target, and IGC's retries in it (where recorded)."""


def read_saved(data: bytes, path: str) -> SavedDocument:
    """A saved document's reports (an audit's verdicts give theirs); one line naming `path`
    and exit 2 when it is not a zeinspect report or audit document, never a traceback."""
    try:
        doc = _DECODER.decode(data)
    except msgspec.DecodeError:  # not JSON, or JSON of another shape (ValidationError is one too):
        return _read_generic(data, path)  # the general path says what, naming the line
    _check_schema(doc.schema, path)
    if doc.reports is not None:
        structs = doc.reports
    elif doc.verdicts is not None:
        structs = [v.report for v in doc.verdicts if v.report is not None]
    else:
        raise InputError("has no reports (neither `reports` nor `verdicts`)", path=path)
    # Every field named, absent ones as None: the judge reads reports with `.get`, so a field
    # the document lacks and one it holds as null are the same to it.
    as_dict = msgspec.structs.asdict
    reports = [as_dict(r) for r in structs]
    return SavedDocument(doc.schema, reports, [str(c.id) for c in doc.compilers],
                         [t for t in doc.compile_times if isinstance(t, dict)],
                         incidents=[i for i in doc.incidents if isinstance(i, str)])


def _check_schema(schema: Any, path: str) -> None:
    if not isinstance(schema, str) or not schema.startswith(SCHEMAS):
        raise InputError(f"is not a zeinspect report or audit document (schema {schema!r})", path=path)


def _read_generic(data: bytes, path: str) -> SavedDocument:
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("is not a JSON document (not UTF-8 text)", path=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"is not a complete JSON document ({exc.msg} at line {exc.lineno})", path=path) from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    _check_schema(schema, path)
    if isinstance(doc.get("reports"), list):
        reports = doc["reports"]
    elif isinstance(doc.get("verdicts"), list):  # an audit: each verdict carries its report
        reports = [v["report"] for v in doc["verdicts"] if isinstance(v, dict) and isinstance(v.get("report"), dict)]
    else:
        raise InputError("has no reports (neither `reports` nor `verdicts`)", path=path)
    incidents = doc.get("incidents")
    compilers = doc.get("compilers")
    return SavedDocument(
        str(schema),
        [{k: r.get(k) for k in REPORT_FIELDS} for r in reports if isinstance(r, dict)],
        [str(c.get("id")) for c in compilers if isinstance(c, dict)] if isinstance(compilers, list) else [],
        incidents=[i for i in incidents if isinstance(i, str)] if isinstance(incidents, list) else [])
