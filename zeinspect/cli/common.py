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
from typing import Any, NoReturn

import click

from .. import __version__


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

    def session(self, config: Any) -> Any:
        """The command's one build session (its cache, compiler slots and executor), opened here at
        the front door and passed down to the use case, as pip-audit's CLI builds its service once:
        what the command builds, screens, costs and explains goes through it."""
        from ..app.session import open_session

        return open_session(config)

    def run(self, label: str, work: Callable[[Callable[[int, int], None] | None], Any]) -> Any:
        """`work(progress)` with a progress display on stderr (none when quiet or not a terminal)."""
        update, close = progress_display(self.quiet, label)
        try:
            return work(update)
        finally:
            close()


def setting_options(*groups: str) -> tuple[list[Callable], list[tuple[str, Any]]]:
    """The click options of the settings the commands of `groups` offer (zeinspect.settings:
    each declared once, with its help), and (click parameter, setting) for reading them back."""
    from ..settings import SETTINGS

    chosen = list({s.name: s for group in groups for s in SETTINGS.flagged(group)}.values())
    options = []
    for s in chosen:
        flag = s.flag
        assert flag is not None  # SETTINGS.flagged gives only settings with an option
        help_ = s.help + (f" Also ${s.env}." if s.env else "")
        key = f"setting_{s.name}"
        if flag.switch is not None:
            options.append(click.option(*flag.names, key, is_flag=True, default=False, help=help_))
        else:
            options.append(click.option(*flag.names, key, multiple=flag.repeat, default=() if flag.repeat else None,
                                        metavar=flag.metavar, help=help_))
    return options, [(f"setting_{s.name}", s) for s in chosen]


def given_settings(kwargs: dict, read: list[tuple[str, Any]]) -> dict:
    """What the command line gave of each setting (popped from the command's `kwargs`): a switch
    not given, an empty repeat and an absent value say nothing (below may: the gate
    configuration, the environment)."""
    given = {}
    for key, setting in read:
        value = kwargs.pop(key)
        if setting.flag.switch is not None:
            value = setting.flag.switch if value else None
        given[setting.name] = value
    return given


def compile_options(f: Callable | None = None, *, groups: tuple[str, ...] = ()) -> Any:
    """Declare the options of the run settings every compiling command offers (what to build
    for, how a run compiles, the shared cache; and `groups` besides), and hand the command one
    `CompileOptions` as `compile`."""
    if f is None:
        return lambda g: compile_options(g, groups=groups)
    options, read = setting_options("target", "run", "cache", *groups)

    @functools.wraps(f)
    def command(*args: Any, quiet: bool, **kwargs: Any) -> Any:
        return f(*args, compile=CompileOptions(given_settings(kwargs, read), quiet), **kwargs)

    for option in reversed((*options, click.option("--quiet", "-q", is_flag=True, help="No progress display."))):
        command = option(command)
    return command


def probe_options(f: Callable) -> Callable:
    """What to look at and how to build it (`kernel`, `inspect`, `explain`): the kernels to report,
    the cost measure, and one option per lever (the module's shape)."""
    from ..levers import MODULE_LEVERS

    levers = [lv for lv in MODULE_LEVERS if lv.cli is not None]

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> Any:
        from ..levers import Shape

        given = {lv.name: kwargs.pop(f"lever_{lv.name}") for lv in levers}
        shape = Shape(**{name: value for name, value in given.items() if value is not None})
        return f(*args, shape=shape, **kwargs)

    for lv in reversed(levers):
        spec = lv.cli
        assert spec is not None
        command = click.option(spec.flag, f"lever_{lv.name}", type=click.Choice(list(spec.choices)),
                               default=spec.default, help=spec.help)(command)
    command = click.option("--json", "as_json", is_flag=True, help="Print the zeinspect.report/1 JSON document.")(
        command)
    return compile_options(command, groups=("select", "measure", "profile"))


def own_stats(stats: Any) -> dict:
    """The probe's counters plus zeinspect's own peak memory (not its compilers')."""
    import resource

    return {**stats.to_json(), "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def show_incidents(incidents: Any) -> None:
    for incident in incidents:
        click.echo(f"zeinspect: error: {incident}", err=True)


def finish(result: Any) -> NoReturn:
    """End a command with its result's outcome (app.outcome.Result): its incidents on stderr,
    one line each, and its exit code, decided in app.outcome."""
    outcome = result.outcome
    show_incidents(outcome.incidents)
    if outcome.stopped:
        click.echo(f"zeinspect: stopped: {outcome.stopped}", err=True)
    sys.exit(outcome.exit_code)


def emit(writers: dict, result: Any, outputs: list[tuple[str, str | None]], **options: Any) -> None:
    from ..formats import writers as registry

    registry.emit(writers, result, [(f, d) for f, d in outputs if f], registry.Options(**options), write)


def show(writers: dict, result: Any, as_json: bool, **options: Any) -> None:
    """A command's one view on the terminal: its JSON document with --json, else its text."""
    emit(writers, result, [("json" if as_json else "text", None)], **options)


def audit_options(f: Callable | None = None, *, groups: tuple[str, ...] = ()) -> Any:
    """What a gate run reads (PATHs, logs, a gate configuration, the runtime), and the gate's
    settings (the ratchet, recorded shapes, the measure; and `groups` besides)."""
    if f is None:
        return lambda g: audit_options(g, groups=groups)
    for option in reversed((
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--log", "logs", multiple=True, type=click.Path(dir_okay=False),
                     help="A build log to judge without compiling (repeatable)."),
        click.option("--config", default=None, type=click.Path(dir_okay=False),
                     help="A gate configuration (YAML) saying what to audit."),
        click.option("--runtime", is_flag=True, help="Build through Level Zero on a device instead of ocloc."),
        click.option("--simulate", default=None, metavar="PRODUCT",
                     help="With --runtime: the driver's hardware-free device (tgllp, dg2, mtl, pvc)."),
    )):
        f = option(f)
    return compile_options(f, groups=("gate", "measure", "profile", *groups))


def shape_options(f: Callable) -> Callable:
    f = click.option("--allow-subgroup-change", is_flag=True,
                     help="Also try other sub-group sizes for kernels whose code depends on theirs.")(f)
    return compile_options(f)


