"""`zeinspect extract FILE -o DIR`: every embedded device image, written under a safe name.

Names are an index, a sanitised label and a known extension (never a path taken from the
file); every write goes through `atomic_write` into DIR and is checked to stay inside it.
The manifest records, per image, the source section or record, offset, size, kind, target,
compression, archive member, the file written and its SHA-256 (or why it was skipped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError
from ..fileio import atomic_write, sha256
from ..inputs import read_input
from ..inputs.kinds import InputKind
from ..inputs.offload import iter_images, safe_name
from .outcome import Outcome


@dataclass(frozen=True)
class Extracted:
    written: list[str]
    """The files written (the images and the manifest)."""
    skipped: list[str]
    """An image not written, and why, one line each."""
    outcome: Outcome = Outcome(0)


def _target(img: Any) -> str | None:
    """What the image runs on: the zebin's IP, the fat binary's member IPs, or SPIR-V's 'any'."""
    from ..inputs.fatbin import read_members
    from ..inputs.zebin import read_zebin
    from ..toolchain.targets import name_for_ip

    try:
        if img.kind == InputKind.ZEBIN:
            ip = read_zebin(img.data, img.source).ip
            return name_for_ip(ip) if ip else None
        if img.kind == InputKind.FATBIN:
            return ",".join(sorted({name_for_ip(m.ip) for m in read_members(img.data, img.source) if m.ip}))
    except FormatError:
        return None
    if img.kind == InputKind.SPIRV:
        return "any (compiled at run time)"
    return img.arch


def extract(path: str, out_dir: str) -> Extracted:
    inp = read_input(path)
    if inp.kind != InputKind.HOST:
        raise InputError(f"is a {inp.kind}, not a host object, library or executable with device images", path=path)
    try:
        images = iter_images(inp.data, path)  # one image in memory at a time, however many
    except FormatError as exc:
        raise InputError(str(exc), path=path) from None
    root = Path(out_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder: {exc.strerror or exc}", path=out_dir) from None
    root = root.resolve()
    manifest, written, skipped = [], [], []
    for index, img in enumerate(images):
        entry = img.manifest()
        if img.skipped:
            skipped.append(f"{img.source}: {img.skipped}")
        else:
            name = safe_name(index, img)
            target = (root / name).resolve()
            if target.parent != root:  # cannot happen with safe_name; checked anyway
                raise InputError(f"refusing to write outside the output folder: {name!r}", path=out_dir)
            atomic_write(target, img.data)
            entry.update(file=name, sha256=sha256(img.data), bytes=len(img.data), target=_target(img))
            written.append(str(target))
        manifest.append(entry)
    atomic_write(root / "manifest.json", (json.dumps({"input": path, "images": manifest}, indent=2) + "\n").encode())
    written.append(str(root / "manifest.json"))
    return Extracted(written, skipped)
