"""The command line: options, one use case (zeinspect.app), one render (formats.writers), exit.

One module per family of commands, imported when one of its commands runs (common.LazyGroup):
nothing else is imported up front, and `zeinspect --version` answers before click is (start-up
is paid on every commit a hook runs on).  The command modules that read gate configurations or
other inputs import zeinspect.triton.plugin, which registers its gate entries, input kind and settings
(app.plugins).  `main` turns every error into one line and its exit code
(docs/reference/exit-codes.md), never a traceback.
"""

from __future__ import annotations

import gc
import signal
import sys

from .. import __version__
from ..malloc import limit_arenas

VERSION_TEXT = f"zeinspect, version {__version__}"
"""What `zeinspect --version` prints (click's version option says the same)."""

__all__ = ["cli", "main"]


def __getattr__(name: str) -> object:
    """`zeinspect.cli.cli`, the command group, imported when asked for (not at start-up)."""
    if name == "cli":
        from .common import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# A library's audit or diff holds 100,000 reports, each a few dicts that live to the end of the
# run; with Python's default thresholds (700, 10, 10) the cycle collector walks them again and
# again: 3 of the 9 s of a 100,000-report diff here (bench/diff.py).  Few of zeinspect's objects
# form cycles, so the youngest generation is collected every 50,000 allocations instead.  The
# middle one keeps its default: at 20 the garbage cycles that do form waited twice as long, and
# a 19-target library's `inspect --json` peaked at 334 MB against 252 MB.
GC_THRESHOLDS = (50_000, 10, 10)


def _stop(*_: object) -> None:
    """SIGTERM (a CI job's time limit, `timeout(1)`) and Ctrl-C stop a run: a screen that keeps
    what it did writes its reports and exits 130 (app.outcome), any other run says
    "interrupted"; no partial file is left (fileio.atomic_write).  The compiles running end at
    once, not when each would have finished (toolchain.run.stop_compilers: what they would have
    built is what was left, never a finding).  No import here (a signal may land inside one):
    if the module that runs compilers is not loaded, no compiler runs."""
    running = sys.modules.get("zeinspect.toolchain.run")
    if running is not None:
        running.stop_compilers()
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(VERSION_TEXT)
        sys.exit(0)
    import click

    from .. import envvars
    from ..errors import EXIT_INPUT, EXIT_OK, ZeinspectError
    from .common import cli, fatal

    gc.set_threshold(*GC_THRESHOLDS)
    limit_arenas()  # zeinspect.malloc says why
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        cli.main(args=argv, prog_name="zeinspect", standalone_mode=False)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        fatal(f"{exc.format_message()}{hint}", EXIT_INPUT)
    except click.exceptions.Abort:
        fatal("aborted", 130)
    except click.ClickException as exc:
        fatal(exc.format_message(), EXIT_INPUT)
    except ZeinspectError as exc:
        fatal(exc.one_line(), exc.exit_code)
    except KeyboardInterrupt:
        fatal("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(EXIT_OK)
    except MemoryError:
        fatal("out of memory", EXIT_INPUT)
    except Exception as exc:  # noqa: BLE001 - never a traceback for the user
        if envvars.value("ZEINSPECT_DEBUG"):
            raise
        fatal(f"internal error: {exc.__class__.__name__}: {exc} (set ZEINSPECT_DEBUG=1 for a traceback)", 70)
    else:
        sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()

