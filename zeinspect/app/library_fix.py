"""The fix loop on a product: every scratch user of a shipped library, the shape that cleans it,
and the change that makes it stay, by family.

A library's images are searched one module at a time (app.search.search_module: one compile
of the image per shape, for the targets the shape can change), each image rebuilt from what
it ships:
- a SPIR-V image with the runtime's own options for it, as the audit builds it;
- a native image (an ocloc fat binary) that carries a `generic_ir` member from that member,
  the SPIR-V the runtime would fall back on: the shapes it could have been built in;
- a native image without one is native-only: its shape was fixed when it was built, and the
  note says which build flag changes it.
The decisions are grouped by family and cause (judge.families): the change to make, what it
costs in occupancy, the ratchet lines for what no shape cleans.  `write_to` records the chosen
shapes as `zeinspect fix` records a module's (the audit in recorded shapes builds each image's
kernels in them); `ratchet_to` gets the ratchet lines.  The builds are cached: a second run
reads everything back.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..fileio import atomic_write
from ..inputs import Input, Reading, generic_ir_input, host_info, iter_host_images, iter_inputs
from ..inputs.kinds import InputKind
from ..inputs.spirv import kept_calls, private_arrays
from ..judge.families import Family, Member, RatchetLine, group, ratchet_lines
from ..judge.fix import Decision, FixResult, decide, document
from ..judge.shapes_file import dump
from ..model import Remarks
from ..probes.results import Progress
from ..probes.session import Session
from ..settings import Settings
from .outcome import Outcome
from .search import ModuleSearch, Scope, search_module
from .session import open_session

NATIVE_ONLY = ("native image: its shape was fixed when it was built; rebuild it in another shape "
               "(-Xs \"-options -ze-opt-large-register-file\" for 256 registers, or the kernel properties), "
               "or ship a SPIR-V image beside it (-fsycl-targets=spir64,...) for the runtime to build")


@dataclass
class ImageSearch:
    """One image of the library and how it was searched."""

    input: str
    source: str
    """`SPIR-V`, `generic_ir` (a native image's SPIR-V member) or `native-only`."""
    search: ModuleSearch | None = None
    note: str = ""


@dataclass
class LibraryFix(Remarks):
    images: list[ImageSearch] = field(default_factory=list)
    families: list[Family] = field(default_factory=list)
    ratchet: list[RatchetLine] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def compiles(self) -> int:
        return sum(i.search.compiles for i in self.images if i.search is not None)

    @property
    def members(self) -> list[Member]:
        return [m for f in self.families for m in f.members]

    @property
    def outcome(self) -> Outcome:
        """A search finds no fault of its own: its incidents (a crashed compile) are its only trouble."""
        return Outcome.of(0, self.incidents, self.notes)


def names_a_library(paths: list[str]) -> bool:
    """Whether the paths name a product (a package, a host file with device images, a native
    image, an image of a library, a folder holding any of them): what the library fix searches
    image by image, rather than the module fix (app.fix) a folder of sources gets."""
    from ..inputs import PRODUCT_KINDS, kind_of_path

    return any(kind in PRODUCT_KINDS for path in paths for kind in kind_of_path(path))


def fix_library(paths: list[str], config: Settings, *, write_to: str | None = None, ratchet_to: str | None = None,
                allow_subgroup_change: bool = False, progress: Progress | None = None, cost: bool = False,
                session: Session | None = None) -> LibraryFix:
    started = time.monotonic()
    session = session or open_session(config)
    plan = session.plan()
    out = LibraryFix(targets=[t.name for t in plan.targets])
    reading = Reading()
    members: list[Member] = []
    done = [0, 0]  # compiles made, compiles known to be wanted so far

    def step(made: int, wanted: int) -> None:
        if progress:
            progress(done[0] + made, done[1] + wanted)

    for image in _images(paths, reading, out):
        search_from, source = _source(image)
        if search_from is None:
            out.images.append(ImageSearch(image.path, "native-only", note=source))
            continue
        found = search_module(search_from, config, session, plan, progress=step,
                              scope=Scope(allow_subgroup_change=allow_subgroup_change, cost=cost))
        done[0] += found.compiles
        done[1] += found.compiles
        out.images.append(ImageSearch(image.path, source, found))
        out.notes += found.notes
        members += [_member(image.path, found, s) for s in found.searches]
    out.notes += reading.notes()
    out.incidents += reading.incidents
    out.families = group(members)
    out.ratchet = ratchet_lines(out.families)
    if write_to:
        out.written.append(write_decisions(out, write_to))
    if ratchet_to:
        out.written.append(write_ratchet(out.ratchet, ratchet_to))
    out.seconds = time.monotonic() - started
    return out


def _images(paths: list[str], reading: Reading, out: LibraryFix) -> Iterator[Input]:
    """Every image of the inputs, one at a time (a host file's as it reads them)."""
    for inp in iter_inputs(list(paths), reading):
        if inp.kind == InputKind.HOST:
            notes: list[str] = []
            yield from iter_host_images(inp, notes, host_info())
            out.notes += notes
        else:
            yield inp


def _source(image: Input) -> tuple[Input | None, str]:
    """What an image is searched from (and the name of that source), or None and why not."""
    if image.compilable:
        return image, "SPIR-V" if image.kind == InputKind.SPIRV else str(image.kind)
    if image.kind == InputKind.FATBIN:
        # Rebuilt as its native members were: the SPIR-V with the options they were built with.
        found = generic_ir_input(image)
        if found is not None:
            return found, "generic_ir"
    return None, NATIVE_ONLY


def _member(image: str, found: ModuleSearch, search: object) -> Member:
    from ..judge.shapes import Search

    assert isinstance(search, Search)
    targets = [c.target for c in search.rows[0].cells] if search.rows else []
    as_written = {t: r for t in targets if (r := found.as_written.get((search.kernel, t))) is not None}
    cause = next((r.cause for r in as_written.values() if r.cause is not None), None)
    member = Member(image, search, cause, as_written)
    if found.spirv:
        if cause == "private_arrays":
            member.private_arrays = private_arrays(found.spirv, search.kernel)
        elif cause == "stack_calls":
            # The module's own word first (DontInline, recursion, a pointer, an import); else what
            # IGC kept as calls, as the zebin's symbol table names them (KernelReport.callees).
            member.callees = kept_calls(found.spirv, search.kernel) or sorted(
                {c for r in as_written.values() for c in r.callees})
    return member


def decisions(fix: LibraryFix) -> FixResult:
    """The library's decisions as `zeinspect fix` records a module's, each verified by the very
    build its shape was chosen from (one compile of the image per shape)."""
    result = FixResult()
    for image in fix.images:
        if image.search is None:
            continue
        for search in image.search.searches:
            decision: Decision = decide(search)
            winner = search.winner
            if winner is not None:
                decision.verified = {c.target: c.report for c in winner.cells if c.report is not None}
            result.decisions.append(decision)
        result.untouched += [f"{image.input}:{k}" for k in image.search.clean]
    return result


def write_decisions(fix: LibraryFix, path: str) -> str:
    """The chosen shapes, the families' changes and the ratchet lines, as zeinspect.shapes/1."""
    doc = document(decisions(fix), None)
    doc["families"] = [f.to_json(fix.targets) for f in fix.families]
    doc["native_only"] = [i.input for i in fix.images if i.search is None]
    doc["ratchet"] = [line.render() for line in fix.ratchet]
    atomic_write(Path(path), dump(doc).encode())
    return path


def write_ratchet(lines: list[RatchetLine], path: str) -> str:
    """The ratchet lines for what no shape cleans, added to the file (a kernel or family it lists
    already keeps its line)."""
    from ..judge import ratchet as ratchet_mod

    target = Path(path)
    existing = target.read_text() if target.exists() else (
        f"# Written by `zeinspect fix` on {datetime.date.today().isoformat()}: what no shape cleans.\n"
        "# KERNEL  TARGETS  PRIVATE_BYTES  SPILL_BYTES  # reason\n")
    listed = {e.kernel for e in ratchet_mod.parse(existing, path).entries} if existing.strip() else set()
    added = [line.render() for line in lines if line.kernel not in listed]
    text = existing + ("" if existing.endswith("\n") or not existing else "\n") + "".join(f"{a}\n" for a in added)
    atomic_write(target, text.encode())
    return path
