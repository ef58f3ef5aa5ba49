"""Where a benchmark's figures go: bench/results/NAME.json, with the command, the date and the
machine.  The docs site renders every file on its benchmarks page and a guide shows one where it
says `<!-- zeinspect:bench NAME -->` (scripts/docs_hooks.py), so no figure is typed by hand."""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

CL_BUILD_PROGRAM_FAILURE = 245
"""ocloc's exit when a module does not build (-11, CL_BUILD_PROGRAM_FAILURE): kernels/ptss_overflow.cl's
scratch is over the cap on the targets that refuse it, which is what the corpus keeps it for."""


def measured(argv: list[str], env: dict | None = None, cwd: Path | None = None,
             ok: tuple[int, ...] = (0,)) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds of the process and everything it waited for, its exit, its
    stdout; an exit not in `ok` ends the benchmark with the command's last words."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(map(str, argv))}: exit {proc.returncode}: {proc.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout


def machine() -> str:
    from zeinspect.toolchain.compilers import discover

    compilers = ", ".join(c.id for c in discover()) or "no compiler"
    return f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, {compilers}"


def keep_others(name: str, rows: list[dict[str, Any]], key: Callable[[dict], Any]) -> list[dict[str, Any]]:
    """A run of some of a benchmark's subjects (`--only`): the others keep their last rows, in the
    last run's order (each naming the run that measured it: earlier_rows), and the fresh ones
    replace theirs."""
    fresh = {key(r): r for r in rows}
    kept = [fresh.pop(key(r), r) for r in earlier_rows(name, lambda r: True)]
    return kept + list(fresh.values())


def earlier_rows(name: str, keep: Callable[[dict], bool]) -> list[dict[str, Any]]:
    """The rows of the last results file that `keep` takes, each with the command and date of the
    run that measured it ("run"; a row kept twice keeps its first), since the file's own command
    and date are the newest run's."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return []
    last = json.loads(path.read_text())
    run = f"{last.get('command', '?')} ({last.get('date', '?')})"
    return [{**r, "run": r.get("run", run)} for r in last["rows"] if keep(r)]


def stamp(command: str | None = None) -> dict[str, str]:
    """What every results file starts with: the command that wrote it, the date, the machine."""
    argv = " ".join([f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    return {"command": command or argv, "date": datetime.date.today().isoformat(), "machine": machine()}


def write(name: str, title: str, rows: list[dict[str, Any]], *, note: str = "", command: str | None = None) -> Path:
    """The results of one run, replacing the last (git keeps the history)."""
    return write_doc(name, {"title": title, **stamp(command), "note": note, "rows": rows})


def write_doc(name: str, doc: dict[str, Any]) -> Path:
    """bench/results/NAME.json, whole or not at all (written beside it, then moved in)."""
    out = RESULTS / f"{name}.json"
    RESULTS.mkdir(exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)
    print(f"wrote {out.relative_to(RESULTS.parents[1])}")
    return out
