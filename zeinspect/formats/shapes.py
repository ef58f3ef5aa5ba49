"""The shape table of seed 003's decision record, in text and JSON.  Pure functions."""

from __future__ import annotations

from ..judge.shapes import Cell, CellState, Row, Search
from ..model import family_label
from .common import safe

COLUMNS = ("shape", "targets that spill or use private memory (bytes per thread)", "fail to build",
           "not available / ignored")
TRAFFIC = "scratch per loop iteration (bytes, summed)"
"""The column shown when the search measured scratch traffic (no shape removes the scratch)."""


def _traffic_cell(row: Row) -> str:
    if not row.costs:
        return "-" if row.scratch_targets else "none"
    traffic = row.loop_traffic
    return "not measured" if traffic is None else (str(traffic) if traffic else "0 (outside loops only)")


def _row_cells(row: Row) -> list[str]:
    if row.changes_semantics:
        return ["(skipped: changes semantics)", "", ""]
    failed = [c.target for c in row.cells if c.state is CellState.FAILED]
    na = [c.target for c in row.cells if c.state is CellState.NOT_AVAILABLE]
    ignored = [c.target for c in row.cells if c.state is CellState.IGNORED]
    scratch = describe_cells(row.scratch_targets) if row.scratch_targets else "none"
    other = "; ".join(x for x in (f"not available: {compress_names(na)}" if na else "",
                                  f"ignored: {compress_names(ignored)}" if ignored else "") if x)
    return [scratch, compress_names(failed) if failed else "-", other or "-"]


def table(searches: list[Search]) -> str:
    out = []
    for s in searches:
        written = f"requires sub-group size {s.written_sub_group}" if s.written_sub_group else "no required sub-group size"
        out.append(f"kernel {safe(s.kernel)} ({safe(s.input)}): {written} as written; "
                   + ("depends on its sub-group size: " + "; ".join(s.depends) if s.depends
                      else "does not depend on its sub-group size"))
        measured = any(r.costs for r in s.rows)
        rows = [list(COLUMNS) + ([TRAFFIC] if measured else [])]
        for row in s.rows:
            label = row.shape.describe() + (" (as written)" if row.as_written else "")
            marker = "* " if s.winner is row else "  "
            rows.append([marker + label] + _row_cells(row) + ([_traffic_cell(row)] if measured else []))
        rows[0][0] = "  " + rows[0][0]
        width = max(len(r[0]) for r in rows)
        for r in rows:
            out.append("  " + r[0].ljust(width) + "  | " + " | ".join(r[1:]))
        out.append(f"  chosen (*): {s.why()}" if s.winner else "  no shape builds on every target")
        out += [f"  note: {safe(n)}" for n in s.notes]
        out.append("")
    return "\n".join(out)


def document(searches: list[Search]) -> dict:
    def row_json(row: Row) -> dict:
        return {
            "shape": row.shape.to_json(), "as_written": row.as_written, "changes_semantics": row.changes_semantics,
            "builds_everywhere": row.builds_everywhere, "targets_with_scratch": [c.target for c in row.scratch_targets],
            "total_scratch_bytes": row.total_scratch,
            "loop_traffic_bytes": row.loop_traffic, "costs": row.costs,
            "cells": [{"target": c.target, "state": c.state.value, "why": c.why, "scratch_bytes": c.scratch,
                       "report": c.report.to_json() if c.report else None} for c in row.cells],
        }

    return {"schema": "zeinspect.shape-search/1", "searches": [
        {"input": s.input, "kernel": s.kernel, "written_sub_group": s.written_sub_group,
         "depends_on_sub_group": s.depends, "compilers": s.compiler_ids,
         "rows": [row_json(r) for r in s.rows],
         "winner": s.winner.shape.to_json() if s.winner else None,
         "runner_up": s.runner_up.shape.to_json() if s.runner_up else None,
         "why": s.why(), "notes": s.notes} for s in searches]}


def compress_names(names: list[str]) -> str:
    """`adl-s, adl-p, adl-n` -> `adl-*`; single names stay."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name.rsplit("-", 1)[0] if "-" in name else name, []).append(name)
    return ", ".join(f"{prefix}-*" if len(members) > 1 else members[0] for prefix, members in groups.items())


def describe_cells(cells: list[Cell]) -> str:
    """`Xe-LP: tgllp, adl-*, rpl-* (2752); Xe-HPG: dg2-*, acm-* (2176)`, figures in bytes per thread."""
    if not cells:
        return "none"
    by_family: dict[str, list[Cell]] = {}
    for c in cells:
        by_family.setdefault(family_label(c.report.ip if c.report else None), []).append(c)
    parts = []
    for group in by_family.values():
        values = sorted({c.scratch for c in group})
        figure = f"{values[0]}" if len(values) == 1 else f"{values[0]} to {values[-1]}"
        parts.append(f"{compress_names([c.target for c in group])} ({figure})")
    return "; ".join(parts)
