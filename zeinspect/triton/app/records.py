"""The fix loop's records for Triton (`triton --run|--from-cache --fix --write FILE`): the chosen
lever per specialization and target, as `zeinspect fix` records a module's shapes, and the
ratchet lines for what no lever cleans (`--ratchet-lines FILE`, the same lines `zeinspect fix`
adds for a library).

A re-run reads its records back: a specialization whose IR and launch options are the ones
recorded, screened for the same targets with the same compilers, is built once in its recorded
shape instead of searched; where that build gives the recorded figures, the record stands
(`read_back`), else it is searched again (and the record rewritten).
"""

from __future__ import annotations

import datetime
import hashlib
from pathlib import Path

import yaml

from ...errors import InputError
from ...fileio import atomic_write
from ...judge.families import RatchetLine
from ..model.levers import TritonShape
from ..model.specialization import Specialization

SCHEMA = "zeinspect.triton-fixes/1"


def key_of(spec: Specialization) -> str:
    """What a record is of: the specialization's IR (its bytes), the options it was launched with
    (its stages too: configs that differ only in them have the same TTIR) and whether it was
    built staged (a gate's levered build)."""
    k = spec.kernel
    digest = hashlib.sha256()
    try:
        digest.update(Path(k.file).read_bytes())
    except OSError:
        digest.update(k.file.encode())
    digest.update(repr((k.kernel, k.num_warps, k.num_stages, k.threads_per_warp, k.grf_mode, spec.staged,
                        sorted(k.constexprs.items()))).encode())
    return digest.hexdigest()[:32]


def load(path: str | None, targets: tuple[str, ...], compilers: list[str]) -> dict[str, dict]:
    """The records of `path` that hold for these targets and compilers, by key (none if it does not exist)."""
    if not path or not Path(path).exists():
        return {}
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a zeinspect Triton fix record ({exc.__class__.__name__})") from exc
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"{path}: not a zeinspect Triton fix record (schema {SCHEMA} expected)")
    if sorted(doc.get("targets") or []) != sorted(targets) or sorted(doc.get("compilers") or []) != sorted(compilers):
        # Another run's decisions: never overwritten by this one (a file of its own for each).
        raise InputError(f"{path}: records for targets {', '.join(doc.get('targets') or [])} with compilers "
                         f"{', '.join(doc.get('compilers') or [])}, not these; give --write another file")
    return {r["key"]: r for r in doc.get("records") or [] if isinstance(r, dict) and "key" in r}


def recorded_shape(entry: dict) -> TritonShape:
    return TritonShape(**entry["record"]["shape"])


def same_figures(entry: dict, results: dict) -> bool:
    """The recorded shape's build gives the recorded figures on every target."""
    fields = ("status", "grf", "simd", "spill_bytes", "private_bytes")
    recorded = entry["record"]["results"]
    return set(recorded) == set(results) and all(
        all(recorded[t].get(f) == results[t].get(f) for f in fields) for t in recorded)


def save(path: str, fixes: list[dict], targets: tuple[str, ...], compilers: list[str]) -> str:
    doc = {"schema": SCHEMA, "written": datetime.date.today().isoformat(), "targets": sorted(targets),
           "compilers": sorted(compilers), "ratchet": [line.render() for line in ratchet_lines(fixes)],
           "records": [{k: fix[k] for k in ("key", "row", "kernel", "file", "template", "config", "as_launched_results",
                                            "record")}
                       for fix in fixes]}
    atomic_write(Path(path), yaml.safe_dump(doc, sort_keys=False, width=120).encode())
    return path


def ratchet_lines(fixes: list[dict]) -> list[RatchetLine]:
    """One line per specialization no lever cleans, with its scratch as launched (the most over
    the targets that build: what the gate sees until a change is made) and why; its row's name as
    a glob that matches it (glob_of)."""
    out = []
    for fix in fixes:
        found = fix["record"]
        if found["cleans"]:
            continue
        results = [r for r in (fix.get("as_launched_results") or {}).values() if r.get("status") == "ok"]
        spill = max((r.get("spill_bytes") or 0 for r in results), default=0)
        private = max((r.get("private_bytes") or 0 for r in results), default=0)
        reason = (f"no Triton lever cleans it; the least scratch is with {found['triton'] or 'the config as launched'}"
                  if found["found"] else "no Triton lever builds it on every target")
        out.append(RatchetLine(glob_of(fix["row"]), private, spill, reason))
    return out


def glob_of(row: str) -> str:
    """A row's name as a ratchet line's KERNEL: fnmatch's specials in brackets (`[` `*` `?`), and
    what a whitespace-separated line cannot hold (a space, `#`, which starts its comment) as `?`."""
    special = {"[": "[[]", "*": "[*]", "?": "[?]", " ": "?", "\t": "?", "#": "?"}
    return "".join(special.get(c, c) for c in row)
