"""Where a benchmark's figures go: bench/results/NAME.json, with the command, the date and the
machine.  The docs site renders every file on its benchmarks page and a guide shows one where it
says `<!-- zeinspect:bench NAME -->` (scripts/docs_hooks.py), so no figure is typed by hand."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    from zeinspect.toolchain.compilers import discover

    compilers = ", ".join(c.id for c in discover()) or "no compiler"
    return f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, {compilers}"


def keep_others(name: str, rows: list[dict[str, Any]], key: Callable[[dict], Any]) -> list[dict[str, Any]]:
    """A run of some of a benchmark's subjects (`--only`): the others keep their last rows, in the
    last run's order, and the fresh ones replace theirs."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return rows
    fresh = {key(r): r for r in rows}
    kept = [fresh.pop(key(r), r) for r in json.loads(path.read_text())["rows"]]
    return kept + list(fresh.values())


def write(name: str, title: str, rows: list[dict[str, Any]], *, note: str = "", command: str | None = None) -> Path:
    """The results of one run, replacing the last (git keeps the history)."""
    out = RESULTS / f"{name}.json"
    RESULTS.mkdir(exist_ok=True)
    argv = " ".join([f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    doc = {"title": title, "command": command or argv, "date": datetime.date.today().isoformat(),
           "machine": machine(), "note": note, "rows": rows}
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)
    print(f"wrote {out.relative_to(RESULTS.parents[1])}")
    return out
