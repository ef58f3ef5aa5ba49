"""The recorded shape decisions (`ratchet/shapes.yaml`) and auditing kernels in their chosen shape.

    schema: zeinspect.shapes/1
    targets: [tgllp, ...]
    modules:
      kernels/sg32_accumulate.cl:          # paths relative to the current directory of `fix`
        artefact: remedied/sg32_accumulate.spv   # relative to this file
        build_options: {ocloc-26.27.039122/igc-2.40.14: ""}
        kernels:
          sg32_accumulate:
            shape: {sub_group: 0, grf: default}
            written_sub_group: 32
            cleans: true
            sycl: ...
            why: ...
            compilers: [...]
            results: {tgllp: {status: ok, simd: 8, grf: 128, spill_bytes: 0, private_bytes: 0}, ...}

The audit reads only `modules.<path>.kernels.<name>.shape`; the rest is the record a
reviewer reads.  This module reads and writes the record; the audit builds each kernel in its
recorded shape through probes.shaped.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ..errors import FormatError, InputError
from ..inputs.strict_yaml import load_yaml_strictly
from ..levers import Shape

SCHEMA = "zeinspect.shapes/1"


def load(path: str) -> dict[str, dict[str, Shape]]:
    """module path -> kernel -> chosen Shape."""
    from ..inputs.files import read_file

    return parse(read_file(path, "shapes file", 64 * 1024 * 1024), path)


def parse(text: bytes, path: str) -> dict[str, dict[str, Shape]]:
    try:
        doc = load_yaml_strictly(text, "shapes file")
    except FormatError as exc:
        raise InputError(str(exc), path=path) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"is not a {SCHEMA} document", path=path)
    out: dict[str, dict[str, Shape]] = {}
    modules = doc.get("modules") or {}
    if not isinstance(modules, dict):
        raise InputError("'modules' must be a mapping", path=path)
    for module, entry in modules.items():
        kernels = (entry or {}).get("kernels") if isinstance(entry, dict) else None
        if not isinstance(kernels, dict):
            raise InputError(f"module {module!r} has no 'kernels' mapping"[:200], path=path)
        for kernel, decision in kernels.items():
            shape = decision.get("shape") if isinstance(decision, dict) else None
            if not isinstance(shape, dict):
                raise InputError(f"kernel {kernel!r} has no shape"[:200], path=path)
            try:
                out.setdefault(os.path.normpath(str(module)), {})[str(kernel)] = Shape.from_json(shape)
            except ValueError as exc:
                raise InputError(f"kernel {kernel!r}: {exc}"[:200], path=path) from None
    return out


def load_section(path: str, name: str) -> dict:
    """One top-level section of a shapes file as written (`triton:`, which zeinspect.triton
    reads with its own levers), or {} when the file or the section is missing."""
    try:
        doc = load_yaml_strictly(Path(path).read_bytes(), "shapes file")
    except (OSError, FormatError):
        return {}
    section = doc.get(name) if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else {}


def dump(doc: dict) -> str:
    return "# Shape decisions recorded by `zeinspect fix`; the audit builds each kernel in its shape.\n" + \
        yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None)
