"""The writers: every output of every command, by result kind and format name.

A command asks for a list of (format, destination) pairs (the terminal is `None`) and
`emit` runs them in one loop.  A writer yields its text in pieces, so that a library's
100,000 verdicts are encoded one at a time and never held whole.  Pure functions of the
result; files are written whole or not at all (fileio.atomic_write).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..fileio import atomic_write


@dataclass(frozen=True)
class Options:
    strict: bool = False
    verbose: bool = False
    stats: dict = field(default_factory=dict)
    """The run's counters (compiles, cache hits, peak memory), as JSON documents carry them."""
    seconds: float | None = None
    isa: bool = False


Writer = Callable[[Any, Options], Iterable[str]]
# A writer takes the options every writer may need; most read only some of them.
# ruff: noqa: ARG001


def _notes(notes: list[str]) -> Iterator[str]:
    for note in notes:
        yield f"note: {note}\n"


# -- kernel, inspect --------------------------------------------------------------------------

def _ledger(result: Any) -> str | None:
    from .coverage import line

    return line(getattr(result, "coverage", None))


def _driver_first(result: Any) -> Iterator[str]:
    """Where the user's own driver (a profile's Kernel Properties) disagrees with zeinspect, that
    leads the report (formats.profile.mismatch_lines); the profile's section repeats it."""
    if getattr(result, "profiled", None) is not None:
        from .profile import mismatch_lines

        yield from (f"{line}\n" for line in mismatch_lines(result.profiled))


def _inspect_table(result: Any, opts: Options) -> Iterator[str]:
    from .text import table

    yield from _driver_first(result)
    yield table(result.collection.reports, verbose=opts.verbose, ledger=_ledger(result))
    yield from _paths_section(result)
    yield from _notes(result.collection.notes)
    yield from _explain_section(result)
    yield from _profile_section(result)


def _inspect_cards(result: Any, opts: Options) -> Iterator[str]:
    from .text import cards

    yield from _driver_first(result)
    yield cards(result.collection.reports)
    ledger = _ledger(result)
    if ledger:
        yield ledger + "\n"
    yield from _paths_section(result)
    yield from _notes(result.collection.notes)
    yield from _explain_section(result)
    yield from _profile_section(result)


def _paths_section(result: Any) -> Iterator[str]:
    """How a shipped product's kernels reach each device, and where the paths disagree."""
    from .paths import text

    yield from text(result.collection.reports, getattr(result, "paths", []))


def _paths_extra(result: Any) -> dict:
    from .paths import document

    found = document(result.collection.reports, getattr(result, "paths", []))
    return {"paths": found} if found else {}


def _explain_section(result: Any) -> Iterator[str]:
    if result.explained:
        from .explain import section

        yield section(result.explained)


def _profile_section(result: Any) -> Iterator[str]:
    if getattr(result, "profiled", None) is not None:
        from .profile import text

        yield text(result.profiled)


def _profile_extra(result: Any) -> dict:
    if getattr(result, "profiled", None) is None:
        return {}
    from .profile import document

    return {"profile": document(result.profiled)}


def _with_profile_html(page: str, result: Any) -> str:
    """The profile's table at the end of an HTML page (the biggest share first)."""
    if getattr(result, "profiled", None) is None:
        return page
    from .profile import html_section

    return page.replace("</body>", html_section(result.profiled) + "</body>", 1)


def _inspect_json(result: Any, opts: Options) -> Iterator[str]:
    from . import explain
    from .json import report_pieces

    got = result.collection
    coverage = getattr(result, "coverage", None)
    extra = {**({"explain": explain.document(result.explained)} if result.explained else {}),
             **_profile_extra(result), **_coverage_extra(result), **_paths_extra(result)} or None
    unread = coverage.incidents() if coverage is not None else []
    yield from report_pieces(got.reports, got.compilers, stats=opts.stats, notes=got.notes,
                             incidents=got.incidents + unread, extra=extra)


def _inspect_html(result: Any, opts: Options) -> Iterator[str]:
    from .html import page

    yield _with_profile_html(page(result.judged(), result.collection.compilers, strict=False, seconds=opts.seconds,
                                  ledger=_ledger(result), whole=not _unread(result)), result)


INSPECT: dict[str, Writer] = {"table": _inspect_table, "cards": _inspect_cards, "json": _inspect_json,
                              "html": _inspect_html}


# -- audit ------------------------------------------------------------------------------------

def _unread(run: Any) -> int:
    coverage = getattr(run, "coverage", None)
    if coverage is None:
        return 0
    totals = coverage.totals()
    return totals["unread"] + totals["unread_parts"]


def _coverage_extra(run: Any) -> dict:
    coverage = getattr(run, "coverage", None)
    return {"coverage": coverage.to_json()} if coverage is not None else {}


def _audit_text(run: Any, opts: Options) -> Iterator[str]:
    from .audit import text

    yield from _driver_first(run)
    yield text(run.result, strict=opts.strict, verbose=opts.verbose, ledger=_ledger(run), unread=_unread(run))
    yield from _paths_section(run)
    yield from _notes(run.collection.notes)
    yield from _profile_section(run)


def _audit_json(run: Any, opts: Options) -> Iterator[str]:
    from .audit import document_pieces

    got = run.collection
    yield from document_pieces(run.result, got.compilers, strict=opts.strict, stats=opts.stats, notes=got.notes,
                               incidents=run.incidents,
                               extra={**_profile_extra(run), **_coverage_extra(run), **_paths_extra(run)},
                               whole=not _unread(run))


def _audit_github(run: Any, opts: Options) -> Iterator[str]:
    from .audit import github

    yield github(run.result, strict=opts.strict)


def _audit_sarif(run: Any, opts: Options) -> Iterator[str]:
    from .sarif import dumps

    yield dumps(run.result, strict=opts.strict)


def _audit_junit(run: Any, opts: Options) -> Iterator[str]:
    from .junit import junit

    yield junit(run.result, strict=opts.strict).decode("utf-8")


def _audit_html(run: Any, opts: Options) -> Iterator[str]:
    from .html import page

    yield _with_profile_html(page(run.result, run.collection.compilers, strict=opts.strict, seconds=opts.seconds,
                                  ledger=_ledger(run), whole=not _unread(run)), run)


def _audit_markdown(run: Any, opts: Options) -> Iterator[str]:
    from .audit import markdown

    yield markdown(run.result, strict=opts.strict, ledger=_ledger(run), unread=_unread(run))


AUDIT: dict[str, Writer] = {"text": _audit_text, "json": _audit_json, "github": _audit_github,
                            "markdown": _audit_markdown, "sarif": _audit_sarif, "junit": _audit_junit,
                            "html": _audit_html}


# -- diff -------------------------------------------------------------------------------------

def _diff_text(run: Any, opts: Options) -> Iterator[str]:
    from .diff import text

    yield text(run, verbose=opts.verbose)


def _diff_markdown(run: Any, opts: Options) -> Iterator[str]:
    from .diff import markdown

    yield markdown(run)


def _diff_json(run: Any, opts: Options) -> Iterator[str]:
    from .diff import dumps

    yield dumps(run)


def _diff_html(run: Any, opts: Options) -> Iterator[str]:
    from .diff import page

    yield page(run)


def _diff_sarif(run: Any, opts: Options) -> Iterator[str]:
    from .diff import sarif
    from .json import encode

    yield encode(sarif(run), 1) + "\n"


DIFF: dict[str, Writer] = {"text": _diff_text, "markdown": _diff_markdown, "json": _diff_json,
                           "html": _diff_html, "sarif": _diff_sarif}


# -- explain ----------------------------------------------------------------------------------

def _explain_text(result: Any, opts: Options) -> Iterator[str]:
    from .explain import text

    yield text(result, isa=opts.isa)


def _explain_json(result: Any, opts: Options) -> Iterator[str]:
    from .explain import document
    from .json import dumps

    yield dumps(document(result, with_isa=opts.isa))


def _explain_html(result: Any, opts: Options) -> Iterator[str]:
    from .explain_html import page

    yield page(result)


EXPLAIN: dict[str, Writer] = {"text": _explain_text, "json": _explain_json, "html": _explain_html}


# -- the other commands: a text view and a JSON view each ----------------------------------------

def _json(document: Any) -> Iterator[str]:
    from .json import dumps

    yield dumps(document)


def _shapes_text(got: Any, opts: Options) -> Iterator[str]:
    from .shapes import table

    yield table(got.searches) if got.searches else "no kernel uses scratch memory on these targets\n"


def _shapes_json(got: Any, opts: Options) -> Iterator[str]:
    from .shapes import document

    yield from _json(document(got.searches))


def _fix_text(got: Any, opts: Options) -> Iterator[str]:
    from .fix import text

    yield text(got.result, got.sources)


def _fix_json(got: Any, opts: Options) -> Iterator[str]:
    from .fix import document

    yield from _json(document(got.result, got.sources))


def _library_fix_text(got: Any, opts: Options) -> Iterator[str]:
    from .library_fix import text

    yield text(got)


def _library_fix_json(got: Any, opts: Options) -> Iterator[str]:
    from .library_fix import document

    yield from _json(document(got))


def _devices_text(got: Any, opts: Options) -> Iterator[str]:
    from .devices import text

    yield text(got.found)


def _devices_json(got: Any, opts: Options) -> Iterator[str]:
    from .devices import dumps

    yield dumps(got.found)


def _occupancy_text(got: Any, opts: Options) -> Iterator[str]:
    from .occupancy import text

    yield text(got)


def _occupancy_json(got: Any, opts: Options) -> Iterator[str]:
    from .occupancy import document

    yield from _json(document(got))


def _toolchain_text(got: Any, opts: Options) -> Iterator[str]:
    from .toolchain import text

    yield text(got.found, got.multi)


def _toolchain_json(got: Any, opts: Options) -> Iterator[str]:
    from .toolchain import dumps

    yield dumps(got.found, got.multi)


def _cache_text(got: Any, opts: Options) -> Iterator[str]:
    from .cache import text

    yield text(got)


def _cache_json(got: Any, opts: Options) -> Iterator[str]:
    from .cache import dumps

    yield dumps(got)


def _runtime_text(got: Any, opts: Options) -> Iterator[str]:
    """`kernel --runtime`: the driver's builds as cards, or beside the AOT ones (--compare-aot)."""
    from .text import cards, side_by_side

    yield side_by_side(got.reports, got.aot) if got.compared else cards(got.reports)


def _runtime_json(got: Any, opts: Options) -> Iterator[str]:
    from .json import report_document

    doc = report_document(got.reports + got.aot, got.compilers, incidents=got.incidents)
    yield from _json({**doc, "runtime": {"device": got.device, "driver": got.driver}})


SHAPES: dict[str, Writer] = {"text": _shapes_text, "json": _shapes_json}
FIX: dict[str, Writer] = {"text": _fix_text, "json": _fix_json}
LIBRARY_FIX: dict[str, Writer] = {"text": _library_fix_text, "json": _library_fix_json}
DEVICES: dict[str, Writer] = {"text": _devices_text, "json": _devices_json}
OCCUPANCY: dict[str, Writer] = {"text": _occupancy_text, "json": _occupancy_json}
TOOLCHAIN: dict[str, Writer] = {"text": _toolchain_text, "json": _toolchain_json}
CACHE: dict[str, Writer] = {"text": _cache_text, "json": _cache_json}
RUNTIME: dict[str, Writer] = {"text": _runtime_text, "json": _runtime_json}


def emit(writers: dict[str, Writer], result: Any, outputs: list[tuple[str, str | None]], opts: Options,
         terminal: Callable[[str], None]) -> None:
    """Each requested (format, destination): the terminal for None, else a file written whole."""
    for fmt, dest in outputs:
        pieces = writers[fmt](result, opts)
        if dest is None:
            for piece in pieces:
                terminal(piece)
        else:
            atomic_write(dest, "".join(pieces).encode("utf-8"))
