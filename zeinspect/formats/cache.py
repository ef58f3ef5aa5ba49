"""`zeinspect cache stats` and `cache prune`: each level of the build cache, one line each, or JSON."""

from __future__ import annotations

import json
import time
from typing import Any


def text(report: Any) -> str:
    """One line per level (app.cache.CacheReport): where, entries, bytes, dates, what was removed."""
    out = []
    for lv in report.levels:
        when = ""
        if lv.oldest is not None and lv.newest is not None:
            when = (f", written {time.strftime('%Y-%m-%d', time.gmtime(lv.oldest))} to "
                    f"{time.strftime('%Y-%m-%d', time.gmtime(lv.newest))}")
        bundles = f" (and {lv.bundles} bundles)" if lv.bundles else ""
        line = f"{lv.name}: {lv.where}: {lv.entries} entries{bundles}, {lv.bytes / 2**20:.1f} MiB{when}"
        if lv.older_format:
            line += f"; {lv.older_format} entries of older cache formats (prune removes them)"
        if lv.removed:
            line += f"; removed {lv.removed} entries, {lv.removed_bytes / 2**20:.1f} MiB"
        if lv.bound is not None:
            line += f"; bound {lv.bound / 2**20:.0f} MiB ($ZEINSPECT_CACHE_MAX_SIZE), entries and Triton artifacts"
        out.append(line)
    return "\n".join(out) + "\n"


def dumps(report: Any) -> str:
    return json.dumps([lv.to_json() for lv in report.levels], indent=1) + "\n"
