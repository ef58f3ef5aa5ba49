"""`zeinspect toolchain list`: each compiler found, or why a candidate was skipped.  Pure."""

from __future__ import annotations

import json

from ..model import Compiler

NONE_FOUND = "no compiler found; run `zeinspect toolchain fetch` or install Debian's intel-opencl-icd"


def text(found: list[tuple[Compiler | None, str]], multi: dict[str, bool] | None = None) -> str:
    """`multi`: compiler id -> whether it builds several modules per process (`ocloc multi`)."""
    out = [] if any(c for c, _ in found) else [NONE_FOUND]
    for c, why in found:
        if c is None:
            out.append(f"skipped: {why}")
            continue
        batching = ""
        if multi is not None and c.id in multi:
            batching = ("\n  batches: several modules per process (ocloc multi)" if multi[c.id] else
                        "\n  batches: none (no ocloc multi): one process per compile")
        out.append(f"{c.id}\n  path:    {c.path}\n  origin:  {c.origin}\n  ocloc:   {c.ocloc_version}\n"
                   f"  IGC:     {c.igc_version or 'unknown'}{batching}\n  targets: {', '.join(c.targets)}")
    return "".join(line + "\n" for line in out)


def dumps(found: list[tuple[Compiler | None, str]], multi: dict[str, bool] | None = None) -> str:
    return json.dumps([dict(c.to_json(), origin=c.origin, targets=list(c.targets),
                            **({"multi": multi[c.id]} if multi and c.id in multi else {}))
                       for c, _ in found if c is not None], indent=2) + "\n"
