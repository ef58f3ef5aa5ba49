"""A Triton library as it runs: its launches captured from a command (triton.capture), then each
distinct specialization screened on every target, as `zeinspect triton FILE.py:KERNEL` would.

One row per kernel x specialization x target; identical specializations collapse, with a count
of launches and the call sites.  The command's own exit status is reported beside the screen
and never decides it.  A screen whose launches were not on an Intel device says so: a library
that chooses its values by device (`X.device.type == "xpu"`) took its other branch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..probes.results import Collection, Progress
from ..settings import Settings
from .capture import CAPTURE_ENV, TARGET_ENV
from .kernel import DTYPE_PREFIX, LAUNCH_OPTIONS, TRITON_GRF_MODES, TritonKernel

SITECUSTOMIZE = "import zeinspect.triton.capture as _zeinspect_capture\n_zeinspect_capture.install()\n"


@dataclass
class Specialization:
    kernel: TritonKernel
    launches: int = 0
    """How often it was launched (a capture) or found (copies in a Triton cache)."""
    sites: list[str] = field(default_factory=list)
    devices: set[str] = field(default_factory=set)
    origin: str | None = None
    """The kernel's Python file where `kernel.file` is not it (a cache entry's TTIR names it)."""
    tag: str | None = None
    """What else sets it apart where its constexprs are not known (a cache entry's folder)."""

    @property
    def describe(self) -> str:
        """What sets it apart, as a row names it: its constexprs and warps."""
        values = ", ".join(f"{k}={str(v).removeprefix(DTYPE_PREFIX)}"
                           for k, v in sorted(self.kernel.constexprs.items()))
        return ", ".join(x for x in (values, f"num_warps={self.kernel.num_warps}", self.tag) if x)

    @property
    def types(self) -> str:
        """Its pointers' types, as the launch's tensors gave them."""
        return ", ".join(f"{k}:{v}" for k, v in self.kernel.signature.items() if str(v).startswith("*"))


@dataclass
class Capture:
    """What a command launched (triton.capture): the source of a library screen."""

    KIND: ClassVar[str] = "capture"
    command: list[str]
    exit_code: int | None
    timed_out: bool
    specializations: list[Specialization]
    problems: list[str] = field(default_factory=list)
    """Lines that did not read, and what the capture could not install."""

    @property
    def launches(self) -> int:
        return sum(s.launches for s in self.specializations)

    @property
    def devices(self) -> set[str]:
        return {d for s in self.specializations for d in s.devices}

    def summary(self) -> str:
        kernels = len({(s.kernel.file, s.kernel.kernel) for s in self.specializations})
        status = ("timed out" if self.timed_out else "crashed" if self.exit_code is not None and self.exit_code < 0
                  else f"exit {self.exit_code}")
        text = (f"captured {self.launches} launches of {kernels} kernels ({len(self.specializations)} "
                f"specializations) from `{' '.join(self.command)[:120]}` ({status}; the command's own status, "
                "not the screen's)")
        if self.specializations and "xpu" not in self.devices:
            text += (f"; its tensors were on {', '.join(sorted(self.devices)) or 'no device'}, not an Intel GPU: "
                     "a library that picks values by device took its other branch")
        return text

    def where(self, spec: Specialization) -> str:
        """Where a specialization came from, for its note."""
        return f"launched {spec.launches} times ({spec.types}), from {', '.join(spec.sites[:3]) or '?'}"

    def to_json(self) -> dict:
        return {"command": self.command, "exit_code": self.exit_code, "timed_out": self.timed_out,
                "launches": self.launches, "devices": sorted(self.devices), "summary": self.summary(),
                "specializations": [{"kernel": s.kernel.label, "values": s.describe, "launches": s.launches,
                                     "signature": s.kernel.signature, "constexprs": s.kernel.constexprs,
                                     "num_warps": s.kernel.num_warps, "attrs": [list(a) for a in s.kernel.attrs],
                                     "sites": s.sites, "devices": sorted(s.devices)}
                                    for s in self.specializations]}


class Source(Protocol):
    """Where a library screen's specializations come from: a capture, or a Triton cache (triton.cache)."""

    KIND: ClassVar[str]
    """Its key in the JSON document."""
    specializations: list[Specialization]
    problems: list[str]

    def summary(self) -> str: ...

    def where(self, spec: Specialization) -> str: ...

    def to_json(self) -> dict: ...


def capture_target(config: Settings) -> dict:
    """What the offline driver answers for in a capture: the first planned target (its
    capabilities, its name, 32 threads per warp as Triton's default)."""
    from ..app.session import open_session
    from .backend import capabilities

    plan = open_session(config).plan(config.targets)
    first = plan.targets[0]
    return {"caps": capabilities(plan.compiler_for_ip[first.ip], first.name), "name": first.name,
            "threads_per_warp": 32}


def capture_environment(folder: Path, target: dict) -> dict[str, str]:
    """The variables a captured process runs with (triton.capture reads them): where its launches
    go, what the offline driver answers for, and a Triton cache of its own in `folder`, so that
    the user's cache is never written."""
    return {CAPTURE_ENV: str(folder / "launches.jsonl"), TARGET_ENV: json.dumps(target),
            "TRITON_CACHE_DIR": str(folder / "triton-cache")}


def capture(command: list[str], *, target: dict, timeout: float | None = None) -> Capture:
    """Run `command` with the capture installed (triton.capture); what it launched, read back."""
    import zeinspect

    package_root = str(Path(zeinspect.__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory(prefix="zeinspect-capture-") as tmp:
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
            from ..errors import UsageError

            raise UsageError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        lines = out.read_text(errors="replace").splitlines() if out.exists() else []
        errors.seek(0)
        said = [line for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
        errors.close()
    got = read_launches(command, code, timed_out, lines)
    if code and said:
        # A library that refuses to run here: where and why in one line (its last), not its traceback.
        got.problems.append(f"the command ended with: {said[-1].strip()[:300]}")
    return got


def read_launches(command: list[str], code: int | None, timed_out: bool, lines: list[str]) -> Capture:
    """The capture's lines (one JSON launch each) as specializations, identical ones counted."""
    found: dict[str, Specialization] = {}
    problems = []
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"capture line {n} does not read (cut short?)")
            continue
        if not isinstance(record, dict) or "error" in record:
            problems.append(str(record["error"]) if isinstance(record, dict) else f"capture line {n} is not a launch")
            continue
        try:
            spec = _specialization(found, record)
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"capture line {n} is not a launch ({exc.__class__.__name__}: {exc})"[:200])
            continue
        spec.launches += 1
        if record.get("site") and record["site"] not in spec.sites:
            spec.sites.append(record["site"])
        spec.devices.update(record.get("devices") or ["no tensor"])
    return Capture(list(command), code, timed_out, list(found.values()), problems)


def _specialization(found: dict[str, Specialization], record: dict) -> Specialization:
    """The specialization a launch record is one of, made at its first launch: identical launches
    are one, keyed by what the kernel is built from (a library's run launches the same few
    kernels thousands of times: no object is made per launch)."""
    num_warps, threads, grf = record.get("num_warps") or 4, record.get("threads_per_warp") or 32, _grf(
        record.get("grf_mode"))
    attrs = record.get("attrs", [])
    key = repr((record["file"], record["kernel"], sorted(record["signature"].items()),
                sorted(record["constexprs"].items()), num_warps, threads, grf, record.get("num_stages"), attrs))
    spec = found.get(key)
    if spec is None:
        spec = found[key] = Specialization(TritonKernel(
            file=record["file"], kernel=record["kernel"], signature=dict(record["signature"]),
            constexprs=dict(record["constexprs"]), num_warps=num_warps, threads_per_warp=threads, grf_mode=grf,
            num_stages=record.get("num_stages"), options_given=frozenset(LAUNCH_OPTIONS),
            attrs=tuple((tuple(k), v) for k, v in attrs)))
    return spec


def _grf(value: Any) -> str:
    return value if value in TRITON_GRF_MODES else "default"


@dataclass
class LibraryScreen:
    source: Source
    collection: Collection = field(default_factory=Collection)

    @property
    def exit_code(self) -> int:
        from ..app.outcome import exit_code

        return exit_code(self.collection.reports, self.collection.incidents)


def screen_captured(got: Source, config: Settings, *, policy: str = "jit",
                    progress: Progress | None = None, backend: Callable[..., Any] | None = None) -> LibraryScreen:
    """Each specialization (captured, or read from a cache) built on every target; its reports
    named by what sets it apart."""
    from ..app.session import open_session
    from ..errors import ZeinspectError
    from .app import screen

    out = LibraryScreen(got)
    out.collection.notes += got.problems
    session = open_session(config, backend=backend) if got.specializations else None
    for n, spec in enumerate(got.specializations, 1):
        try:
            result = screen(spec.kernel, config, policy=policy, session=session)
        except ZeinspectError as exc:
            out.collection.notes.append(f"{spec.kernel.label} [{spec.describe}]: not screened: {exc.one_line()}")
            continue
        collection = result.collections[-1]
        # One row per specialization: the kernel's name with the values that set it apart.
        named = f"{spec.kernel.kernel}[{spec.describe}]"
        file = spec.origin or spec.kernel.file
        collection.reports = [r.replace(kernel=named, input=file) if r.kernel == spec.kernel.kernel
                              else r for r in collection.reports]
        collection.notes = [f"{file}:{named}: {got.where(spec)}"]
        out.collection.extend(collection)
        if progress:
            progress(n, len(got.specializations))
    return out


def screen_run(command: list[str], config: Settings, *, timeout: float | None = None, policy: str = "jit",
               progress: Progress | None = None) -> Any:
    """`zeinspect triton --run -- CMD`: what the command launches, captured and screened (triton.library)."""
    got = capture(command, target=capture_target(config), timeout=timeout)
    return screen_captured(got, config.with_targets(config.targets), policy=policy, progress=progress)
