"""`audit`, `ratchet update`, `shapes` and `fix`: the gate and the shapes that keep it green."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from ..errors import EXIT_OK, EXIT_TOOLCHAIN
from .common import CompileOptions, _emit, _fatal, _incidents, _own_stats, _write, audit_options, cli, shape_options


def _run_audit(compile: CompileOptions, config: str | None, strict: bool = False, **given: Any) -> Any:
    from ..app.audit import AuditRequest, run
    from ..judge.gate import load as load_gate

    overrides = dict(targets=compile.targets, options=compile.options, compiler=compile.compiler, strict=strict,
                     jobs=compile.jobs, use_cache=not compile.no_cache, timeout=compile.timeout,
                     scheduler=compile.scheduler, cache_url=compile.cache_url, cache_readonly=compile.cache_readonly,
                     **given)
    request = (AuditRequest.from_gate(load_gate(config), **overrides) if config
               else AuditRequest(**{k: v for k, v in overrides.items() if v is not None}))
    return request, compile.run("compiling", lambda p: run(request, progress=p))


@cli.command()
@audit_options
@click.option("--strict", is_flag=True, help="IMPROVED and STALE fail the gate too.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "sarif"]), default="text")
@click.option("--junit", default=None, type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option("--sarif", "sarif_to", default=None, type=click.Path(dir_okay=False),
              help="Also write SARIF 2.1.0 here (code scanning).")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the self-contained HTML report here.")
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels that pass.")
def audit(compile: CompileOptions, config: str | None, strict: bool, as_json: bool, fmt: str, junit: str | None,
          sarif_to: str | None, html_to: str | None, verbose: bool, **given: Any) -> None:
    """Judge kernels against the ratchet file: NEW, GREW and OVERFLOW fail the gate."""
    from ..formats.writers import AUDIT

    started = time.monotonic()
    request, got = _run_audit(compile, config, strict, **given)
    outputs = [("json" if as_json else fmt, None), ("junit" if junit else "", junit),
               ("sarif" if sarif_to else "", sarif_to), ("html" if html_to else "", html_to)]
    _emit(AUDIT, got, outputs, strict=request.strict, verbose=verbose, stats=_own_stats(got.collection.stats),
          seconds=time.monotonic() - started)
    _incidents(got.collection.incidents)
    sys.exit(got.exit_code(request.strict))


@cli.group()
def ratchet() -> None:
    """Maintain the ratchet file."""


@ratchet.command("update")
@audit_options
@click.option("--allow-grow", is_flag=True, help="Let entries grow and new scratch users be added.")
def ratchet_update(compile: CompileOptions, config: str | None, allow_grow: bool, **given: Any) -> None:
    """Rewrite the ratchet file to what was measured (tightening only, unless --allow-grow)."""
    from ..app.audit import update_ratchet
    from ..errors import EXIT_FINDING

    _, got = _run_audit(compile, config, **given)
    if got.collection.incidents:
        _incidents(got.collection.incidents)
        _fatal("not updating the ratchet: some compiles crashed or hung", EXIT_TOOLCHAIN)
    done = update_ratchet(got, allow_grow=allow_grow)
    for line in done.plan.changes + done.plan.grew + done.plan.kept:
        click.echo(line)
    for line in done.plan.refused:
        click.echo(f"refused: {line}")
    click.echo(f"wrote {done.path}" if done.wrote else f"{done.path} is up to date")
    sys.exit(EXIT_FINDING if done.plan.refused else EXIT_OK)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-k", "--kernel", "kernels", multiple=True, help="Search these kernels even if they use no scratch.")
@shape_options
@click.option("--json", "as_json", is_flag=True)
def shapes(file: str, kernels: tuple, compile: CompileOptions, allow_subgroup_change: bool, as_json: bool) -> None:
    """Compile every shape of each scratch-using kernel on every target and show the table."""
    from ..app.shapes import shapes as search_shapes
    from ..formats import shapes as shapes_fmt
    from ..formats.json import dumps

    searches = compile.run("compiling shapes", lambda p: search_shapes(
        [file], compile.config(), kernels=tuple(kernels), allow_subgroup_change=allow_subgroup_change, progress=p))
    if as_json:
        _write(dumps(shapes_fmt.document(searches)))
    else:
        _write(shapes_fmt.table(searches) if searches else "no kernel uses scratch memory on these targets\n")
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@shape_options
@click.option("--write", "write_to", default=None, type=click.Path(dir_okay=False),
              help="Write the decisions here (e.g. ratchet/shapes.yaml) and the remedied SPIR-V beside it.")
@click.option("--config", default=None, type=click.Path(dir_okay=False),
              help="Also fix what a gate configuration audits (its inputs, targets and Triton kernels).")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
def fix(paths: tuple, compile: CompileOptions, allow_subgroup_change: bool, write_to: str | None, config: str | None,
        as_json: bool) -> None:
    """Find a shape for every scratch-using kernel; record the decisions and remedied modules."""
    from ..app.audit import config_with_gate
    from ..app.shapes import fix as run_fix
    from ..formats import fix as fix_fmt
    from ..formats.json import dumps
    from ..judge.gate import load as load_gate

    gate = load_gate(config) if config else None
    aot = compile.config()
    if gate is not None:
        aot = config_with_gate(aot, gate, explicit_targets=bool(compile.targets))
    got = compile.run("compiling shapes", lambda p: run_fix(tuple(paths), aot, gate=gate, write_to=write_to,
                                                            allow_subgroup_change=allow_subgroup_change, progress=p))
    _write(dumps(fix_fmt.document(got.result, got.triton)) if as_json else fix_fmt.text(got.result, got.triton))
    for path in got.written:
        click.echo(f"wrote {path}", err=as_json)
    for d in got.differ:
        click.echo(f"zeinspect: error: {d.search.input}:{d.kernel}: the remedied kernel computes different results",
                   err=True)
    sys.exit(got.exit_code)


