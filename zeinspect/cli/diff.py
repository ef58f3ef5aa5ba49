"""`diff`: which kernels got worse between two builds, two compilers or two settings."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..levers import MODULE_LEVERS
from .common import TARGETS_HELP, _emit, _incidents, cache_url_options, cli

_LEVERS = [lv for lv in MODULE_LEVERS if lv.cli is not None]


def _cache_url_options(f: Any) -> Any:
    for option in reversed(cache_url_options()):
        f = option(f)
    return f


def _lever_options(f: Any) -> Any:
    """Each shape option, repeatable: given twice, one input is compared in the two shapes."""
    for lv in reversed(_LEVERS):
        spec = lv.cli
        assert spec is not None
        f = click.option(spec.flag, f"lever_{lv.name}", multiple=True, type=click.Choice(list(spec.choices)),
                         help=f"{spec.help} Twice: compare the input built each way.")(f)
    return f


@cli.command()
@click.argument("old", type=click.Path())
@click.argument("new", required=False, type=click.Path())
@click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP)
@click.option("--compiler", "compilers", multiple=True,
              help="The compiler to build with (id, path or version prefix); twice with one input: compare the two.")
@click.option("--options", "option_sets", multiple=True,
              help="Extra ocloc -options; twice with one input: compare the input built with each.")
@_lever_options
@click.option("-k", "--kernel", "kernels", multiple=True, help="Only these kernels (name or glob).")
@click.option("--min-bytes", type=click.IntRange(0, None), default=0,
              help="A scratch increase smaller than this many bytes per thread is not a regression.")
@click.option("--min-ratio", type=click.FloatRange(0, None), default=0.0,
              help="Nor is one smaller than this fraction of the old figure (0.1: ten per cent).")
@click.option("--format", "view", type=click.Choice(["text", "markdown", "json"]), default="text",
              help="text (the default), markdown (a pull-request comment) or json (zeinspect.diff/1).")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the heat map of the changes as one HTML page.")
@click.option("--sarif", "sarif_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the regressions as SARIF 2.1.0.")
@click.option("--explain", is_flag=True, help="For regressions: which lines spill, in both builds.")
@click.option("--verbose", "-v", is_flag=True, help="List every change, not only the worst regressions.")
@click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0, help="Parallel compiles (0: cores).")
@click.option("--no-cache", is_flag=True, help="Compile everything again; do not read or write the cache.")
@click.option("--timeout", type=click.FloatRange(1, None), default=None,
              help="Seconds before a compile counts as hung (default $ZEINSPECT_TIMEOUT or 600).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--scheduler", default=None, envvar="ZEINSPECT_SCHEDULER", metavar="tcp://HOST:PORT",
              help="Compile on this Dask cluster (default $ZEINSPECT_SCHEDULER).")
@_cache_url_options
def diff(old: str, new: str | None, targets: tuple, compilers: tuple, option_sets: tuple, kernels: tuple,
         min_bytes: int, min_ratio: float, view: str, as_json: bool, html_to: str | None, sarif_to: str | None,
         explain: bool, verbose: bool, jobs: int, no_cache: bool, timeout: float | None, quiet: bool,
         scheduler: str | None, cache_url: str | None, cache_readonly: bool, **levers: Any) -> None:
    """Compare kernels between two builds (OLD NEW: inputs of any kind or saved --json
    documents), or one input under two compilers (--compiler A --compiler B), two option
    strings or two shapes.  Exit 0: nothing got worse; 1: something did; 2: could not compare."""
    from ..app.diff import DiffRequest
    from ..app.diff import diff as run_diff
    from ..errors import EXIT_FINDING, EXIT_INPUT, EXIT_OK
    from ..formats.writers import DIFF
    from ..judge.diff import Thresholds
    from ..levers import Shape
    from ..probes.aot import AotConfig
    from .common import _progress

    values = {lv.name: levers.pop(f"lever_{lv.name}") for lv in _LEVERS}
    pair = [(name, v) for name, v in values.items() if v]
    shapes: tuple = ()
    base_shape = Shape()
    if pair:
        if len(pair) > 1 or len(pair[0][1]) > 2:
            raise click.UsageError("give one shape option, once or twice")
        name, given = pair[0]
        if len(given) == 2:
            shapes = tuple(Shape(**{name: v}) for v in given)
        else:
            base_shape = Shape(**{name: given[0]})
    config = AotConfig(targets=tuple(targets) or ("default",), compiler=compilers[0] if len(compilers) == 1 else None,
                       options=option_sets[0] if len(option_sets) == 1 else "", shape=base_shape,
                       kernels=tuple(kernels), jobs=jobs, use_cache=not no_cache, timeout=timeout, scheduler=scheduler,
                       cache_url=cache_url or None, cache_readonly=cache_readonly)
    request = DiffRequest(old=old, new=new, config=config, explicit_targets=bool(targets),
                          compilers=tuple(compilers) if len(compilers) > 1 or new is None else (),
                          options=tuple(option_sets) if len(option_sets) > 1 or new is None else (),
                          shapes=shapes, thresholds=Thresholds(min_bytes, min_ratio), explain=explain)
    update, close = _progress(quiet, "compiling")
    try:
        got = run_diff(request, progress=update)
    finally:
        close()
    _emit(DIFF, got,
          [("json" if as_json else view, None), ("html" if html_to else "", html_to),
           ("sarif" if sarif_to else "", sarif_to)], verbose=verbose)
    _incidents(got.result.incidents)
    # As diff(1): trouble (could not compare) wins over a difference.
    sys.exit(EXIT_INPUT if not got.result.trusted else EXIT_FINDING if got.result.regressed else EXIT_OK)
