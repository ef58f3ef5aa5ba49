"""`diff`: which kernels got worse between two builds, two compilers or two settings."""

from __future__ import annotations

from typing import Any

import click

from ..levers import MODULE_LEVERS
from ..settings import SETTINGS
from .common import cli, emit, finish, given_settings, setting_options

_LEVERS = [lv for lv in MODULE_LEVERS if lv.cli is not None]
# The settings diff offers as every command does; --compiler and --options are its own (given
# twice, they are the two sides compared).
_OPTIONS, _READ = setting_options("run", "cache", "select", "profile")
_TARGETS, _READ_TARGETS = setting_options("target")


def _run_options(f: Any) -> Any:
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


def _targets_option(f: Any) -> Any:
    option = next(o for o, (_, s) in zip(_TARGETS, _READ_TARGETS) if s.name == "targets")
    return option(f)


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
@_targets_option
@click.option("--compiler", "compilers", multiple=True,
              help=f"{SETTINGS['compiler'].help} Twice with one input: compare the input built with each.")
@click.option("--options", "option_sets", multiple=True,
              help=f"{SETTINGS['options'].help} Twice with one input: compare the input built with each.")
@_lever_options
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
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@_run_options
def diff(old: str, new: str | None, compilers: tuple, option_sets: tuple,
         min_bytes: int, min_ratio: float, view: str, as_json: bool, html_to: str | None, sarif_to: str | None,
         explain: bool, verbose: bool, quiet: bool, **levers: Any) -> None:
    """Compare kernels between two builds (OLD NEW: inputs of any kind or saved --json
    documents), or one input under two compilers (--compiler A --compiler B), two option
    strings or two shapes.  Exit 0: nothing got worse; 1: something did; 2: could not compare."""
    from ..app.diff import DiffRequest, Thresholds, shapes_asked
    from ..app.diff import diff as run_diff
    from ..app.gate import settings
    from ..formats.writers import DIFF
    from ..triton import plugin as _triton_plugin  # noqa: F401 - registers Triton modules as an input (app.plugins)
    from .common import progress_display

    base_shape, shapes = shapes_asked({lv.name: levers.pop(f"lever_{lv.name}") for lv in _LEVERS})
    # The rest of **levers are the settings' options (targets, kernels, jobs, timeout, cache, environment).
    given = given_settings(levers, _READ + [r for r in _READ_TARGETS if r[1].name == "targets"])
    config = settings({**given, "compiler": compilers[0] if len(compilers) == 1 else None,
                       "options": option_sets[0] if len(option_sets) == 1 else None, "shape": base_shape})
    request = DiffRequest(old=old, new=new, config=config,
                          compilers=tuple(compilers) if len(compilers) > 1 or new is None else (),
                          options=tuple(option_sets) if len(option_sets) > 1 or new is None else (),
                          shapes=shapes, thresholds=Thresholds(min_bytes, min_ratio), explain=explain)
    update, close = progress_display(quiet, "compiling")
    try:
        got = run_diff(request, progress=update)
    finally:
        close()
    emit(DIFF, got,
          [("json" if as_json else view, None), ("html" if html_to else "", html_to),
           ("sarif" if sarif_to else "", sarif_to)], verbose=verbose)
    finish(got)
