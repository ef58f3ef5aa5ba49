"""The one wrapper around compiler subprocesses: timeout, crash containment, captured log.

Every ocloc call goes through `run_tool`.  A compiler that crashes (killed by a signal)
or hangs past its timeout is not an exception here: the result says so, and the caller
turns it into a finding for that (kernel, target) while the others carry on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass

from ..errors import ToolchainError

DEFAULT_TIMEOUT = float(os.environ.get("ZEINSPECT_TIMEOUT", "600"))
MAX_LOG_BYTES = 4 * 1024 * 1024
QUERY_TIMEOUT = 60.0


def query_timeout(timeout: float | None = None) -> float:
    """Seconds for a compiler to answer a question (its version, its targets): a minute at
    most, and no longer than --timeout or $ZEINSPECT_TIMEOUT, so a hanging ocloc costs what
    the user allowed a compile, not more."""
    if timeout is None and os.environ.get("ZEINSPECT_TIMEOUT"):
        timeout = DEFAULT_TIMEOUT
    return QUERY_TIMEOUT if timeout is None else min(QUERY_TIMEOUT, timeout)


@dataclass(frozen=True)
class ToolRun:
    argv: tuple[str, ...]
    returncode: int | None
    output: str
    """stdout and stderr interleaved, as a user would see them (truncated past 4 MiB)."""
    seconds: float
    timed_out: bool = False

    @property
    def signal(self) -> int | None:
        if self.returncode is not None and self.returncode < 0:
            return -self.returncode
        return None

    @property
    def crashed(self) -> bool:
        return self.signal is not None and not self.timed_out

    def describe_failure(self) -> str | None:
        """'compiler crashed: signal 11 (SIGSEGV)' / 'compiler timed out after 600 s' / None."""
        if self.timed_out:
            return f"compiler timed out after {self.seconds:.0f} s"
        if self.crashed and self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = "unknown signal"
            return f"compiler crashed: signal {self.signal} ({name})"
        return None


def run_tool(argv: list[str], *, cwd: str, timeout: float | None = None, env: dict | None = None) -> ToolRun:
    """Run a compiler in its own process group; on timeout kill the whole group."""
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    except FileNotFoundError:
        raise ToolchainError(f"compiler not found: {argv[0]}") from None
    except PermissionError:
        raise ToolchainError(f"compiler is not executable: {argv[0]}") from None
    except OSError as exc:
        raise ToolchainError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, _ = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    seconds = time.monotonic() - start
    text = out[:MAX_LOG_BYTES].decode("utf-8", "replace")
    returncode = proc.returncode
    if timed_out and (returncode is None or returncode >= 0):
        returncode = -signal.SIGKILL
    return ToolRun(tuple(argv), returncode, text, seconds, timed_out)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
