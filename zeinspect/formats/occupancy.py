"""`zeinspect occupancy` as a table and as JSON.  Pure."""

from __future__ import annotations

from typing import Any

from .. import names
from .common import safe

COLUMNS = ["kernel", "target", "simd", "grf", "slm", "thr/EU", "max-wg", "wg", "wg/core", "occupancy", "limited by"]


def _cells(o: Any) -> list[str]:
    if o is None:
        return ["?"] * 6
    return [f"{o.threads_per_eu}/{o.max_threads_per_eu}", str(o.max_work_group_size),
            str(o.work_group_size) if o.work_group_size is not None else "-", str(o.work_groups_per_core),
            f"{o.xe_core_occupancy:.0%}", o.limited_by]


def summary(o: Any) -> str:
    """One line for a report's detail: `4 of 8 threads per EU, max work-group 512, ... limited by grf`."""
    if o is None:
        return "occupancy unknown (no register count or SIMD width)"
    line = (f"{o.threads_per_eu} of {o.max_threads_per_eu} threads per EU, max work-group {o.max_work_group_size}"
            + (f", work-group {o.work_group_size}" if o.work_group_size is not None else "")
            + f": {o.work_groups_per_core} per Xe-core, {o.xe_core_occupancy:.0%} occupancy, limited by {o.limited_by}")
    return line + (f"; next step: {o.next_step}" if o.next_step else "")


def text(result: Any) -> str:
    rows = [COLUMNS + (["what if"] if result.what_if.asked else [])]
    steps = []
    for row in result.rows:
        r = row.report
        line = [safe(names.short(r.kernel)), safe(r.target), str(r.simd or "?"), str(r.grf or "?"),
                str(r.slm_bytes or 0)] + _cells(row.occupancy)
        if result.what_if.asked:
            w = row.what_if
            line.append("?" if w is None else f"{w.threads_per_eu} thr/EU, max-wg {w.max_work_group_size}, "
                                              f"{w.work_groups_per_core} wg/core, {w.xe_core_occupancy:.0%}"
                                              + ("" if w.launchable else ", cannot launch"))
        rows.append(line)
        if row.occupancy is not None and row.occupancy.next_step:
            steps.append(f"{names.short(r.kernel)} on {r.target}: {row.occupancy.next_step}")
    widths = [max(len(x[i]) for x in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(x, widths)).rstrip() for x in rows]
    out.append("thr/EU = hardware threads per EU at its register count / the most an EU runs; max-wg = the largest "
               "work-group it can launch; wg = the work-group it requires or is launched with (- none: the "
               "largest); wg/core = such work-groups an Xe-core holds at once; occupancy = the share of an "
               "Xe-core's hardware threads they keep busy")
    out += [f"next step: {safe(s)}" for s in steps]
    return "\n".join(out) + "\n"


def document(result: Any) -> dict:
    return {"schema": "zeinspect.occupancy/1",
            "what_if": {"wg_size": result.what_if.wg_size, "slm_bytes": result.what_if.slm_bytes,
                        "grf_count": result.what_if.grf_count},
            "kernels": [{"input": row.report.input, "kernel": row.report.kernel, "target": row.report.target,
                         "ip": row.report.ip, "status": row.report.status.value, "simd": row.report.simd,
                         "grf": row.report.grf, "slm_bytes": row.report.slm_bytes,
                         "occupancy": row.occupancy.to_json() if row.occupancy else None,
                         "what_if": row.what_if.to_json() if row.what_if else None} for row in result.rows]}
