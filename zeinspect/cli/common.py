"""What every command shares: the command group, the shared options, progress, output, exit.

Exit codes (docs/reference/exit-codes.md, decided in app/outcome.py): 0 fine; 1 a kernel did not build / the gate failed;
2 usage or input error; 3 toolchain error (no compiler, a compiler crash or hang).
Heavy modules are imported inside the commands so that `zeinspect --help` starts fast.
The options every compiling command shares are declared once (`compile_options`); what they
give becomes the run's `Settings` through `zeinspect.settings.resolve`, the one rule every
front end uses (defaults < environment < gate configuration < command line).  The shape options
come from the lever registry (levers.MODULE_LEVERS); a setting another module registers with a
`flag` gets its option here too.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from .. import __version__
from ..levers import MODULE_LEVERS

TARGETS_HELP = ("Targets: ocloc names, IP versions (12.70.4), `default` (19 AOT targets) or a family "
                "(xe-lp, xe-hpg, xe-lpg, xe2); comma-separated or repeated.")


class LazyGroup(click.Group):
    """The command group, each family of commands imported when one of its commands is asked
    for: `zeinspect triton --run` starts the user's command sooner (issue 38's warm 5 %), and
    `--help`, which lists them all, imports them all."""

    COMMANDS = {"cache": "cache", "diff": "diff", "audit": "gate", "ratchet": "gate", "shapes": "gate",
                "fix": "gate", "kernel": "probe", "explain": "probe", "inspect": "probe", "devices": "probe",
                "extract": "probe", "occupancy": "probe", "toolchain": "toolchain", "triton": "triton"}
    """Each command and the module of zeinspect.cli that registers it (a test holds them to the modules)."""

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: ARG002 - click's signature
        return sorted(set(self.commands) | set(self.COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: ARG002
        if cmd_name not in self.commands and cmd_name in self.COMMANDS:
            import importlib

            importlib.import_module(f"{__package__}.{self.COMMANDS[cmd_name]}")
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="zeinspect")
def cli() -> None:
    """Find, gate and remove scratch memory use (spills, private memory) in Intel GPU kernels."""


def fatal(message: str, code: int) -> None:
    click.echo(f"zeinspect: error: {' '.join(str(message).split())}", err=True)
    sys.exit(code)


def write(text: str) -> None:
    click.echo(text, nl=False)


def progress_display(quiet: bool, label: str) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A progress callback drawing on stderr, or None when quiet or not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None, lambda: None
    state: dict[str, Any] = {"bar": None}

    def update(done: int, total: int) -> None:
        if state["bar"] is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            state["bar"] = bar
        state["bar"].update(done - state["bar"].pos)

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)

    return update, close


@dataclass(frozen=True)
class CompileOptions:
    """What the command line gave of the run's settings (by setting name), and --quiet."""

    given: dict
    quiet: bool

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(self.given.get("targets") or ())

    def config(self, default_targets: tuple[str, ...] = ("default",), gate: Any = None,
               **fields: Any) -> Any:
        """The run's settings: these options (and `fields`, other options of the command) over the
        gate configuration at `gate`, over the environment, over the defaults."""
        from ..app.gate import settings

        return settings({**self.given, **fields}, gate=gate, defaults={"targets": default_targets})

    def run(self, label: str, work: Callable[[Callable[[int, int], None] | None], Any]) -> Any:
        """`work(progress)` with a progress display on stderr (none when quiet or not a terminal)."""
        update, close = progress_display(self.quiet, label)
        try:
            return work(update)
        finally:
            close()


def compile_options(f: Callable) -> Callable:
    """Declare the shared options and hand the command one `CompileOptions` as `compile`."""

    extra = _registered_settings()

    @functools.wraps(f)
    def command(*args: Any, quiet: bool, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(key) for key, name in (*SETTING_OPTIONS, *extra)}
        # A flag not given says nothing (the gate configuration or the environment may).
        given["use_cache"] = False if kwargs.pop("no_cache") else None
        given["cache_readonly"] = True if kwargs.pop("cache_readonly") else None
        return f(*args, compile=CompileOptions(given, quiet), **kwargs)

    for option in reversed((
        click.option("-t", "--targets", "targets", multiple=True, help=TARGETS_HELP),
        click.option("--compiler", default=None, help="Use only this compiler (id, path or version prefix)."),
        click.option("--options", default="", help="Extra ocloc -options for every compile (the front end's too)."),
        *common_run_options(),
        click.option("--quiet", "-q", is_flag=True, help="No progress display."),
        *(click.option(SETTINGS_FLAGS[name], key, default=None, help=help_) for key, name, help_ in
          ((key, name, _setting_help(name)) for key, name in extra)),
    )):
        command = option(command)
    return command


SETTING_OPTIONS = (("targets", "targets"), ("compiler", "compiler"), ("options", "options"), ("jobs", "jobs"),
                   ("timeout", "timeout"), ("scheduler", "scheduler"), ("cache_url", "cache_url"),
                   ("environment", "environment"))
"""(click parameter, setting name) of the shared options that give a run setting."""
SETTINGS_FLAGS: dict[str, str] = {}


def _registered_settings() -> tuple[tuple[str, str], ...]:
    """(click parameter, setting name) for each setting registered from outside with a `flag`."""
    from ..settings import SETTINGS

    SETTINGS_FLAGS.update({s.name: s.flag for s in SETTINGS.extra() if s.flag})
    return tuple((f"setting_{s.name}", s.name) for s in SETTINGS.extra() if s.flag)


def _setting_help(name: str) -> str:
    from ..settings import SETTINGS

    return SETTINGS[name].help


def common_run_options() -> tuple:
    """How a run compiles (every compiling command, `diff` too): jobs, time limit, cache, cluster, environment."""
    return (
        click.option("--jobs", "-j", type=click.IntRange(0, 256), default=None, help="Parallel compiles (0: cores)."),
        click.option("--no-cache", is_flag=True, help="Compile everything again; do not read or write the cache."),
        click.option("--timeout", type=click.FloatRange(1, None), default=None,
                     help="Seconds before a compile counts as hung (default $ZEINSPECT_TIMEOUT or 600); "
                     "questions to the compiler get at most a minute of it."),
        click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
                     help="Compile on this Dask cluster (default $ZEINSPECT_SCHEDULER; needs zeinspect[dask])."),
        click.option("--env", "environment", multiple=True, metavar="NAME=VALUE",
                     help="A variable of the compiler's environment (IGC_*, NEO's debug keys, SYCL_PROGRAM_*), "
                          "over the caller's; NAME= drops one.  Repeatable."),
        *cache_url_options(),
    )


def cache_url_options() -> tuple:
    """The shared build cache, behind the local one (zeinspect.shared_cache)."""
    return (click.option("--cache-url", default=None, metavar="URL",
                         help="A build cache many machines share: a folder or s3://bucket/prefix "
                              "(default $ZEINSPECT_CACHE_URL; S3 needs zeinspect[remote])."),
            click.option("--cache-url-readonly", "cache_readonly", is_flag=True,
                         help="Read the shared cache, never write to it (untrusted pull-request runs; "
                              "default $ZEINSPECT_CACHE_URL_READONLY)."))


def probe_options(f: Callable) -> Callable:
    """What to look at and how to build it (`kernel`, `inspect`, `explain`): one option per lever."""
    levers = [lv for lv in MODULE_LEVERS if lv.cli is not None]

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> Any:
        from ..levers import Shape

        given = {lv.name: kwargs.pop(f"lever_{lv.name}") for lv in levers}
        shape = Shape(**{name: value for name, value in given.items() if value is not None})
        compile = kwargs.pop("compile")
        compile.given["cost"] = True if kwargs.pop("cost") else None
        return f(*args, shape=shape, compile=compile, **kwargs)

    for lv in reversed(levers):
        spec = lv.cli
        assert spec is not None
        command = click.option(spec.flag, f"lever_{lv.name}", type=click.Choice(list(spec.choices)),
                               default=spec.default, help=spec.help)(command)
    command = click.option("-k", "--kernel", "kernels", multiple=True, help="Only these kernels (name or glob).")(
        click.option("--json", "as_json", is_flag=True, help="Print the zeinspect.report/1 JSON document.")(
            click.option("--cost", "cost", is_flag=True, default=None,
                         help="Also measure each scratch user's scratch traffic in loops (bytes per iteration "
                              "of its innermost loop with any), from IGC's own ISA (a native image's: its code, "
                              "disassembled).")(command)))
    return compile_options(command)


def own_stats(stats: Any) -> dict:
    """The probe's counters plus zeinspect's own peak memory (not its compilers')."""
    import resource

    return {**stats.to_json(), "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def show_incidents(incidents: list[str]) -> None:
    for incident in incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)


def emit(writers: dict, result: Any, outputs: list[tuple[str, str | None]], **options: Any) -> None:
    from ..formats import writers as registry

    registry.emit(writers, result, [(f, d) for f, d in outputs if f], registry.Options(**options), write)


def audit_options(f: Callable) -> Callable:
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


def shape_options(f: Callable) -> Callable:
    f = click.option("--allow-subgroup-change", is_flag=True,
                     help="Also try other sub-group sizes for kernels whose code depends on theirs.")(f)
    return compile_options(f)


