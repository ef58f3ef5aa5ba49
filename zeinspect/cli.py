"""The command line: parse, call the library, print, exit.  Nothing else lives here.

Exit codes (README "Exit codes"): 0 fine; 1 a kernel did not build / the gate failed;
2 usage or input error; 3 toolchain error (no compiler, a compiler crash or hang).
Heavy modules are imported inside the commands so that `zeinspect --help` starts fast.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import EXIT_FINDING, EXIT_INPUT, EXIT_OK, EXIT_TOOLCHAIN, ZeinspectError

TARGETS_HELP = ("Targets: ocloc names, IP versions (12.70.4), `default` (19 AOT targets) or a family "
                "(xe-lp, xe-hpg, xe-lpg, xe2); comma-separated or repeated.")


def _fatal(message: str, code: int) -> None:
    click.echo(f"zeinspect: error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def _progress(quiet: bool, label: str):
    """A progress callback drawing on stderr, or None when quiet or not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None, lambda: None
    state = {"bar": None}

    def update(done: int, total: int):
        if state["bar"] is None:
            state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            state["bar"].__enter__()
        state["bar"].update(done - state["bar"].pos)

    def close():
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)

    return update, close


def common_probe_options(f):
    f = click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP)(f)
    f = click.option("-k", "--kernel", "kernels", multiple=True, help="Only these kernels (name or glob).")(f)
    f = click.option("--options", default="", help="Extra ocloc -options for every compile.")(f)
    f = click.option("--grf", type=click.Choice(["default", "128", "256", "auto"]), default="default",
                     help="Register file mode.")(f)
    f = click.option("--sub-group", "sub_group", type=click.Choice(["0", "8", "16", "32"]), default=None,
                     help="Require this sub-group size (0: none, the compiler's choice) by rewriting the SPIR-V.")(f)
    f = click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix).")(f)
    f = click.option("--json", "as_json", is_flag=True, help="Print the zeinspect.report/1 JSON document.")(f)
    f = click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0, help="Parallel compiles (0: cores).")(f)
    f = click.option("--no-cache", is_flag=True, help="Compile everything again; do not read or write the cache.")(f)
    f = click.option("--timeout", type=click.FloatRange(1, None), default=None,
                     help="Seconds before a compile counts as hung (default $ZEINSPECT_TIMEOUT or 600).")(f)
    f = click.option("--quiet", "-q", is_flag=True, help="No progress display.")(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="zeinspect")
def cli():
    """Find, gate and remove scratch memory use (spills, private memory) in Intel GPU kernels."""


def _inspect(paths, targets, kernels, options, grf, sub_group, compiler, jobs, no_cache, timeout, quiet):
    """Probe every input: compile sources for the targets, read binaries as they are."""
    from .model import Shape
    from .probes.aot import AotConfig
    from .probes.collect import collect_reports

    config = AotConfig(targets=tuple(targets) or ("default",), compiler=compiler, options=options,
                       shape=Shape(grf=grf, sub_group=int(sub_group) if sub_group is not None else None),
                       kernels=tuple(kernels), jobs=jobs, use_cache=not no_cache,
                       timeout=timeout)
    update, close = _progress(quiet, "compiling")
    try:
        got = collect_reports(list(paths), config, explicit_targets=bool(targets), progress=update)
    finally:
        close()
    return got.reports, got.compilers, got.notes, got.incidents, got.stats


def _write(text: str) -> None:
    click.echo(text, nl=False)


def _own_stats(stats: dict) -> dict:
    """The probe's counters plus zeinspect's own peak memory (not its compilers')."""
    import resource

    return {**stats, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _finish(reports, compilers, notes, incidents, stats, as_json, render):
    from .formats.json import write_report_document
    from .model import Status

    if as_json:
        write_report_document(reports, compilers, _write, stats=_own_stats(stats), notes=notes, incidents=incidents)
    else:
        click.echo(render(reports), nl=False)
        for note in notes:
            click.echo(f"note: {note}")
    for incident in incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    if incidents:
        return EXIT_TOOLCHAIN
    return EXIT_FINDING if any(r.status is not Status.OK and r.applicable for r in reports) else EXIT_OK


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@common_probe_options
@click.option("--runtime", is_flag=True, help="Build through Level Zero on a device, as an application would.")
@click.option("-d", "--device", "device", type=click.IntRange(0, None), default=0, help="Level Zero device index.")
@click.option("--simulate", default=None, metavar="PRODUCT",
              help="Start the driver's hardware-free device (tgllp, dg2, mtl, pvc): no GPU needed.")
@click.option("--compare-aot", is_flag=True, help="With --runtime: show the AOT figures beside the runtime ones.")
def kernel(file, targets, kernels, options, grf, sub_group, compiler, as_json, jobs, no_cache, timeout, quiet,
           runtime, device, simulate, compare_aot):
    """Show one card per kernel of FILE: every figure per target, the log, the command."""
    from .formats.text import cards

    if runtime or simulate:
        sys.exit(_runtime_kernel(file, kernels, options, grf, compiler, as_json, timeout, device, simulate,
                                 compare_aot, jobs, no_cache))
    got = _inspect([file], targets, kernels, options, grf, sub_group, compiler, jobs, no_cache, timeout, quiet)
    sys.exit(_finish(*got, as_json, cards))


def _runtime_kernel(file, kernels, options, grf, compiler, as_json, timeout, device, simulate, compare_aot, jobs,
                    no_cache):
    from .errors import UsageError
    from .formats.json import dumps, report_document
    from .formats.text import cards, side_by_side
    from .inputs import read_input
    from .model import Status
    from .probes.runtime import DEFAULT_TIMEOUT, RuntimeConfig, probe

    if grf != "default":
        raise UsageError("--grf applies to AOT compiles; give the driver its flags with --options")
    inp = read_input(file)
    config = RuntimeConfig(simulate=simulate, device=device, build_flags=options, kernels=tuple(kernels),
                           timeout=timeout or DEFAULT_TIMEOUT)
    result = probe([inp], config)
    aot = []
    compilers = []
    if compare_aot:
        aot, compilers = _aot_for_runtime(inp, result, options, compiler, jobs, no_cache, timeout)
    if as_json:
        doc = report_document(result.reports + aot, compilers, incidents=result.incidents)
        doc["runtime"] = {"device": result.device, "driver": result.driver}
        click.echo(dumps(doc), nl=False)
    else:
        click.echo(side_by_side(result.reports, aot) if compare_aot else cards(result.reports), nl=False)
    for incident in result.incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    if result.incidents:
        return EXIT_TOOLCHAIN
    return EXIT_FINDING if any(r.status is not Status.OK for r in result.reports) else EXIT_OK


def _aot_for_runtime(inp, result, options, compiler, jobs, no_cache, timeout):
    """The AOT probe for the runtime device's IP, with the compiler of the driver's own build."""
    from .probes.aot import AotConfig, probe as aot_probe, resolve_compilers

    ip = next((r.ip for r in result.reports if r.ip), None)
    if ip is None:
        return [], []
    config = AotConfig(targets=(ip,), compiler=compiler, options=options, jobs=jobs, use_cache=not no_cache,
                       timeout=timeout)
    found = resolve_compilers(config)
    build = (result.driver.get("version") or 0) & 0xFFFF
    same = [c for c in found if c.ocloc_version.split(".")[-1].lstrip("0") == str(build) and c.knows(ip)]
    got = aot_probe([inp], config, compilers=same or found)
    return got.reports, got.compilers


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@common_probe_options
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels without findings.")
def inspect(paths, targets, kernels, options, grf, sub_group, compiler, as_json, jobs, no_cache, timeout, quiet,
            verbose):
    """Show one table for many files: a summary, then kernels as rows, targets as columns."""
    from .formats.text import table

    got = _inspect(list(paths), targets, kernels, options, grf, sub_group, compiler, jobs, no_cache, timeout, quiet)
    sys.exit(_finish(*got, as_json, lambda reports: table(reports, verbose=verbose)))


def audit_options(f):
    f = click.argument("paths", nargs=-1, type=click.Path())(f)
    f = click.option("--log", "logs", multiple=True, type=click.Path(dir_okay=False),
                     help="A build log to judge without compiling (repeatable).")(f)
    f = click.option("--ratchet", default=None, type=click.Path(dir_okay=False),
                     help="The ratchet file (default: scratch_ratchet.txt, or the gate configuration's).")(f)
    f = click.option("--config", default=None, type=click.Path(dir_okay=False),
                     help="A gate configuration (YAML) saying what to audit.")(f)
    f = click.option("--shapes", default=None, type=click.Path(dir_okay=False),
                     help="Judge each kernel in the shape recorded here (zeinspect fix --write).")(f)
    f = click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP)(f)
    f = click.option("--options", default="", help="Extra ocloc -options for every compile.")(f)
    f = click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix).")(f)
    f = click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0, help="Parallel compiles (0: cores).")(f)
    f = click.option("--no-cache", is_flag=True, help="Compile everything again.")(f)
    f = click.option("--timeout", type=click.FloatRange(1, None), default=None, help="Seconds before a compile counts as hung.")(f)
    f = click.option("--quiet", "-q", is_flag=True, help="No progress display.")(f)
    f = click.option("--runtime", is_flag=True, help="Build through Level Zero on a device instead of ocloc.")(f)
    f = click.option("--simulate", default=None, metavar="PRODUCT",
                     help="With --runtime: the driver's hardware-free device (tgllp, dg2, mtl, pvc).")(f)
    return f


def _audit_request(paths, logs, ratchet, config, shapes, targets, options, compiler, jobs, no_cache, timeout,
                   strict=False, runtime=False, simulate=None):
    from .judge.gate import load as load_gate
    from .judge.run import AuditRequest

    overrides = dict(paths=tuple(paths), logs=tuple(logs), ratchet=ratchet, targets=tuple(targets), options=options,
                     compiler=compiler, shapes=shapes, strict=strict, jobs=jobs, use_cache=not no_cache,
                     timeout=timeout, runtime=runtime, simulate=simulate)
    if config:
        return AuditRequest.from_gate(load_gate(config), **overrides)
    return AuditRequest(**{k: v for k, v in overrides.items() if v is not None})


def _run_audit(request, quiet, runtime):
    from .judge.run import run

    update, close = _progress(quiet, "compiling")
    try:
        return run(request, progress=update)
    finally:
        close()


@cli.command()
@audit_options
@click.option("--strict", is_flag=True, help="IMPROVED and STALE fail the gate too.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text")
@click.option("--junit", default=None, type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option("--verbose", "-v", is_flag=True, help="Also list kernels that pass.")
def audit(paths, logs, ratchet, config, shapes, targets, options, compiler, jobs, no_cache, timeout, quiet, runtime,
          simulate, strict, as_json, fmt, junit, verbose):
    """Judge kernels against the ratchet file: NEW, GREW and OVERFLOW fail the gate."""
    from .formats import audit as audit_fmt
    from .probes.cache import atomic_write

    request = _audit_request(paths, logs, ratchet, config, shapes, targets, options, compiler, jobs, no_cache,
                             timeout, strict, runtime, simulate)
    got = _run_audit(request, quiet, runtime)
    strict = request.strict
    if as_json:
        fmt = "json"
    if fmt == "json":
        audit_fmt.write_document(got.result, got.collection.compilers, _write, strict=strict,
                                 stats=_own_stats(got.collection.stats), notes=got.collection.notes,
                                 incidents=got.collection.incidents)
    elif fmt == "github":
        click.echo(audit_fmt.github(got.result, strict=strict), nl=False)
    else:
        click.echo(audit_fmt.text(got.result, strict=strict, verbose=verbose), nl=False)
        for note in got.collection.notes:
            click.echo(f"note: {note}")
    if junit:
        from .formats.junit import junit as junit_xml

        atomic_write(junit, junit_xml(got.result, strict=strict))
    for incident in got.collection.incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    if got.collection.incidents:
        sys.exit(EXIT_TOOLCHAIN)
    sys.exit(EXIT_OK if got.result.passed(strict) else EXIT_FINDING)


@cli.group()
def ratchet():
    """Maintain the ratchet file."""


@ratchet.command("update")
@audit_options
@click.option("--allow-grow", is_flag=True, help="Let entries grow and new scratch users be added.")
def ratchet_update(paths, logs, ratchet, config, shapes, targets, options, compiler, jobs, no_cache, timeout,
                   quiet, runtime, simulate, allow_grow):
    """Rewrite the ratchet file to what was measured (tightening only, unless --allow-grow)."""
    from .judge.update import update
    from .probes.cache import atomic_write

    request = _audit_request(paths, logs, ratchet, config, shapes, targets, options, compiler, jobs, no_cache,
                             timeout, runtime=runtime, simulate=simulate)
    got = _run_audit(request, quiet, runtime)
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


def _shape_setup(paths, targets, options, compiler, jobs, no_cache, timeout):
    from .inputs import collect
    from .probes.aot import AotConfig, resolve_compilers
    from .toolchain.targets import plan_targets

    inputs = collect(list(paths))
    config = AotConfig(targets=tuple(targets) or ("default",), compiler=compiler, options=options, jobs=jobs,
                       use_cache=not no_cache, timeout=timeout)
    compilers = resolve_compilers(config)
    return inputs, config, compilers, plan_targets(config.targets, compilers)


def shape_options(f):
    f = click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP)(f)
    f = click.option("--options", default="", help="Extra ocloc -options for every compile.")(f)
    f = click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix).")(f)
    f = click.option("--allow-subgroup-change", is_flag=True,
                     help="Also try other sub-group sizes for kernels whose code depends on theirs.")(f)
    f = click.option("--jobs", "-j", type=click.IntRange(0, 256), default=0, help="Parallel compiles (0: cores).")(f)
    f = click.option("--no-cache", is_flag=True, help="Compile everything again.")(f)
    f = click.option("--timeout", type=click.FloatRange(1, None), default=None, help="Seconds before a compile counts as hung.")(f)
    f = click.option("--quiet", "-q", is_flag=True, help="No progress display.")(f)
    return f


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-k", "--kernel", "kernels", multiple=True, help="Search these kernels even if they use no scratch.")
@shape_options
@click.option("--json", "as_json", is_flag=True)
def shapes(file, kernels, targets, options, compiler, allow_subgroup_change, jobs, no_cache, timeout, quiet, as_json):
    """Compile every shape of each scratch-using kernel on every target and show the table."""
    from .formats import shapes as shapes_fmt
    from .formats.json import dumps
    from .judge.fix import scratch_users
    from .judge.shapes import search

    inputs, config, compilers, plan = _shape_setup([file], targets, options, compiler, jobs, no_cache, timeout)
    searches = []
    for inp in inputs:
        if not inp.compilable:
            _fatal(f"{inp.path}: shapes need a source or SPIR-V module, not a {inp.kind}", EXIT_INPUT)
        names = list(kernels) or scratch_users(inp, config, plan, compilers)[0]
        update, close = _progress(quiet, "compiling shapes")
        try:
            for name in names:
                searches.append(search(inp, name, config, plan, compilers,
                                       allow_subgroup_change=allow_subgroup_change, progress=update))
        finally:
            close()
    if as_json:
        click.echo(dumps(shapes_fmt.document(searches)), nl=False)
    elif not searches:
        click.echo("no kernel uses scratch memory on these targets")
    else:
        click.echo(shapes_fmt.table(searches), nl=False)
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@shape_options
@click.option("--write", "write_to", default=None, type=click.Path(dir_okay=False),
              help="Write the decisions here (e.g. ratchet/shapes.yaml) and the remedied SPIR-V beside it.")
@click.option("--config", default=None, type=click.Path(dir_okay=False),
              help="Also fix what a gate configuration audits (its inputs, targets and Triton kernels).")
def fix(paths, targets, options, compiler, allow_subgroup_change, jobs, no_cache, timeout, quiet, write_to, config):
    """Find a shape for every scratch-using kernel; record the decisions and remedied modules."""
    from .errors import UsageError
    from .judge import fix as fix_mod

    gate = None
    if config:
        from .judge.gate import load as load_gate

        gate = load_gate(config)
        paths = tuple(paths) + gate.inputs
        targets = tuple(targets) or gate.targets
        options = options or gate.options
    if not paths and not (gate and gate.triton):
        raise UsageError("nothing to fix: give PATHs or --config")
    inputs, aot, compilers, plan = _shape_setup(paths, targets, options, compiler, jobs, no_cache, timeout) \
        if paths else ([], None, None, None)
    update, close = _progress(quiet, "compiling shapes")
    try:
        result = fix_mod.fix(inputs, aot, plan, compilers, allow_subgroup_change=allow_subgroup_change,
                             progress=update) if paths else fix_mod.FixResult()
        triton_records = _fix_triton(gate, targets, compiler, no_cache, timeout, update) if gate else {}
    finally:
        close()
    for d in result.decisions:
        state = "no scratch memory on any target" if d.cleans else "still uses scratch memory"
        click.echo(f"{d.search.input}:{d.kernel}: {d.shape.describe()}: {state}")
        click.echo(f"  why: {d.search.why()}")
        click.echo(f"  SYCL: {fix_mod.sycl_spelling(d.shape, d.search.written_sub_group)}")
        eq = d.equivalence
        if eq.get("ran"):
            verdict = ("same results" + (" (bitwise)" if eq["bitwise"] else f" (max difference {eq['max_abs_diff']:g})")
                       if eq["equal"] else f"DIFFERENT RESULTS (max difference {eq['max_abs_diff']:g})")
            click.echo(f"  checked: {verdict} on {eq['device']}, {eq['outputs_compared']} outputs")
        elif eq:
            click.echo(f"  checked: {eq['why']}")
    for label, rec in triton_records.items():
        state = "no scratch memory on any target" if rec["cleans"] else "still uses scratch memory"
        shape = rec["shape"]
        click.echo(f"{label}: {'staged' if shape['stage'] else 'not staged'}, grf_mode {shape['grf_mode']}, "
                   f"{shape['num_warps']} warps of {shape['threads_per_warp']} threads: {state}")
        click.echo(f"  why: {rec['why']}")
        click.echo(f"  Triton: {rec['triton']}")
    if write_to:
        for path in fix_mod.write(result, write_to, plan, aot, triton=triton_records):
            click.echo(f"wrote {path}")
    differ = [d for d in result.decisions if d.equivalence.get("ran") and not d.equivalence.get("equal")]
    for d in differ:
        click.echo(f"zeinspect: error: {d.search.input}:{d.kernel}: the remedied kernel computes different results",
                   err=True)
    left = [d for d in result.decisions if not d.cleans] + [r for r in triton_records.values() if not r["cleans"]]
    if left:
        click.echo(f"{len(left)} kernel(s) still use scratch memory in their best shape: list them in the ratchet "
                   "(zeinspect ratchet update --shapes ...)")
    sys.exit(EXIT_FINDING if differ else EXIT_OK)


def _fix_triton(gate, targets, compiler, no_cache, timeout, progress) -> dict:
    from .judge.triton_fix import record, search_triton
    from .probes.aot import AotConfig
    from .probes.triton import kernel_from_entry

    records = {}
    for entry in gate.triton:
        kernel = kernel_from_entry(entry)
        config = AotConfig(targets=entry["targets"] or tuple(targets) or ("default",), compiler=compiler,
                           use_cache=not no_cache, timeout=timeout)
        records[kernel.label] = record(search_triton(kernel, config, progress=progress))
    return records


@cli.command()
@click.option("--simulate", default=None, metavar="PRODUCT", help="List the driver's hardware-free device.")
@click.option("--json", "as_json", is_flag=True)
def devices(simulate, as_json):
    """List Level Zero drivers and devices, and the SYCL devices dpctl sees."""
    import json as _json

    from .errors import ToolchainError
    from .probes.runtime import RuntimeConfig, devices as ze_devices

    out = {"level_zero": None, "level_zero_error": None, "sycl": sycl_devices()}
    try:
        out["level_zero"] = ze_devices(RuntimeConfig(simulate=simulate))["drivers"]
    except ToolchainError as exc:
        out["level_zero_error"] = str(exc)
    if as_json:
        click.echo(_json.dumps(out, indent=2))
    else:
        if out["level_zero"] is None:
            click.echo(f"Level Zero: {out['level_zero_error']}")
        for drv in out["level_zero"] or []:
            v = drv["version"]
            click.echo(f"Level Zero driver {drv['index']}: version {v >> 24}.{(v >> 16) & 0xFF}.{v & 0xFFFF}")
            for i, dev in enumerate(drv["devices"]):
                click.echo(f"  device {i}: {dev['name']} (device id {dev['device_id']}, IP "
                           f"{dev['ip_version'] or 'not reported'}, sub-group sizes "
                           f"{', '.join(map(str, dev['sub_group_sizes']))}, SLM {dev['slm_bytes']} bytes)")
        if out["sycl"] is None:
            click.echo("SYCL: dpctl is not installed")
        for dev in out["sycl"] or []:
            click.echo(f"SYCL: {dev['filter']}: {dev['name']} ({dev['driver']})")
    sys.exit(EXIT_OK if out["level_zero"] or out["sycl"] else EXIT_TOOLCHAIN)


def sycl_devices():
    """The SYCL devices dpctl sees, or None when dpctl is not installed (asked in a child process:
    a SYCL runtime may crash, and the OpenCL CPU runtime must be pointed at first)."""
    import json as _json
    import subprocess

    from .judge.equivalence import _runtime_env

    code = ("import json, dpctl\nprint(json.dumps([{'filter': d.filter_string, 'name': d.name, "
            "'driver': d.driver_version} for d in dpctl.get_devices()]))")
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=_runtime_env())
    except subprocess.TimeoutExpired:
        return []
    if "ModuleNotFoundError" in proc.stderr:
        return None
    try:
        return _json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return []


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
@click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP)
@click.option("--num-warps", type=click.IntRange(1, 64), default=4)
@click.option("--threads-per-warp", type=click.Choice(["16", "32"]), default="32")
@click.option("--grf-mode", type=click.Choice(["default", "small", "large", "auto"]), default="default")
@click.option("--stage", is_flag=True, help="Apply the SLM staging pass to large FMA dots.")
@click.option("--artifacts", default=None, type=click.Path(file_okay=False), help="Keep TTGIR and SPIR-V here.")
@click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix).")
@click.option("--json", "as_json", is_flag=True)
@click.option("--no-cache", is_flag=True)
@click.option("--quiet", "-q", is_flag=True)
def triton(spec, signature, constexprs, targets, num_warps, threads_per_warp, grf_mode, stage, artifacts, compiler,
           as_json, no_cache, quiet):
    """Compile a @triton.jit kernel offline for each target and audit what IGC made of it."""
    from pathlib import Path

    from .formats.text import cards
    from .probes.aot import AotConfig
    from .probes.triton import TritonKernel, parse_pairs, parse_spec, probe_triton

    path, name = parse_spec(spec)
    kernel = TritonKernel(file=path, kernel=name, signature=parse_pairs(signature, "signature"),
                          constexprs=parse_pairs(constexprs, "constexprs"), num_warps=num_warps,
                          threads_per_warp=int(threads_per_warp), grf_mode=grf_mode)
    config = AotConfig(targets=tuple(targets) or ("arl-s", "mtl-u", "lnl-m", "bmg-g21"), compiler=compiler,
                       use_cache=not no_cache)
    update, close = _progress(quiet, "compiling")
    try:
        runs = [("as compiled", probe_triton(kernel, config, stage=False, artifacts_dir=Path(artifacts) if artifacts
                                             else None, progress=update))]
        if stage:
            runs.append(("staged", probe_triton(kernel, config, stage=True, artifacts_dir=Path(artifacts) if artifacts
                                                else None, progress=update)))
    finally:
        close()
    final = runs[-1][1]
    if as_json:
        from .formats.json import dumps, report_document

        doc = report_document(final.reports, final.compilers, stats=_own_stats(final.stats), incidents=final.incidents)
        if stage:
            doc["before_staging"] = [r.to_json() for r in runs[0][1].reports]
        click.echo(dumps(doc), nl=False)
    else:
        for label, got in runs:
            click.echo(f"== {label}")
            click.echo(cards(got.reports), nl=False)
    for incident in final.incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)
    from .model import Status

    if final.incidents:
        sys.exit(EXIT_TOOLCHAIN)
    sys.exit(EXIT_FINDING if any(r.status is not Status.OK for r in final.reports) else EXIT_OK)


@cli.group()
def toolchain():
    """List and fetch Intel GPU compilers."""


@toolchain.command("list")
@click.option("--json", "as_json", is_flag=True)
def toolchain_list(as_json):
    """Show each compiler found: path, ocloc and IGC versions, known targets."""
    import json as _json

    from .toolchain.compilers import discover_report

    found = discover_report()
    if as_json:
        click.echo(_json.dumps([dict(c.to_json(), origin=c.origin, targets=list(c.targets))
                                for c, _ in found if c is not None], indent=2))
    else:
        if not any(c for c, _ in found):
            click.echo("no compiler found; run `zeinspect toolchain fetch` or install Debian's intel-opencl-icd")
        for c, why in found:
            if c is None:
                click.echo(f"skipped: {why}")
                continue
            click.echo(f"{c.id}\n  path:    {c.path}\n  origin:  {c.origin}\n  ocloc:   {c.ocloc_version}\n"
                       f"  IGC:     {c.igc_version or 'unknown'}\n  targets: {', '.join(c.targets)}")
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
