"""The command line: options, one use case (zeinspect.app), one render (formats.writers), exit.

One module per family of commands, imported when one of its commands runs (common.LazyGroup);
`main` turns every error into one line and its exit code (docs/reference/exit-codes.md), never a
traceback.
"""

from __future__ import annotations

import gc
import sys

import click

from .. import envvars
from .. import triton as _triton_plugin  # noqa: F401 - registers the gate's Triton entries (app.plugins)
from ..errors import EXIT_INPUT, EXIT_OK, ZeinspectError
from .common import cli, fatal

__all__ = ["cli", "main"]


# A library's audit or diff holds 100,000 reports, each a few dicts that live to the end of the
# run; with Python's default thresholds (700, 10, 10) the cycle collector walks them again and
# again: 3 of the 9 s of a 100,000-report diff here (bench/diff.py).  Few of zeinspect's objects
# form cycles, so the youngest generation is collected every 50,000 allocations instead.  The
# middle one keeps its default: at 20 the garbage cycles that do form waited twice as long, and
# a 19-target library's `inspect --json` peaked at 334 MB against 252 MB.
GC_THRESHOLDS = (50_000, 10, 10)


def main(argv: list[str] | None = None) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
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

