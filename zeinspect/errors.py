"""The tool's own errors: one base type, one subclass per layer, each with its exit code.

A problem with one kernel on one target is *data* (a report with a status), never an
exception.  These errors are for problems that stop a command: bad input, bad usage, a
missing or broken toolchain.  The CLI turns each into a one-line message and its exit code.
"""

from __future__ import annotations

# Exit codes, documented in docs/reference/exit-codes.md (decided in app/outcome.py).
EXIT_OK = 0
EXIT_FINDING = 1  # a report holds a kernel that did not build / the gate failed
EXIT_INPUT = 2  # usage or input error
EXIT_TOOLCHAIN = 3  # no compiler, compiler crash or hang, driver trouble
EXIT_STOPPED = 130  # stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it)


class ZeinspectError(Exception):
    """Base of every error zeinspect raises on purpose."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)

    def one_line(self) -> str:
        """The message as one line, prefixed with the file it concerns."""
        text = " ".join(str(self).split())
        return f"{self.path}: {text}" if self.path else text


class InputError(ZeinspectError):
    """The user handed us something we cannot read: a missing, empty, garbled or truncated file."""

    exit_code = EXIT_INPUT


class UsageError(ZeinspectError):
    """Options that do not make sense together, an unknown target name, and the like."""

    exit_code = EXIT_INPUT


class FormatError(InputError):
    """A binary or text format is malformed (raised by the readers in zeinspect.inputs)."""


def internal_incident(where: str, exc: BaseException) -> str:
    """The incident an unexpected exception becomes when it happened while reading or screening
    one part of an input (a package's member, a folder's file, a cache entry, an image): that part
    is named, the rest of the run goes on.  The caller re-raises instead when $ZEINSPECT_DEBUG is
    set (debugging()), so the traceback shows."""
    text = " ".join(str(exc).split())[:300]
    return (f"{where}: internal error: {exc.__class__.__name__}: {text} (a bug in zeinspect, not in the input: "
            "please report it with this line, docs/reliability.md says how; ZEINSPECT_DEBUG=1 shows the traceback)")


def debugging() -> bool:
    """Whether an internal error should show its traceback instead of becoming an incident."""
    from . import envvars

    return bool(envvars.value("ZEINSPECT_DEBUG"))


class ToolchainError(ZeinspectError):
    """No usable compiler, a compiler that cannot be started, or a failed toolchain fetch."""

    exit_code = EXIT_TOOLCHAIN
