"""`kernel`, `inspect`, `explain`, `extract` and `devices`: what the compiler and the driver say."""

from __future__ import annotations

from typing import Any, NoReturn

import click

from .common import CompileOptions, cli, compile_options, emit, finish, own_stats, probe_options, show


def _inspect(paths: list[str], compile: CompileOptions, shape: Any, as_json: bool, view: str,
             html_to: str | None = None, explain: bool = False, verbose: bool = False) -> NoReturn:
    from ..app.inspect import probe_paths
    from ..formats.writers import INSPECT

    config = compile.config(shape=shape)
    session = compile.session(config)
    got = compile.run("compiling", lambda p: probe_paths(paths, config, explain=explain, progress=p, session=session))
    emit(INSPECT, got, [("json" if as_json else view, None), ("html" if html_to else "", html_to)],
          verbose=verbose, stats=own_stats(got.collection.stats), seconds=got.seconds)
    finish(got)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@probe_options
@click.option("--runtime", is_flag=True, help="Build through Level Zero on a device, as an application would.")
@click.option("-d", "--device", "device", type=click.IntRange(0, None), default=0, help="Level Zero device index.")
@click.option("--simulate", default=None, metavar="PRODUCT",
              help="Start the driver's hardware-free device (tgllp, dg2, mtl, pvc): no GPU needed.")
@click.option("--compare-aot", is_flag=True, help="With --runtime: show the AOT figures beside the runtime ones.")
@click.option("--explain", "explain", is_flag=True, help="Also show which source lines spill (as `zeinspect explain`).")
def kernel(file: str, compile: CompileOptions, shape: Any, as_json: bool, runtime: bool, device: int,
           simulate: str | None, compare_aot: bool, explain: bool) -> None:
    """Show one card per kernel of FILE: every figure per target, the log, the command."""
    if not (runtime or simulate):
        _inspect([file], compile, shape, as_json, "cards", explain=explain)
    from ..app.inspect import runtime_kernel
    from ..formats.writers import RUNTIME

    config = compile.config(shape=shape)
    got = runtime_kernel(file, config, device=device, simulate=simulate, compare_aot=compare_aot,
                         session=compile.session(config) if compare_aot else None)
    show(RUNTIME, got, as_json)
    finish(got)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@probe_options
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the annotated source as one self-contained HTML page.")
@click.option("--isa", "with_isa", is_flag=True,
              help="Also show the ISA of each target's hottest line with the GRFs live at each instruction "
                   "(with --json: every instruction).")
def explain(paths: tuple, compile: CompileOptions, shape: Any, as_json: bool, html_to: str | None,
            with_isa: bool) -> None:
    """Show which source lines spill, and how full the register file is on each, per kernel and
    target, from IGC's own ISA (no GPU)."""
    from ..app.inspect import explain_paths
    from ..formats.writers import EXPLAIN

    config = compile.config(shape=shape)
    got = explain_paths(list(paths), config, session=compile.session(config))
    emit(EXPLAIN, got.explained, [("json" if as_json else "text", None), ("html" if html_to else "", html_to)],
          isa=with_isa)
    finish(got)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@probe_options
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels without findings.")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the self-contained HTML report here.")
def inspect(paths: tuple, compile: CompileOptions, shape: Any, as_json: bool, verbose: bool,
            html_to: str | None) -> None:
    """Show one table for many files: a summary, then kernels as rows, targets as columns."""
    _inspect(list(paths), compile, shape, as_json, "table", html_to, verbose=verbose)


@cli.command()
@click.option("--simulate", default=None, metavar="PRODUCT", help="List the driver's hardware-free device.")
@click.option("--json", "as_json", is_flag=True)
def devices(simulate: str | None, as_json: bool) -> None:
    """List Level Zero drivers and devices, and the SYCL devices dpctl sees."""
    from ..app.devices import listing
    from ..formats.writers import DEVICES

    got = listing(simulate)
    show(DEVICES, got, as_json)
    finish(got)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the images and manifest.json into (created if missing).")
def extract(file: str, out_dir: str) -> None:
    """Write every device image a SYCL AOT build embedded, with a manifest."""
    from ..app.extract import extract as do_extract

    got = do_extract(file, out_dir)
    for name in got.written:
        click.echo(f"wrote {name}")
    for line in got.skipped:
        click.echo(f"skipped: {line}")
    finish(got)




@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--wg-size", type=click.IntRange(1, 1 << 20), default=None,
              help="What if the work-group had this many work-items.")
@click.option("--slm", "slm_bytes", type=click.IntRange(0, 1 << 24), default=None,
              help="What if a work-group used this many bytes of shared local memory.")
@click.option("--grf", "grf_count", type=click.IntRange(32, 512), default=None,
              help="What if the kernel had this many registers (no recompile).")
@click.option("--json", "as_json", is_flag=True)
@compile_options(groups=("select",))
def occupancy(paths: tuple, wg_size: int | None, slm_bytes: int | None, grf_count: int | None,
              as_json: bool, compile: CompileOptions) -> None:
    """Show what each kernel's registers, SIMD width and shared local memory cost an Xe-core, and
    whether its work-group can launch, by the driver's and the compiler's own rules (no GPU)."""
    from ..app.occupancy import WhatIf
    from ..app.occupancy import occupancy as run
    from ..formats.writers import OCCUPANCY

    what_if = WhatIf(wg_size=wg_size, slm_bytes=slm_bytes, grf_count=grf_count)
    config = compile.config()
    session = compile.session(config)
    got = compile.run("compiling", lambda p: run(list(paths), config, what_if, progress=p, session=session))
    show(OCCUPANCY, got, as_json)
    finish(got)
