"""`audit`, `ratchet update`, `shapes` and `fix`: the gate and the shapes that keep it green."""

from __future__ import annotations

import time
from typing import Any

import click

from ..errors import EXIT_TOOLCHAIN
from .common import (
    CompileOptions,
    audit_options,
    cli,
    emit,
    fatal,
    finish,
    own_stats,
    shape_options,
    show,
    show_incidents,
)


def _run_audit(compile: CompileOptions, config: str | None, *, paths: tuple, logs: tuple, runtime: bool,
               simulate: str | None) -> Any:
    from ..app.audit import request as audit_request
    from ..app.audit import run

    if config:
        from ..triton import plugin as _triton_plugin  # noqa: F401 - registers the gate's `triton:` entries
    request = audit_request(compile.given, config=config, paths=tuple(paths), logs=tuple(logs), runtime=runtime,
                            simulate=simulate)
    session = compile.session(request.settings)
    return request, compile.run("compiling", lambda p: run(request, progress=p, session=session))


@cli.command()
@audit_options(groups=("verdict",))
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "markdown", "sarif"]), default="text",
              help="text, json (zeinspect.audit/1), github (workflow annotations), markdown (a pull-request "
                   "comment or job summary) or sarif.")
@click.option("--junit", default=None, type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option("--sarif", "sarif_to", default=None, type=click.Path(dir_okay=False),
              help="Also write SARIF 2.1.0 here (code scanning).")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the self-contained HTML report here.")
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels that pass.")
def audit(compile: CompileOptions, config: str | None, as_json: bool, fmt: str, junit: str | None,
          sarif_to: str | None, html_to: str | None, verbose: bool, **given: Any) -> None:
    """Judge kernels against the ratchet file: NEW, GREW and OVERFLOW fail the gate."""
    from ..formats.writers import AUDIT

    started = time.monotonic()
    request, got = _run_audit(compile, config, **given)
    outputs = [("json" if as_json else fmt, None), ("junit" if junit else "", junit),
               ("sarif" if sarif_to else "", sarif_to), ("html" if html_to else "", html_to)]
    emit(AUDIT, got, outputs, strict=request.settings.strict, verbose=verbose,
          stats=own_stats(got.collection.stats), seconds=time.monotonic() - started)
    finish(got)


@cli.group()
def ratchet() -> None:
    """Maintain the ratchet file."""


@ratchet.command("update")
@audit_options
@click.option("--allow-grow", is_flag=True, help="Let entries grow and new scratch users be added.")
def ratchet_update(compile: CompileOptions, config: str | None, allow_grow: bool, **given: Any) -> None:
    """Rewrite the ratchet file to what was measured (tightening only, unless --allow-grow)."""
    from ..app.audit import update_ratchet

    _, got = _run_audit(compile, config, **given)
    if got.incidents:
        show_incidents(got.incidents)
        fatal("not updating the ratchet: some compiles crashed or hung, or declared kernels were not read",
              EXIT_TOOLCHAIN)
    done = update_ratchet(got, allow_grow=allow_grow)
    for line in done.plan.changes + done.plan.grew + done.plan.kept:
        click.echo(line)
    for line in done.plan.refused:
        click.echo(f"refused: {line}")
    click.echo(f"wrote {done.path}" if done.wrote else f"{done.path} is up to date")
    finish(done)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-k", "--kernel", "kernels", multiple=True, help="Search these kernels even if they use no scratch.")
@shape_options
@click.option("--cost", is_flag=True,
              help="Also measure each shape's scratch traffic in loops, from IGC's ISA of its build (done anyway "
                   "when no shape removes the scratch: the least traffic is then chosen).")
@click.option("--json", "as_json", is_flag=True)
def shapes(file: str, kernels: tuple, compile: CompileOptions, allow_subgroup_change: bool, cost: bool,
           as_json: bool) -> None:
    """Compile every shape of each scratch-using kernel on every target and show the table."""
    from ..app.shapes import shapes as search_shapes
    from ..formats.writers import SHAPES

    chosen = compile.config()
    session = compile.session(chosen)
    got = compile.run("compiling shapes", lambda p: search_shapes(
        [file], chosen, kernels=tuple(kernels), allow_subgroup_change=allow_subgroup_change, progress=p,
        cost=cost, session=session))
    show(SHAPES, got, as_json)
    finish(got)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@shape_options
@click.option("--write", "write_to", default=None, type=click.Path(dir_okay=False),
              help="Write the decisions here (e.g. ratchet/shapes.yaml) and the remedied SPIR-V beside it.")
@click.option("--ratchet-lines", "ratchet_to", default=None, type=click.Path(dir_okay=False),
              help="A library: add the ratchet lines for what no shape cleans to this file.")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="A library: also write the families table as one HTML page.")
@click.option("--cost", is_flag=True, help="A library: also measure each shape's scratch traffic in loops (dumping "
                                           "compiles per kernel: slower).")
@click.option("--config", default=None, type=click.Path(dir_okay=False),
              help="Also fix what a gate configuration audits (its inputs, targets and Triton kernels).")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
def fix(paths: tuple, compile: CompileOptions, allow_subgroup_change: bool, write_to: str | None,
        ratchet_to: str | None, html_to: str | None, cost: bool, config: str | None, as_json: bool) -> None:
    """Find a shape for every scratch-using kernel; record the decisions and remedied modules.

    A library (a wheel, a folder of libraries, a .so, a fat binary, one of its images) is searched
    image by image, one compile of the image per shape, and its decisions read by family: the
    change that makes each family's shape stay, its cost, and the ratchet lines for the rest."""
    from ..app.fix import fix as run_fix
    from ..app.gate import load_gate
    from ..app.library_fix import fix_library, names_a_library
    from ..formats.writers import FIX, LIBRARY_FIX

    if paths and not config and names_a_library(list(paths)):
        from ..fileio import atomic_write
        from ..formats import library_fix as library_fmt

        chosen = compile.config()
        session = compile.session(chosen)
        got_library = compile.run("compiling shapes", lambda p: fix_library(
            list(paths), chosen, write_to=write_to, ratchet_to=ratchet_to,
            allow_subgroup_change=allow_subgroup_change, progress=p, cost=cost, session=session))
        show(LIBRARY_FIX, got_library, as_json)
        if html_to:
            atomic_write(html_to, library_fmt.page(got_library).encode())
            got_library.written.append(html_to)
        for path in got_library.written:
            click.echo(f"wrote {path}", err=as_json)
        finish(got_library)
    if config:
        from ..triton import plugin as _triton_plugin  # noqa: F401 - registers the gate's `triton:` entries
    gate = load_gate(config) if config else None
    aot = compile.config(gate=gate)
    session = compile.session(aot)
    got = compile.run("compiling shapes", lambda p: run_fix(tuple(paths), aot, gate=gate, write_to=write_to,
                                                            allow_subgroup_change=allow_subgroup_change, progress=p,
                                                            session=session))
    show(FIX, got, as_json)
    for path in got.written:
        click.echo(f"wrote {path}", err=as_json)
    for d in got.differ:
        click.echo(f"zeinspect: error: {d.search.input}:{d.kernel}: the remedied kernel computes different results",
                   err=True)
    finish(got)
