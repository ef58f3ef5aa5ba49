"""The command line: parse, call the library, print, exit.  Nothing else lives here.

Exit codes (README "Exit codes"): 0 fine; 1 a kernel did not build / the gate failed;
2 usage or input error; 3 toolchain error (no compiler, a compiler crash or hang).
Heavy modules are imported inside the commands so that `zeinspect --help` starts fast.
Every view is a pure function in formats/; the options every compiling command shares are
declared once (`compile_options`) and become one `AotConfig` (`CompileOptions.config`).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import click

from . import __version__
from .errors import EXIT_FINDING, EXIT_INPUT, EXIT_OK, EXIT_TOOLCHAIN, ZeinspectError

TARGETS_HELP = ("Targets: ocloc names, IP versions (12.70.4), `default` (19 AOT targets) or a family "
                "(xe-lp, xe-hpg, xe-lpg, xe2); comma-separated or repeated.")
TRITON_TARGETS = ("arl-s", "mtl-u", "lnl-m", "bmg-g21")


def _fatal(message: str, code: int) -> None:
    click.echo(f"zeinspect: error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def _progress(quiet: bool, label: str):
    """A progress callback drawing on stderr, or None when quiet or not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None, lambda: None
    state: dict[str, Any] = {"bar": None}

    def update(done: int, total: int):
        if state["bar"] is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            state["bar"] = bar
        state["bar"].update(done - state["bar"].pos)

    def close():
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)

    return update, close


@dataclass(frozen=True)
class CompileOptions:
    """What every compiling command takes, parsed once."""

    targets: tuple[str, ...]
    compiler: str | None
    options: str
    jobs: int
    no_cache: bool
    timeout: float | None
    quiet: bool
    scheduler: str | None = None

    def config(self, default_targets: tuple[str, ...] = ("default",), **fields):
        """The one AotConfig of a command: its options, then what the command adds."""
        from .probes.aot import AotConfig

        base = dict(targets=self.targets or default_targets, compiler=self.compiler, options=self.options,
                    jobs=self.jobs, use_cache=not self.no_cache, timeout=self.timeout, scheduler=self.scheduler)
        return AotConfig(**{**base, **fields})

    def progress(self, label: str):
        return _progress(self.quiet, label)


def compile_options(f):
    """Declare the shared options and hand the command one `CompileOptions` as `compile`."""

    @functools.wraps(f)
    def command(*args, targets, compiler, options, jobs, no_cache, timeout, quiet, scheduler, **kwargs):
        return f(*args, compile=CompileOptions(tuple(targets), compiler, options, jobs, no_cache, timeout, quiet,
                                               scheduler), **kwargs)

    for option in reversed((
        click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP),
        click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix)."),
        click.option("--options", default="", help="Extra ocloc -options for every compile (the front end's too)."),
        click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0, help="Parallel compiles (0: cores)."),
        click.option("--no-cache", is_flag=True, help="Compile everything again; do not read or write the cache."),
        click.option("--timeout", type=click.FloatRange(1, None), default=None,
                     help="Seconds before a compile counts as hung (default $ZEINSPECT_TIMEOUT or 600); "
                     "questions to the compiler get at most a minute of it."),
        click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        click.option("--scheduler", default=None, envvar="ZEINSPECT_SCHEDULER", metavar="tcp://HOST:PORT",
                     help="Compile on this Dask cluster (default $ZEINSPECT_SCHEDULER; needs zeinspect[dask])."),
    )):
        command = option(command)
    return command


def probe_options(f):
    """What to look at and how to build it: `kernel` and `inspect`."""
    for option in reversed((
        click.option("-k", "--kernel", "kernels", multiple=True, help="Only these kernels (name or glob)."),
        click.option("--grf", type=click.Choice(["default", "128", "256", "auto"]), default="default",
                     help="Register file mode."),
        click.option("--sub-group", "sub_group", type=click.Choice(["0", "8", "16", "32"]), default=None,
                     help="Require this sub-group size (0: none, the compiler's choice) by rewriting the SPIR-V."),
        click.option("--json", "as_json", is_flag=True, help="Print the zeinspect.report/1 JSON document."),
    )):
        f = option(f)
    return compile_options(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="zeinspect")
def cli():
    """Find, gate and remove scratch memory use (spills, private memory) in Intel GPU kernels."""


def _write(text: str) -> None:
    click.echo(text, nl=False)


def _own_stats(stats) -> dict:
    """The probe's counters plus zeinspect's own peak memory (not its compilers')."""
    import resource

    return {**stats.to_json(), "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _exit_code(reports, incidents) -> int:
    from .model import Status

    for incident in incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    if incidents:
        return EXIT_TOOLCHAIN
    return EXIT_FINDING if any(r.status is not Status.OK and r.applicable for r in reports) else EXIT_OK


def _probe_and_print(paths, compile: CompileOptions, kernels, grf, sub_group, as_json, render,
                     html_to: str | None = None, explain: bool = False) -> int:
    """Probe every input (sources compiled for the targets, binaries read as they are) and print."""
    from .formats.json import write_report_document
    from .model import Shape
    from .probes.collect import collect_reports

    started = time.monotonic()
    config = compile.config(shape=Shape(grf=grf, sub_group=int(sub_group) if sub_group is not None else None),
                            kernels=tuple(kernels))
    update, close = compile.progress("compiling")
    try:
        got = collect_reports(list(paths), config, explicit_targets=bool(compile.targets), progress=update)
    finally:
        close()
    explained = _explain(paths, compile, kernels, grf, sub_group) if explain else None
    if as_json:
        from .formats import explain as explain_fmt

        write_report_document(got.reports, got.compilers, _write, stats=_own_stats(got.stats), notes=got.notes,
                              incidents=got.incidents,
                              extra={"explain": explain_fmt.document(explained)} if explained else None)
    else:
        _write(render(got.reports))
        for note in got.notes:
            click.echo(f"note: {note}")
        if explained:
            from .formats import explain as explain_fmt

            _write(explain_fmt.section(explained))
    if html_to:
        from .judge.audit import audit
        from .judge.ratchet import Ratchet

        # Without a ratchet every scratch user is NEW: the page shows what a gate would see.
        judged = audit(got.reports, Ratchet(path="(no ratchet file)", dialect="native"), got.compilers)
        _write_html(html_to, judged, got.compilers, False, time.monotonic() - started)
    return _exit_code(got.reports, got.incidents)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@probe_options
@click.option("--runtime", is_flag=True, help="Build through Level Zero on a device, as an application would.")
@click.option("-d", "--device", "device", type=click.IntRange(0, None), default=0, help="Level Zero device index.")
@click.option("--simulate", default=None, metavar="PRODUCT",
              help="Start the driver's hardware-free device (tgllp, dg2, mtl, pvc): no GPU needed.")
@click.option("--compare-aot", is_flag=True, help="With --runtime: show the AOT figures beside the runtime ones.")
@click.option("--explain", "explain", is_flag=True, help="Also show which source lines spill (as `zeinspect explain`).")
def kernel(file, compile, kernels, grf, sub_group, as_json, runtime, device, simulate, compare_aot, explain):
    """Show one card per kernel of FILE: every figure per target, the log, the command."""
    from .formats.text import cards

    if runtime or simulate:
        sys.exit(_runtime_kernel(file, compile, kernels, grf, as_json, device, simulate, compare_aot))
    sys.exit(_probe_and_print([file], compile, kernels, grf, sub_group, as_json, cards, explain=explain))


def _runtime_kernel(file, compile: CompileOptions, kernels, grf, as_json, device, simulate, compare_aot) -> int:
    from .errors import UsageError
    from .formats.json import dumps, report_document
    from .formats.text import cards, side_by_side
    from .inputs import read_input
    from .probes.runtime import DEFAULT_TIMEOUT, RuntimeConfig, probe

    if grf != "default":
        raise UsageError("--grf applies to AOT compiles; give the driver its flags with --options")
    inp = read_input(file)
    result = probe([inp], RuntimeConfig(simulate=simulate, device=device, build_flags=compile.options,
                                        kernels=tuple(kernels), timeout=compile.timeout or DEFAULT_TIMEOUT))
    aot, compilers = _aot_for_runtime(inp, result, compile) if compare_aot else ([], [])
    if as_json:
        doc = report_document(result.reports + aot, compilers, incidents=result.incidents)
        doc["runtime"] = {"device": result.device, "driver": result.driver}
        _write(dumps(doc))
    else:
        _write(side_by_side(result.reports, aot) if compare_aot else cards(result.reports))
    return _exit_code(result.reports, result.incidents)


def _aot_for_runtime(inp, result, compile: CompileOptions):
    """The AOT probe for the runtime device's IP, with the compiler of the driver's own build."""
    from .probes.aot import probe as aot_probe
    from .probes.aot import resolve_compilers
    from .toolchain.compilers import built_with_driver

    ip = next((r.ip for r in result.reports if r.ip), None)
    if ip is None:
        return [], []
    config = compile.config(targets=(ip,))
    found = resolve_compilers(config)
    got = aot_probe([inp], config, compilers=built_with_driver(found, result.driver.get("version"), ip) or found)
    return got.reports, got.compilers


def _explain(paths, compile: CompileOptions, kernels, grf, sub_group):
    from .errors import UsageError
    from .inputs import collect
    from .model import Shape
    from .probes.explain import explain as run_explain

    if sub_group is not None:
        raise UsageError("explain reads the module as written: rewrite its sub-group size with `zeinspect fix` first")
    return run_explain(collect(list(paths)), compile.config(shape=Shape(grf=grf), kernels=tuple(kernels)))


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@probe_options
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the annotated source as one self-contained HTML page.")
@click.option("--isa", "with_isa", is_flag=True,
              help="Also show the ISA of each target's hottest line with the GRFs live at each instruction "
                   "(with --json: every instruction).")
def explain(paths, compile, kernels, grf, sub_group, as_json, html_to, with_isa):
    """Show which source lines spill, and how full the register file is on each, per kernel and
    target, from IGC's own ISA (no GPU)."""
    from .formats import explain as explain_fmt
    from .formats.json import dumps

    result = _explain(paths, compile, kernels, grf, sub_group)
    _write(dumps(explain_fmt.document(result, with_isa=with_isa)) if as_json
           else explain_fmt.text(result, isa=with_isa))
    if html_to:
        _write_explain_html(html_to, result)
    for incident in result.incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    sys.exit(EXIT_TOOLCHAIN if result.incidents else EXIT_FINDING if result.failures else EXIT_OK)


def _write_explain_html(path: str, result) -> None:
    from .fileio import atomic_write
    from .formats.explain_html import page

    atomic_write(path, page(result).encode())


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@probe_options
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels without findings.")
@click.option("--html", "html_to", default=None, type=click.Path(dir_okay=False),
              help="Also write the self-contained HTML report here.")
def inspect(paths, compile, kernels, grf, sub_group, as_json, verbose, html_to):
    """Show one table for many files: a summary, then kernels as rows, targets as columns."""
    from .formats.text import table

    sys.exit(_probe_and_print(list(paths), compile, kernels, grf, sub_group, as_json,
                              lambda reports: table(reports, verbose=verbose), html_to))


def audit_options(f):
    for option in reversed((
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--log", "logs", multiple=True, type=click.Path(dir_okay=False),
                     help="A build log to judge without compiling (repeatable)."),
        click.option("--ratchet", default=None, type=click.Path(dir_okay=False),
                     help="The ratchet file (default: scratch_ratchet.txt, or the gate configuration's)."),
        click.option("--config", default=None, type=click.Path(dir_okay=False),
                     help="A gate configuration (YAML) saying what to audit."),
        click.option("--shapes", default=None, type=click.Path(dir_okay=False),
                     help="Judge each kernel in the shape recorded here (zeinspect fix --write)."),
        click.option("--runtime", is_flag=True, help="Build through Level Zero on a device instead of ocloc."),
        click.option("--simulate", default=None, metavar="PRODUCT",
                     help="With --runtime: the driver's hardware-free device (tgllp, dg2, mtl, pvc)."),
    )):
        f = option(f)
    return compile_options(f)


def _run_audit(compile: CompileOptions, paths, logs, ratchet, config, shapes, runtime, simulate, strict=False):
    from .judge.gate import load as load_gate
    from .judge.run import AuditRequest, run

    overrides = dict(paths=tuple(paths), logs=tuple(logs), ratchet=ratchet, targets=compile.targets,
                     options=compile.options, compiler=compile.compiler, shapes=shapes, strict=strict,
                     jobs=compile.jobs, use_cache=not compile.no_cache, timeout=compile.timeout, runtime=runtime,
                     simulate=simulate, scheduler=compile.scheduler)
    request = (AuditRequest.from_gate(load_gate(config), **overrides) if config
               else AuditRequest(**{k: v for k, v in overrides.items() if v is not None}))
    update, close = compile.progress("compiling")
    try:
        return request, run(request, progress=update)
    finally:
        close()


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
def audit(paths, logs, ratchet, config, shapes, runtime, simulate, compile, strict, as_json, fmt, junit, sarif_to,
          html_to, verbose):
    """Judge kernels against the ratchet file: NEW, GREW and OVERFLOW fail the gate."""
    from .fileio import atomic_write
    from .formats import audit as audit_fmt
    from .formats import sarif

    started = time.monotonic()
    request, got = _run_audit(compile, paths, logs, ratchet, config, shapes, runtime, simulate, strict)
    strict = request.strict
    fmt = "json" if as_json else fmt
    if fmt == "sarif":
        _write(sarif.dumps(got.result, strict=strict))
    elif fmt == "json":
        audit_fmt.write_document(got.result, got.collection.compilers, _write, strict=strict,
                                 stats=_own_stats(got.collection.stats), notes=got.collection.notes,
                                 incidents=got.collection.incidents)
    elif fmt == "github":
        _write(audit_fmt.github(got.result, strict=strict))
    else:
        _write(audit_fmt.text(got.result, strict=strict, verbose=verbose))
        for note in got.collection.notes:
            click.echo(f"note: {note}")
    if junit:
        from .formats.junit import junit as junit_xml

        atomic_write(junit, junit_xml(got.result, strict=strict))
    if sarif_to:
        atomic_write(sarif_to, sarif.dumps(got.result, strict=strict).encode())
    if html_to:
        _write_html(html_to, got.result, got.collection.compilers, strict, time.monotonic() - started)
    for incident in got.collection.incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    if got.collection.incidents:
        sys.exit(EXIT_TOOLCHAIN)
    sys.exit(EXIT_OK if got.result.passed(strict) else EXIT_FINDING)


def _write_html(path: str, result, compilers, strict: bool, seconds: float) -> None:
    from .fileio import atomic_write
    from .formats.html import page

    atomic_write(path, page(result, compilers, strict=strict, seconds=seconds).encode())


@cli.group()
def ratchet():
    """Maintain the ratchet file."""


@ratchet.command("update")
@audit_options
@click.option("--allow-grow", is_flag=True, help="Let entries grow and new scratch users be added.")
def ratchet_update(paths, logs, ratchet, config, shapes, runtime, simulate, compile, allow_grow):
    """Rewrite the ratchet file to what was measured (tightening only, unless --allow-grow)."""
    from .fileio import atomic_write
    from .judge.update import update

    _, got = _run_audit(compile, paths, logs, ratchet, config, shapes, runtime, simulate)
    if got.collection.incidents:
        for incident in got.collection.incidents:
            click.echo(f"zeinspect: error: {incident}", err=True)
        _fatal("not updating the ratchet: some compiles crashed or hung", EXIT_TOOLCHAIN)
    before = got.ratchet.render()
    plan = update(got.ratchet, got.result, allow_grow=allow_grow)
    after = got.ratchet.render()
    for line in plan.changes + plan.grew + plan.kept:
        click.echo(line)
    for line in plan.refused:
        click.echo(f"refused: {line}")
    if after != before:
        atomic_write(got.ratchet.path, after.encode("utf-8"))
        click.echo(f"wrote {got.ratchet.path}")
    else:
        click.echo(f"{got.ratchet.path} is up to date")
    sys.exit(EXIT_FINDING if plan.refused else EXIT_OK)


def _shape_setup(paths, compile: CompileOptions):
    from .inputs import collect
    from .probes.aot import resolve_compilers
    from .toolchain.targets import plan_targets

    inputs = collect(list(paths))
    config = compile.config()
    compilers = resolve_compilers(config)
    return inputs, config, compilers, plan_targets(config.targets, compilers)


def shape_options(f):
    f = click.option("--allow-subgroup-change", is_flag=True,
                     help="Also try other sub-group sizes for kernels whose code depends on theirs.")(f)
    return compile_options(f)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-k", "--kernel", "kernels", multiple=True, help="Search these kernels even if they use no scratch.")
@shape_options
@click.option("--json", "as_json", is_flag=True)
def shapes(file, kernels, compile, allow_subgroup_change, as_json):
    """Compile every shape of each scratch-using kernel on every target and show the table."""
    from .formats import shapes as shapes_fmt
    from .formats.json import dumps
    from .judge.fix import scratch_users
    from .judge.shapes import search

    inputs, config, compilers, plan = _shape_setup([file], compile)
    searches = []
    for inp in inputs:
        if not inp.compilable:
            _fatal(f"{inp.path}: shapes need a source or SPIR-V module, not a {inp.kind}", EXIT_INPUT)
        names = list(kernels) or scratch_users(inp, config, plan, compilers)[0]
        update, close = compile.progress("compiling shapes")
        try:
            for name in names:
                searches.append(search(inp, name, config, plan, compilers,
                                       allow_subgroup_change=allow_subgroup_change, progress=update))
        finally:
            close()
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
def fix(paths, compile, allow_subgroup_change, write_to, config, as_json):
    """Find a shape for every scratch-using kernel; record the decisions and remedied modules."""
    from .errors import UsageError
    from .formats import fix as fix_fmt
    from .formats.json import dumps
    from .judge import fix as fix_mod

    gate = None
    if config:
        from .judge.gate import load as load_gate

        gate = load_gate(config)
        paths = tuple(paths) + gate.inputs
        compile = CompileOptions(compile.targets or gate.targets, compile.compiler, compile.options or gate.options,
                                 compile.jobs, compile.no_cache, compile.timeout, compile.quiet,
                                 compile.scheduler or gate.scheduler)
    if not paths and not (gate and gate.triton):
        raise UsageError("nothing to fix: give PATHs or --config")
    inputs, aot, compilers, plan = _shape_setup(paths, compile) if paths else ([], None, None, None)
    update, close = compile.progress("compiling shapes")
    try:
        result = fix_mod.fix(inputs, aot, plan, compilers, allow_subgroup_change=allow_subgroup_change,
                             progress=update) if paths else fix_mod.FixResult()
        triton_records = _fix_triton(gate, compile, update) if gate else {}
    finally:
        close()
    _write(dumps(fix_fmt.document(result, triton_records)) if as_json else fix_fmt.text(result, triton_records))
    if write_to:
        for path in fix_mod.write(result, write_to, plan, aot, triton=triton_records):
            click.echo(f"wrote {path}", err=as_json)
    differ = [d for d in result.decisions if d.equivalence is not None and d.equivalence.differs]
    for d in differ:
        click.echo(f"zeinspect: error: {d.search.input}:{d.kernel}: the remedied kernel computes different results",
                   err=True)
    sys.exit(EXIT_FINDING if differ else EXIT_OK)


def _fix_triton(gate, compile: CompileOptions, progress) -> dict:
    from .judge.triton_fix import record, search_triton

    return {entry.kernel.label: record(search_triton(entry.kernel, compile.config(targets=entry.targets or
                                                                                  compile.targets or ("default",)),
                                                     progress=progress))
            for entry in gate.triton}


@cli.command()
@click.option("--simulate", default=None, metavar="PRODUCT", help="List the driver's hardware-free device.")
@click.option("--json", "as_json", is_flag=True)
def devices(simulate, as_json):
    """List Level Zero drivers and devices, and the SYCL devices dpctl sees."""
    from .errors import ToolchainError
    from .formats import devices as devices_fmt
    from .probes.runtime import RuntimeConfig, sycl_devices
    from .probes.runtime import devices as ze_devices

    listing = {"level_zero": None, "level_zero_error": None, "sycl": sycl_devices()}
    try:
        listing["level_zero"] = ze_devices(RuntimeConfig(simulate=simulate))["drivers"]
    except ToolchainError as exc:
        listing["level_zero_error"] = str(exc)
    _write(devices_fmt.dumps(listing) if as_json else devices_fmt.text(listing))
    sys.exit(EXIT_OK if listing["level_zero"] or listing["sycl"] else EXIT_TOOLCHAIN)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the images and manifest.json into (created if missing).")
def extract(file, out_dir):
    """Write every device image a SYCL AOT build embedded, with a manifest."""
    from .judge.extract import extract as do_extract

    written, skipped = do_extract(file, out_dir)
    for name in written:
        click.echo(f"wrote {name}")
    for line in skipped:
        click.echo(f"skipped: {line}")
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("spec", metavar="FILE.py:KERNEL")
@click.option("--signature", default="", help="Argument types: a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32")
@click.option("--constexprs", default="", help="Constexpr values: M=64,N=128,K=128")
@click.option("--num-warps", type=click.IntRange(1, 64), default=4)
@click.option("--threads-per-warp", type=click.Choice(["16", "32"]), default="32")
@click.option("--grf-mode", type=click.Choice(["default", "small", "large", "auto"]), default="default")
@click.option("--stage", is_flag=True, help="Apply the SLM staging pass to large FMA dots.")
@click.option("--artifacts", default=None, type=click.Path(file_okay=False), help="Keep TTGIR and SPIR-V here.")
@click.option("--autotune", is_flag=True, help="Screen every config of the kernel's @triton.autotune.")
@click.option("--fix", "fix_configs", is_flag=True,
              help="With --autotune: search the Triton levers (staging, register file, warps) for each failing config.")
@click.option("--build-policy", type=click.Choice(["jit", "native", "first"]), default="jit",
              help="Report the build Triton-XPU ends with when it loads the kernel (jit, the default), in its "
              "native-code path (native), or its first build only (first).")
@click.option("--explain", "explain", is_flag=True,
              help="Also show which Python lines spill, and how full the register file is on each.")
@click.option("--json", "as_json", is_flag=True)
@compile_options
def triton(spec, signature, constexprs, num_warps, threads_per_warp, grf_mode, stage, artifacts, autotune,
           fix_configs, build_policy, explain, as_json, compile):
    """Compile a @triton.jit kernel offline for each target and audit what IGC made of it.

    The module is loaded without running its program code (probes.triton_module): torch and
    other packages that are not installed do not stop it.  `--signature '*fp16'` types every
    pointer (arguments named *ptr*); other scalars default to i32, as the output says."""
    from pathlib import Path

    from .formats import triton as triton_fmt
    from .formats.json import dumps
    from .probes.triton import TritonKernel, parse_pairs, parse_spec, probe_triton

    path, name = parse_spec(spec)
    kernel = TritonKernel(file=path, kernel=name, signature=parse_pairs(signature, "signature"),
                          constexprs=parse_pairs(constexprs, "constexprs"), num_warps=num_warps,
                          threads_per_warp=int(threads_per_warp), grf_mode=grf_mode)
    config = compile.config(default_targets=TRITON_TARGETS)
    artifacts_dir = Path(artifacts) if artifacts else None
    update, close = compile.progress("compiling")
    try:
        if autotune:
            from .probes.triton import screen_autotune

            screen = screen_autotune(kernel, config, policy=build_policy, progress=update)
            remedies = _fix_configs(kernel, screen, config, update) if fix_configs else {}
        else:
            wanted = [("as compiled", False)] + ([("staged", True)] if stage else [])
            runs = [(label, probe_triton(kernel, config, stage=staged, artifacts_dir=artifacts_dir, progress=update,
                                         policy=build_policy))
                    for label, staged in wanted]
    finally:
        close()
    if autotune:
        from .probes.results import CompileStats

        stats = sum((got.stats for _, got in screen), CompileStats())
        explained = _explain_configs(kernel, path, screen, config) if explain else {}
        if as_json:
            doc = triton_fmt.screen_document(screen, _own_stats(stats), remedies)
            if explain:
                from .formats import explain as explain_fmt

                doc["explain"] = {str(n): explain_fmt.document(got) for n, got in explained.items()}
            _write(dumps(doc))
        else:
            _write(triton_fmt.screen_text(kernel.label, screen, remedies))
            if explain:
                from .formats import explain as explain_fmt

                for n, got in explained.items():
                    _write(explain_fmt.section(got, f"config #{n + 1} ({screen[n][0].describe()}): "))
                if not explained:
                    _write("\n== which lines spill: no config uses scratch memory\n")
        everything = [r for _, got in screen for r in got.reports]
        incidents = [i for _, got in screen for i in got.incidents] + [i for got in explained.values()
                                                                       for i in got.incidents]
        sys.exit(_exit_code(everything, incidents))
    final = runs[-1][1]
    explained = None
    if explain:
        from .formats import explain as explain_fmt
        from .probes.triton_explain import explain_reports

        explained = explain_reports(kernel.label, path, final.reports, config)
    if as_json:
        doc = triton_fmt.document(runs, _own_stats(final.stats))
        if explained is not None:
            doc["explain"] = explain_fmt.document(explained)
        _write(dumps(doc))
    else:
        _write(triton_fmt.text(runs))
        if explained is not None:
            _write(explain_fmt.section(explained))
    sys.exit(_exit_code(final.reports, final.incidents + (explained.incidents if explained else [])))


def _explain_configs(kernel, path, screen, config) -> dict:
    """config index -> which lines spill, for each autotune config whose build uses scratch
    (shown as #index+1, as the screen's table numbers them)."""
    from .probes.triton_explain import explain_reports

    return {n: explain_reports(f"{kernel.label} config #{n + 1}", path, scratch, config)
            for n, (_, got) in enumerate(screen)
            if (scratch := [r for r in got.reports if r.scratch_bytes])}


def _fix_configs(kernel, screen, config, progress) -> dict[int, dict]:
    """config index -> what the Triton levers make of each config with a finding (judge.triton_fix)."""
    from .judge.triton_fix import record, search_triton

    return {n: record(search_triton(tuned.applied_to(kernel), config, progress=progress))
            for n, (tuned, got) in enumerate(screen)
            if any(r.applicable and (not r.built or r.uses_scratch) for r in got.reports)}


@cli.group()
def toolchain():
    """List and fetch Intel GPU compilers."""


@toolchain.command("list")
@click.option("--json", "as_json", is_flag=True)
def toolchain_list(as_json):
    """Show each compiler found: path, ocloc and IGC versions, known targets."""
    from .formats import toolchain as toolchain_fmt
    from .toolchain.compilers import discover_report

    found = discover_report()
    _write(toolchain_fmt.dumps(found) if as_json else toolchain_fmt.text(found))
    sys.exit(EXIT_OK if any(c for c, _ in found) else EXIT_TOOLCHAIN)


@toolchain.command("fetch")
@click.option("--force", is_flag=True, help="Fetch again even if this version is present.")
def toolchain_fetch(force):
    """Fetch the current Intel compiler stack from Debian unstable into the user cache."""
    from .toolchain.fetch import fetch

    fetch(force=force, progress=lambda msg: click.echo(msg, err=True))


def main(argv=None) -> None:
    try:
        cli.main(args=argv, prog_name="zeinspect", standalone_mode=False)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _fatal(f"{exc.format_message()}{hint}", EXIT_INPUT)
    except click.exceptions.Abort:
        _fatal("aborted", 130)
    except click.ClickException as exc:
        _fatal(exc.format_message(), EXIT_INPUT)
    except ZeinspectError as exc:
        _fatal(exc.one_line(), exc.exit_code)
    except KeyboardInterrupt:
        _fatal("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(EXIT_OK)
    except MemoryError:
        _fatal("out of memory", EXIT_INPUT)
    except Exception as exc:  # noqa: BLE001 - never a traceback for the user
        if os.environ.get("ZEINSPECT_DEBUG"):
            raise
        _fatal(f"internal error: {exc.__class__.__name__}: {exc} (set ZEINSPECT_DEBUG=1 for a traceback)", 70)
    else:
        sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
