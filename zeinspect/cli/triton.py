"""`triton`: a Triton kernel (or every config of its autotune) built offline and audited.

The options are the Triton levers' own (triton.model.levers.TRITON_LEVERS) and the settings of the
`triton` group (the build policy), beside what says which of the four ways in to take; the
request is built and screened by zeinspect.triton.app, and rendered by zeinspect.triton.views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..hardware import TRITON_TARGETS
from ..triton import plugin as _triton_plugin  # noqa: F401 - registers the Triton gate entries, inputs and settings
from .common import CompileOptions, cli, compile_options, finish, own_stats, show


def _triton_options(f: Callable) -> Callable:
    """One option per Triton lever that has one, and what the Triton screens take besides."""
    from ..triton.model.levers import TRITON_LEVERS

    for lv in reversed([lv for lv in TRITON_LEVERS if lv.cli is not None]):
        spec = lv.cli
        assert spec is not None
        f = (click.option(spec.flag, f"lever_{lv.name}", is_flag=True, default=None, help=spec.help) if spec.switch
             else click.option(spec.flag, f"lever_{lv.name}", type=click.Choice(list(spec.choices)), default=None,
                               help=spec.help))(f)
    for option in reversed((
        click.option("--signature", default="", help="Argument types: a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32"),
        click.option("--constexprs", default="", help="Constexpr values: M=64,N=128,K=128"),
        click.option("--artifacts", default=None, type=click.Path(file_okay=False), help="Keep TTGIR and SPIR-V here."),
        click.option("--autotune", is_flag=True, help="Screen every config of the kernel's @triton.autotune."),
        click.option("--fix", is_flag=True, help="With --autotune, --run or --from-cache: search the Triton levers "
                     "(staging, register file, threads per warp, warps) for each config or specialization with a "
                     "finding."),
        click.option("--write", "write_to", default=None, type=click.Path(dir_okay=False),
                     help="With --fix on --run or --from-cache: record the chosen lever per specialization and target "
                          "here (YAML); a re-run reads the records back."),
        click.option("--ratchet-lines", "ratchet_to", default=None, type=click.Path(dir_okay=False),
                     help="With --fix on --run or --from-cache: add the ratchet lines for what no lever cleans to "
                          "this file."),
        click.option("--explain", is_flag=True, help="Also show which Python lines spill, and how full the register "
                     "file is on each."),
        click.option("--list", "list_only", is_flag=True, help="With FILE.py or DIR: list the launched kernels and the "
                     "values each needs, compiling nothing."),
        click.option("--run", is_flag=True, help="Run the command after `--` (a library's tests, examples, a script), "
                     "capture every kernel it launches, as Triton specialized it, and screen each on the targets; "
                     "no GPU needed."),
        click.option("--run-timeout", type=click.FloatRange(1, None), default=None, metavar="SECONDS",
                     help="With --run: stop the command after this long (what it launched until then is screened)."),
        click.option("--from-cache", "cache_dir", default=None, metavar="DIR",
                     help="Screen every kernel in a Triton cache folder (written wherever Triton ran: an Intel laptop, "
                          "a CUDA machine, Inductor) on the targets, from its TTIR and the options it was compiled "
                          "with."),
        click.option("--json", "as_json", is_flag=True),
    )):
        f = option(f)
    return f


@cli.command()
@click.argument("spec", metavar="FILE.py:KERNEL|FILE.py|DIR|-- CMD...", nargs=-1)
@_triton_options
@compile_options(groups=("triton", "measure", "profile"))
def triton(spec: tuple, as_json: bool, compile: CompileOptions, **given: Any) -> None:
    """Compile a @triton.jit kernel offline for each target and audit what IGC made of it;
    with FILE.py or DIR, every kernel the modules launch.

    The module is loaded without running its program code (zeinspect.triton.load.loader): torch
    and other packages that are not installed do not stop it.  Values not given are the
    kernel's defaults, its autotune configs', or those its module's own code launches it with;
    `--signature '*fp16'` types every pointer.  KERNEL.NAME=VALUE gives a value to one kernel.

    With --run, `zeinspect triton --run -- CMD ARGS...` runs the library's own code instead and
    screens every kernel it launches, at the values it launches it with.  With --from-cache DIR,
    every kernel a Triton cache holds, built from its TTIR with the options it was compiled with."""
    from ..triton import app

    req = app.request(tuple(spec), compile.config(default_targets=TRITON_TARGETS), given)
    session = compile.session(req.settings)
    got = compile.run("compiling", lambda p: app.screen_request(req, progress=p, session=session))
    from ..triton import views  # imported here: with --run, the screen's modules load while the command runs

    show(views.TRITON, (req, got), as_json, stats=own_stats(got.stats))
    finish(got)
