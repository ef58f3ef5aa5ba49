"""`zeinspect toolchain list`: each compiler found, or why a candidate was skipped.  Pure."""

from __future__ import annotations

import json

from ..model import Compiler

NONE_FOUND = "no compiler found; run `zeinspect toolchain fetch` or install Debian's intel-opencl-icd"


def text(found: list[tuple[Compiler | None, str]]) -> str:
    out = [] if any(c for c, _ in found) else [NONE_FOUND]
    for c, why in found:
        if c is None:
            out.append(f"skipped: {why}")
            continue
        out.append(f"{c.id}\n  path:    {c.path}\n  origin:  {c.origin}\n  ocloc:   {c.ocloc_version}\n"
                   f"  IGC:     {c.igc_version or 'unknown'}\n  targets: {', '.join(c.targets)}")
    return "".join(line + "\n" for line in out)


def dumps(found: list[tuple[Compiler | None, str]]) -> str:
    return json.dumps([dict(c.to_json(), origin=c.origin, targets=list(c.targets)) for c, _ in found
                       if c is not None], indent=2) + "\n"
