"""A command run with the capture installed (triton.capture), its launches read as it writes them.

The command runs in its own session, its output on zeinspect's stderr (stdout is the report);
the launches file is read as it grows, each new specialization handed on as it is read (its
screen, while the command runs).  Its own exit status is kept beside what it launched and never
decides the screen.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..capture.record import CAPTURE_ENV, TARGET_ENV
from ..model.specialization import Specialization
from .launches import Capture, LaunchReader

SITECUSTOMIZE = "import zeinspect.triton.capture.record as _zeinspect_capture\n_zeinspect_capture.install()\n"


def capture_environment(folder: Path, target: dict) -> dict[str, str]:
    """The variables a captured process runs with (triton.capture reads them): where its launches
    go, what the offline driver answers for, and a Triton cache of its own in `folder`, so that
    the user's cache is never written.  Inductor's code for the stand-in XPU goes to a folder of
    zeinspect's build cache, the same each run: the TTIR of a kernel it generates names its
    source file, and the same file each run keeps the same kernel the same key (triton.build.warm)."""
    from ...paths import build_cache_dir

    return {CAPTURE_ENV: str(folder / "launches.jsonl"), TARGET_ENV: json.dumps(target),
            "TRITON_CACHE_DIR": str(folder / "triton-cache"),
            "TORCHINDUCTOR_CACHE_DIR": str(build_cache_dir() / "inductor-code")}


def capture(command: list[str], *, target: dict, timeout: float | None = None,
            meanwhile: Callable[[], None] | None = None,
            on_new: Callable[[Specialization], object] | None = None, folder: Path | None = None) -> Capture:
    """Run `command` with the capture installed (triton.capture); what it launched, read back.

    The launches are read as the command writes them; `meanwhile` (the screen's imports) runs
    while it runs, and `on_new` with each new specialization as it is read (its screen).  What
    zeinspect adds to a warm run is then its start-up and its report (issue 38's 5 %;
    bench/triton_capture.py).  A time limit is checked between screens: a cold screen during
    the run may stop the command up to one compile late.  `folder`: where the capture keeps its
    files (its Triton cache, whose entries the kernels torch.compile generated are read from), if
    they must outlive it; otherwise a temporary folder, removed when the command ends."""
    import contextlib

    import zeinspect

    package_root = str(Path(zeinspect.__file__).resolve().parents[1])
    kept = contextlib.nullcontext(str(folder)) if folder is not None else tempfile.TemporaryDirectory(
        prefix="zeinspect-capture-")
    with kept as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env = {**os.environ, **capture_environment(Path(tmp), target)}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, package_root, env.get("PYTHONPATH", "")) if p)
        out = Path(env[CAPTURE_ENV])
        errors = open(Path(tmp) / "stderr", "w+b")  # noqa: SIM115 - read back below, closed with the folder
        try:
            # Its output goes to stderr: zeinspect's stdout is the report (a --json document).
            proc = subprocess.Popen(command, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                                    stdout=sys.stderr.fileno(), stderr=errors)
        except OSError as exc:
            from ...errors import UsageError

            raise UsageError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
        reader = LaunchReader()
        tail = _Tail(out)
        ended = _Exit(proc)
        deadline = None if timeout is None else time.monotonic() + timeout
        timed_out, code = False, None
        try:
            while code is None:
                if meanwhile is not None:
                    meanwhile()
                    meanwhile = None
                left = None if deadline is None else deadline - time.monotonic()
                code = ended.wait(POLL_S if left is None else max(0.0, min(POLL_S, left)))
                if code is None and left is not None and left <= POLL_S:
                    timed_out = True
                    os.killpg(proc.pid, signal.SIGKILL)
                    code = proc.wait()
                _read(tail.lines(), reader, on_new)
            _read(tail.lines(final=True), reader, on_new)
        finally:
            if proc.poll() is None:  # zeinspect itself failed or was interrupted: the command goes too
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            tail.close()
            ended.close()
        errors.seek(0)
        said = [line for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
        errors.close()
    got = reader.capture(command, code, timed_out)
    if code and said:
        # A library that refuses to run here: where and why in one line (its last), not its traceback.
        got.notes.append(f"the command ended with: {said[-1].strip()[:300]}")
    return got


POLL_S = 0.25
"""How often the launches file is read while the command runs."""


class _Exit:
    """The command's end, waited for without waking: its pidfd (Linux 5.3) tells select the
    moment it ends.  Popen.wait(timeout) polls instead, every 0.5 to 50 ms, and those wake-ups
    slowed a torch command on two cores by 2 % (its threads spin at their barriers)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        try:
            self.fd: int | None = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.fd = None

    def wait(self, timeout: float) -> int | None:
        """Its exit status, or None when it still runs after `timeout` seconds."""
        if self.fd is None:
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
        select.select([self.fd], [], [], timeout)
        return self.proc.poll()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _read(lines: list[str], reader: LaunchReader, on_new: Callable[[Specialization], object] | None) -> None:
    before = len(reader.found)
    for line in lines:
        reader.feed(line)
    if on_new is not None and len(reader.found) > before:
        for spec in list(reader.found.values())[before:]:
            on_new(spec)


class _Tail:
    """The launches file's complete lines as they are appended (it appears at the first launch)."""

    def __init__(self, path: Path) -> None:
        self.path, self.rest = path, b""
        self.handle: BinaryIO | None = None

    def lines(self, final: bool = False) -> list[str]:
        if self.handle is None:
            try:
                self.handle = open(self.path, "rb")  # noqa: SIM115 - kept open while the command runs
            except FileNotFoundError:
                return []
        data = self.rest + self.handle.read()
        done, _, self.rest = data.rpartition(b"\n")
        if final and self.rest:
            done, self.rest = data, b""  # a line cut short by a crash: read, and named as such
        return done.decode(errors="replace").splitlines() if done else []

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
