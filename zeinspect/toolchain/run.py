"""The one wrapper around compiler subprocesses: timeout, crash containment, captured log.

Every ocloc call goes through `run_tool`.  A compiler that crashes (killed by a signal)
or hangs past its timeout is not an exception here: the result says so, and the caller
turns it into a finding for that (kernel, target) while the others carry on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from ..errors import ToolchainError
from . import environment as compiler_environment

DEFAULT_TIMEOUT = 600.0
MAX_LOG_BYTES = 4 * 1024 * 1024
QUERY_TIMEOUT = 60.0


def query_timeout(timeout: float | None = None) -> float:
    """Seconds for a compiler to answer a question (its version, its targets): a minute at
    most, and no longer than the run's `timeout` setting (--timeout, $ZEINSPECT_TIMEOUT or the
    gate configuration's, resolved by zeinspect.settings), so a hanging ocloc costs what the
    user allowed a compile, not more."""
    return QUERY_TIMEOUT if timeout is None else min(QUERY_TIMEOUT, timeout)


class Slots:
    """The process-wide bound on compiler processes running at once (`-j`, default one per core).

    Every compiler process goes through `run_tool`, which holds a slot while it runs: however
    the callers nest their thread pools (an autotune screen's configs, each probe's executor,
    explain's dumps), no more than the bound run together.  `peak` is the most seen at once."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.limit = max(1, os.cpu_count() or 1)
        self.running = 0
        self.peak = 0

    def bound(self, jobs: int) -> None:
        """Set the bound: `jobs` processes, 0 for one per core."""
        with self._cond:
            self.limit = max(1, jobs or os.cpu_count() or 1)
            self._cond.notify_all()

    def __enter__(self) -> Slots:
        with self._cond:
            while self.running >= self.limit:
                self._cond.wait()
            self.running += 1
            self.peak = max(self.peak, self.running)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify()


SLOTS = Slots()


class Stopped(KeyboardInterrupt):
    """Raised in the thread whose compile a stop ended: no result is made of it, so it can
    never be a finding (a crash, a missing kernel)."""


class _Live:
    """The compiler processes running now, so that a stopped run ends them (`stop_compilers`)
    instead of waiting for each: each runs in a session of its own (a hang's whole group can be
    killed), so Ctrl-C in a terminal never reaches it, and a cliff kernel's compile can take
    minutes.  Nothing stays switched off after a stop (a pytest session or a notebook goes on
    compiling): each stop is a generation, and a compile that a stop ended, whichever, raises
    `Stopped`.  A compile that starts after the stop runs to its end (a thread that was waiting
    for a compiler slot): a stopped run's pools start no new task."""

    def __init__(self) -> None:
        # Re-entrant: the signal handler that stops runs in the main thread, which may hold it.
        self._lock = threading.RLock()
        self._procs: set[subprocess.Popen] = set()
        self.generation = 0

    def add(self, proc: subprocess.Popen) -> int:
        with self._lock:
            self._procs.add(proc)
            return self.generation

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self.generation += 1
            procs = [p for p in self._procs if p.returncode is None]  # a reaped one's pid may be reused
        for proc in procs:
            _kill_group(proc)


LIVE = _Live()


def stop_compilers() -> None:
    """End every compiler process running now (SIGINT, SIGTERM: the run is being stopped); the
    threads that ran them get `Stopped`, not a result."""
    LIVE.stop()


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
    """Run a compiler in its own process group; on timeout kill the whole group.

    `env` is the whole environment (toolchain.environment.process); None: the caller's without
    any variable that could change a build, so that a question to the compiler (its version,
    an option's spelling) is answered as a clean driver would."""
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if env is None:
        env = compiler_environment.process()
    with SLOTS:
        return _run(argv, cwd, timeout, env)


def _run(argv: list[str], cwd: str, timeout: float, env: dict) -> ToolRun:
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
    generation = None
    try:
        generation = LIVE.add(proc)
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, _ = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        LIVE.discard(proc)
    if generation != LIVE.generation and proc.returncode is not None and proc.returncode < 0:
        raise Stopped  # ended by a stop, not a crash of its own
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
