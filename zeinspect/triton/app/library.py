"""A Triton library as it runs: its launches captured from a command (triton.capture), then each
distinct specialization screened on every target, as `zeinspect triton FILE.py:KERNEL` would.

One row per kernel x specialization x target; identical specializations collapse, with a count
of launches and the call sites.  The command's own exit status is reported beside the screen
and never decides it.  A screen whose launches were not on an Intel device says so: a library
that chooses its values by device (`X.device.type == "xpu"`) took its other branch.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Protocol

from ...ledger import STOPPED, Part
from ...probes.results import Collection, Progress
from ...settings import Settings
from ..capture.record import CAPTURE_ENV, TARGET_ENV
from ..model.kernel import DTYPE_PREFIX, IR_SUFFIX, LAUNCH_OPTIONS, TRITON_GRF_MODES, TritonKernel, entry_kernel

SITECUSTOMIZE = "import zeinspect.triton.capture.record as _zeinspect_capture\n_zeinspect_capture.install()\n"


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
    graph: str | None = None
    """The torch.compile graph Inductor generated it for, in a capture (triton.inductor); None
    for a kernel the command launched itself."""
    problem: str | None = None
    """Why it cannot be screened, known when it was captured (its front end failed in the run)."""
    staged: bool = False
    """Built with the SLM staging pass between Triton's TTGIR and its lowering (`--stage`)."""

    @property
    def describe(self) -> str:
        """What sets it apart, as a row names it: its constexprs and warps."""
        values = ", ".join(f"{k}={str(v).removeprefix(DTYPE_PREFIX)}"
                           for k, v in sorted(self.kernel.constexprs.items()))
        return ", ".join(x for x in (values, f"num_warps={self.kernel.num_warps}", self.tag) if x)

    @property
    def label(self) -> str:
        """`FILE.py:KERNEL`: by its Python file also where it is built from the run's TTIR."""
        return f"{self.origin}:{self.kernel.kernel}" if self.origin and self.graph is None else self.kernel.label

    @property
    def title(self) -> str:
        """The kernel and what sets this specialization apart, as notes and incidents name it."""
        return f"{self.label} [{self.describe}]"

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
    incidents: list[str] = field(default_factory=list)
    xpu: StandIn | None = None
    """What the stand-in XPU device answered (triton.xpu), if the command imported torch."""
    parts: list[Part] = field(default_factory=list)
    """What the capture declares beside its specializations (each declared as it is screened)."""
    DECLARED_BY: ClassVar[str] = "launches the command made"

    @property
    def label(self) -> str:
        """The ledger's input: the command."""
        return " ".join(self.command)[:200]

    @property
    def launches(self) -> int:
        return sum(s.launches for s in self.specializations if s.graph is None)

    @property
    def devices(self) -> set[str]:
        return {d for s in self.specializations for d in s.devices}

    def summary(self) -> str:
        launched = [s for s in self.specializations if s.graph is None]
        generated = [s for s in self.specializations if s.graph is not None]
        kernels = len({s.label for s in launched})
        status = ("timed out" if self.timed_out else "crashed" if self.exit_code is not None and self.exit_code < 0
                  else f"exit {self.exit_code}")
        text = (f"captured {self.launches} launches of {kernels} kernels ({len(launched)} "
                f"specializations) from `{' '.join(self.command)[:120]}` ({status}; the command's own status, "
                "not the screen's)")
        if generated:
            graphs = len({s.graph for s in generated})
            text += (f"; torch.compile: Inductor generated {len({(s.graph, s.kernel.kernel) for s in generated})} "
                     "Triton kernels "
                     f"({len(generated)} autotune configs) for xpu in {graphs} graph{'s' if graphs > 1 else ''}, "
                     "all screened (nothing generated runs here)")
        if self.specializations and "xpu" not in self.devices:
            text += (f"; its tensors were on {', '.join(sorted(self.devices)) or 'no device'}, not an Intel GPU: "
                     "a library that picks values by device took its other branch")
        if self.xpu is not None:
            text += f"; {self.xpu.summary()}"
        return text

    def where(self, spec: Specialization) -> str:
        """Where a specialization came from, for its note."""
        if spec.graph is not None:
            return (f"generated by Inductor for xpu (graph {spec.graph}), compiled from "
                    f"{', '.join(spec.sites[:3]) or '?'}")
        return f"launched {spec.launches} times ({spec.types}), from {', '.join(spec.sites[:3]) or '?'}"

    def to_json(self) -> dict:
        return {"command": self.command, "exit_code": self.exit_code, "timed_out": self.timed_out,
                "launches": self.launches, "devices": sorted(self.devices), "summary": self.summary(),
                "xpu": self.xpu.to_json() if self.xpu is not None else None,
                "specializations": [{"kernel": s.kernel.kernel if s.graph else s.label, "values": s.describe,
                                     "ttir": s.kernel.file if s.kernel.file.endswith(IR_SUFFIX) else None,
                                     "not_screened": s.problem,
                                     "launches": s.launches,
                                     "signature": s.kernel.signature, "constexprs": s.kernel.constexprs,
                                     "num_warps": s.kernel.num_warps, "attrs": [list(a) for a in s.kernel.attrs],
                                     "sites": s.sites, "devices": sorted(s.devices), "inductor_graph": s.graph}
                                    for s in self.specializations]}


@dataclass
class StandIn:
    """What torch.xpu answered the command for, and what it read (triton.xpu's lines)."""

    target: str
    name: str
    answered: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    tensors: str = "host"
    """Where tensors put on xpu were: `host`, on zeinspect's host XPU device (triton.host_xpu);
    `cpu`, CPU tensors that said they were on xpu (when the host device could not be built)."""

    @classmethod
    def of(cls, records: list[dict]) -> StandIn | None:
        head = next((r for r in records if "xpu_target" in r), None)
        if head is None:
            return None
        out = cls(str(head["xpu_target"]), str(head.get("xpu_name")), tensors=str(head.get("xpu_tensors", "cpu")))
        for r in records:
            if "xpu" in r and str(r["xpu"]) not in out.answered:
                out.answered.append(str(r["xpu"]))
            if "xpu_refused" in r and str(r["xpu_refused"]) not in out.refused:
                out.refused.append(str(r["xpu_refused"]))
        return out

    def summary(self) -> str:
        read = ", ".join(self.answered) or "nothing"
        where = ("tensors on xpu in host memory, computed on the CPU" if self.tensors == "host"
                 else "tensors on the CPU")
        text = f"torch.xpu stood in for {self.name} ({self.target}), {where}; the command read: {read}"
        if self.refused:
            text += f"; XPU-only calls it could not answer: {', '.join(self.refused)}"
        return text

    def to_json(self) -> dict:
        return {"target": self.target, "name": self.name, "answered": self.answered, "refused": self.refused,
                "tensors": self.tensors}


class Source(Protocol):
    """Where a library screen's specializations come from: a capture, or a Triton cache (triton.cache)."""

    KIND: ClassVar[str]
    """Its key in the JSON document."""
    specializations: list[Specialization]
    problems: list[str]
    incidents: list[str]
    """Internal errors, each kept to the part of the source it happened on."""
    parts: list[Part]
    """What it declares beside its specializations (a cache's entries that did not read)."""
    DECLARED_BY: ClassVar[str]

    @property
    def label(self) -> str: ...

    def summary(self) -> str: ...

    def where(self, spec: Specialization) -> str: ...

    def to_json(self) -> dict: ...


def capture_target(config: Settings) -> dict:
    """What the offline driver answers for in a capture: the first planned target (its
    capabilities, its name, 32 threads per warp as Triton's default)."""
    from ...app.session import open_session
    from ..build.backend import capabilities

    plan = open_session(config).plan(config.targets)
    first = plan.targets[0]
    return {"caps": capabilities(plan.compiler_for_ip[first.ip], first.name), "name": first.name,
            "threads_per_warp": 32}


def capture_environment(folder: Path, target: dict) -> dict[str, str]:
    """The variables a captured process runs with (triton.capture reads them): where its launches
    go, what the offline driver answers for, and a Triton cache of its own in `folder`, so that
    the user's cache is never written.  Inductor's code for the stand-in XPU goes to a folder of
    zeinspect's build cache, the same each run: the TTIR of a kernel it generates names its
    source file, and the same file each run keeps the same kernel the same key (triton.warm)."""
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
        got.problems.append(f"the command ended with: {said[-1].strip()[:300]}")
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


def read_launches(command: list[str], code: int | None, timed_out: bool, lines: list[str]) -> Capture:
    """The capture's lines (one JSON launch each) as specializations, identical ones counted."""
    reader = LaunchReader()
    for line in lines:
        reader.feed(line)
    return reader.capture(command, code, timed_out)


class LaunchReader:
    """Launch lines read one at a time into specializations.  A line seen before is a launch of
    the specialization it was the first time (the same kernel, values, site and devices): a
    library's run repeats a few lines thousands of times, and those are counted, not parsed."""

    def __init__(self) -> None:
        self.found: dict[str, Specialization] = {}
        self.seen: dict[str, Specialization] = {}
        self.problems: list[str] = []
        self.lost: list[str] = []
        """Launch lines that did not read: launches lost, their kernels unknown (unread)."""
        self.xpu: list[dict] = []
        self.n = 0

    def feed(self, line: str) -> None:
        self.n += 1
        spec = self.seen.get(line)
        if spec is not None:
            spec.launches += 1
            return
        n = self.n
        try:
            record = json.loads(line)
        except ValueError:
            self.problems.append(f"capture line {n} does not read (cut short?)")
            self.lost.append(f"capture line {n} does not read (cut short?)")
            return
        if isinstance(record, dict) and {"xpu", "xpu_target", "xpu_refused"} & set(record):
            self.xpu.append(record)  # what the stand-in XPU answered, or could not (triton.xpu)
            if "error" in record:
                self.problems.append(str(record["error"]))
            return
        if not isinstance(record, dict) or "error" in record:
            self.problems.append(str(record["error"]) if isinstance(record, dict)
                                 else f"capture line {n} is not a launch")
            return
        try:
            spec = (_generated if "inductor" in record else _specialization)(self.found, record)
        except (KeyError, TypeError, ValueError, OSError) as exc:
            self.problems.append(f"capture line {n} is not a launch ({exc.__class__.__name__}: {exc})"[:200])
            self.lost.append(self.problems[-1])
            return
        self.seen[line] = spec
        spec.launches += 1
        if record.get("site") and record["site"] not in spec.sites:
            spec.sites.append(record["site"])
        spec.devices.update(record.get("devices") or ["no tensor"])

    def capture(self, command: list[str], code: int | None, timed_out: bool) -> Capture:
        got = Capture(list(command), code, timed_out, list(self.found.values()), list(self.problems),
                      xpu=StandIn.of(self.xpu))
        got.parts += [Part(got.label, f"{got.label} (launch {n + 1} lost)", None, got.DECLARED_BY, unread=why)
                      for n, why in enumerate(self.lost)]
        return got


def _specialization(found: dict[str, Specialization], record: dict) -> Specialization:
    """The specialization a launch record is one of, made at its first launch: identical launches
    are one, keyed by what the kernel is built from (a library's run launches the same few
    kernels thousands of times: no object is made per launch).  It is built from the TTIR the
    run's own front end wrote (triton.first_stage: the function that ran, with its globals),
    its values kept to name it; or it says why its front end failed there."""
    num_warps, threads, grf = record.get("num_warps") or 4, record.get("threads_per_warp") or 32, _grf(
        record.get("grf_mode"))
    attrs = record.get("attrs", [])
    key = repr((record["file"], record["kernel"], sorted(record["signature"].items()),
                sorted(record["constexprs"].items()), num_warps, threads, grf, record.get("num_stages"), attrs))
    spec = found.get(key)
    if spec is None:
        kernel = TritonKernel(
            file=record["file"], kernel=record["kernel"], signature=dict(record["signature"]),
            constexprs=dict(record["constexprs"]), num_warps=num_warps, threads_per_warp=threads, grf_mode=grf,
            num_stages=record.get("num_stages"), options_given=frozenset(LAUNCH_OPTIONS),
            attrs=tuple((tuple(k), v) for k, v in attrs))
        origin, problem = None, record.get("front_end")
        if record.get("ttir"):
            meta_path = Path(record["ttir"])
            try:
                built = entry_kernel(meta_path.with_suffix(IR_SUFFIX), json.loads(meta_path.read_bytes()))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                problem = f"the TTIR its run wrote does not read ({exc.__class__.__name__}: {exc})"[:300]
            else:
                kernel = dataclasses.replace(built, signature=kernel.signature, constexprs=kernel.constexprs,
                                             attrs=kernel.attrs)
                origin = record["file"]
        spec = found[key] = Specialization(kernel, origin=origin, problem=problem)
    return spec


def _generated(found: dict[str, Specialization], record: dict) -> Specialization:
    """A kernel config Inductor generated for xpu in the command (triton.inductor): its Triton
    cache entry (TTIR and metadata), screened as a cache entry is; named by the command's line
    that ran the compiled code, its graph and its config."""
    meta_path = Path(record["inductor"])
    key = repr(("inductor", str(meta_path)))
    spec = found.get(key)
    if spec is None:
        meta = json.loads(meta_path.read_bytes())
        config = ", ".join(f"{k}={v}" for k, v in (record.get("config") or {}).items() if k != "num_warps")
        site = str(record.get("site") or "")
        graph = str(record.get("graph") or "?")
        spec = found[key] = Specialization(
            entry_kernel(meta_path.with_suffix(IR_SUFFIX), meta), origin=site.rpartition(":")[0] or None,
            tag=f"Inductor graph {graph}" + (f", {config}" if config else ""), graph=graph)
    return spec


def _grf(value: Any) -> str:
    return value if value in TRITON_GRF_MODES else "default"


@dataclass
class LibraryScreen:
    source: Source
    collection: Collection = field(default_factory=Collection)
    profiled: Any = None
    """The reports joined with the run's profile (app.profile), when it names one."""
    stopped: str = ""
    """Where the screen was stopped before its end (Screener.stopped): what it did is kept."""

    @property
    def stats(self) -> Any:
        return self.collection.stats

    @property
    def coverage(self) -> Any:
        """The ledger: every specialization the source declares (a cache's entries, a capture's
        launches), screened, left out for a reason, or unread (judge.coverage)."""
        from ...judge.coverage import account

        return account(self.collection.parts, self.collection.reports)

    def unread_incidents(self) -> list[str]:
        """The ledger's incidents, but for the specializations a stop left (its line says how many)."""
        return self.coverage.incidents()

    @property
    def outcome(self) -> Any:
        """The screen's Outcome (app.outcome): a specialization not screened is unread (exit 3)."""
        from ...app.outcome import of_reports

        got = of_reports(self.collection.reports, self.collection.incidents + self.unread_incidents())
        return got.stopped_at(self.stopped) if self.stopped else got


class Screener:
    """Specializations screened one at a time on every target, through one session: as a
    capture reads them (while the command runs) or all at the end (screen_captured)."""

    def __init__(self, config: Settings, *, backend: Callable[..., Any] | None = None) -> None:
        self.config, self.backend = config, backend
        self.session: Any = None
        self.done: dict[int, Collection | str] = {}
        """id(specialization) -> its collection, or why it was not screened."""
        self.stopped = ""
        """Where a screen of many was stopped (Ctrl-C, SIGTERM), or "" when it ran to its end."""

    def screen(self, spec: Specialization) -> Collection | str:
        if id(spec) in self.done:
            return self.done[id(spec)]
        from ...app.session import open_session
        from ...errors import ZeinspectError, debugging, internal_incident
        from .single import screen

        if spec.problem is not None:
            self.done[id(spec)] = spec.problem
            return spec.problem
        if self.session is None:
            self.session = open_session(self.config, backend=self.backend)
        try:
            got: Collection | str = screen(spec.kernel, self.config, session=self.session,
                                           stage=spec.staged).collections[-1]
        except ZeinspectError as exc:
            got = exc.one_line()
        except Exception as exc:  # noqa: BLE001 - one specialization's internal error is its incident
            if debugging():
                raise
            got = Collection(incidents=[internal_incident(spec.title, exc)])
        self.done[id(spec)] = got
        return got


SCREEN_BATCH = 16
"""Specializations per batch when many are screened at once: small enough that progress moves
and a stopped run keeps nearly all it did, large enough that each target group's SPIR-V still
fills several `ocloc multi` processes (probes.executor.pack)."""


AUDITS_AT_ONCE = 2
"""Batches whose compiles may run at once: a batch's last compiles (and the rebuilds Triton's
policy asks for once its first builds are read) leave cores idle that the next batch's first
compiles take.  The process-wide bound on compiles (toolchain.run.SLOTS) holds across them."""


def _screen_all(screener: Screener, specs: list[Specialization], progress: Progress | None) -> None:
    """Every specialization not screened yet, batch by batch (SCREEN_BATCH): Triton builds a
    batch on this thread while ocloc audits the one before on another (triton.probe.build_many,
    audit_many), so the front end and the compiler overlap, and ocloc audits two batches at once
    (AUDITS_AT_ONCE).  Progress moves batch by batch, and a run stopped by Ctrl-C or SIGTERM
    keeps every batch done (`screener.stopped` says where)."""
    from concurrent.futures import Future, ThreadPoolExecutor
    from functools import partial

    from ...app.session import open_session
    from ..build.front_ends import FrontEnds
    from ..probes.audit import audit_many, build_many

    # The largest IR first: its compiles take longest, and the last batch's compiles are the run's
    # tail, on fewer cores than there are (the reports keep the order of `specs`).
    for spec in specs:
        if spec.problem is not None:  # its front end failed in the run: nothing to build
            screener.done.setdefault(id(spec), spec.problem)
    todo = sorted((s for s in specs if id(s) not in screener.done), key=_ir_size, reverse=True)
    if not todo:
        return
    if screener.session is None:
        screener.session = open_session(screener.config, backend=screener.backend)
    batches = [todo[i:i + SCREEN_BATCH] for i in range(0, len(todo), SCREEN_BATCH)]
    count = 0
    # Every front end a cache's TTIR needs, started at once in workers (triton.front_ends): the
    # batches below take them in order while ocloc audits the batch before.
    front_ends = FrontEnds([s.kernel for s in todo], screener.session.plan(screener.config.targets),
                           screener.config.triton_workers, cache=screener.session.cache)

    def keep(batch: list[Specialization], got: list[Collection | str]) -> None:
        nonlocal count
        for spec, result in zip(batch, got):
            screener.done[id(spec)] = result
        count += len(batch)
        if progress:
            progress(count, len(todo))

    back = ThreadPoolExecutor(AUDITS_AT_ONCE, thread_name_prefix="zeinspect-triton-audit")
    pending: deque[tuple[list[Specialization], Future]] = deque()

    def take_oldest() -> None:
        done, future = pending.popleft()
        keep(done, _contained(done, future.result))

    try:
        for batch in batches:
            built = _contained(batch, partial(build_many, [s.kernel for s in batch], screener.config,
                                              screener.session, front_ends, [s.staged for s in batch]))
            while pending and (len(pending) >= AUDITS_AT_ONCE or pending[0][1].done()):
                take_oldest()
            if isinstance(built, list):  # the batch's front end failed as a whole: its incidents
                keep(batch, built)
            else:
                pending.append((batch, back.submit(audit_many, built)))
        while pending:
            take_oldest()
    except KeyboardInterrupt:
        for done, future in pending:  # audited while Triton built the batches after them
            if future.done():
                keep(done, _contained(done, future.result))
        screener.stopped = f"after {count} of {len(todo)} specializations (their reports are kept; a re-run " \
                           "reads them back from the build cache)"
    finally:
        front_ends.close()
        back.shutdown(wait=screener.stopped == "", cancel_futures=True)


def _ir_size(spec: Specialization) -> int:
    """The size of the specialization's IR file (a cache's TTIR); 0 for a source kernel."""
    if not spec.kernel.file.endswith(IR_SUFFIX):
        return 0
    try:
        return os.path.getsize(spec.kernel.file)
    except OSError:
        return 0  # its build says what is wrong with it


def _contained(batch: list[Specialization], work: Callable[[], Any]) -> Any:
    """`work()` for a batch, its results as Collections or one-line errors; an internal error is
    an incident of each specialization of the batch (a list of them), never the run's."""
    from ...errors import ZeinspectError, debugging, internal_incident

    try:
        got = work()
    except Exception as exc:  # noqa: BLE001 - the batch's internal error: each specialization's, one by one
        if debugging():
            raise
        return [Collection(incidents=[internal_incident(s.title, exc)]) for s in batch]
    if isinstance(got, list):
        return [r.one_line() if isinstance(r, ZeinspectError) else r for r in got]
    return got


def row_names(specs: list[Specialization]) -> dict[int, str]:
    """One row per specialization: the kernel's name with the values that set it apart, its
    pointers' types where those are what differ (a kernel launched on fp32 and on bf16), and a
    count where nothing Triton was given tells them apart (their alignment, say)."""
    def base(spec: Specialization) -> str:
        return f"{_shown_file(spec)}:{spec.kernel.kernel}[{spec.describe}]"

    def typed(spec: Specialization) -> str:
        return f"{spec.kernel.kernel}[{spec.describe}, {spec.types}]"

    seen = Counter(base(s) for s in specs)
    label = {id(s): typed(s) if seen[base(s)] > 1 else f"{s.kernel.kernel}[{s.describe}]" for s in specs}
    alike: dict[tuple[str, str], list[Specialization]] = {}
    for s in specs:
        alike.setdefault((_shown_file(s), label[id(s)]), []).append(s)
    for members in alike.values():
        for n, s in enumerate(members if len(members) > 1 else [], 1):
            label[id(s)] = f"{label[id(s)][:-1]}, #{n}]"
    return label


def _shown_file(spec: Specialization) -> str:
    """The file a specialization's rows name (screen_captured): the line of the command that ran
    it where it has one (an Inductor kernel), else its kernel's file."""
    return spec.origin or spec.kernel.file


def with_levers(specs: list[Specialization], *, stage: bool, launch: Any) -> list[Specialization]:
    """The specializations with the launch options given set on each (`--num-warps`, ...), and,
    with `stage`, each again with the SLM staging pass (a row of its own, `staged`): every lever
    of a FILE.py:KERNEL screen on every way in (issue 63)."""
    if launch:
        for spec in specs:
            spec.kernel = spec.kernel.with_options(dict(launch))
            spec.tag = ", ".join(x for x in (spec.tag, ", ".join(f"{k}={v}" for k, v in launch.items())) if x)
    staged = [dataclasses.replace(s, staged=True, tag=", ".join(x for x in (s.tag, "staged") if x)) for s in specs
              if stage]
    return [*specs, *staged]


def screen_captured(got: Source, config: Settings, *, progress: Progress | None = None,
                    backend: Callable[..., Any] | None = None, screener: Screener | None = None,
                    stage: bool = False, launch: Any = None) -> LibraryScreen:
    """Each specialization (captured, or read from a cache) built on every target; its reports
    named by what sets it apart.  `screener`: one that screened some of them already; `stage`
    and `launch`: the levers given (with_levers)."""
    from ...app.outcome import failing

    screener = screener or Screener(config, backend=backend)
    out = LibraryScreen(got)
    out.collection.notes += got.problems
    out.collection.incidents += got.incidents
    out.collection.parts += got.parts
    specs = with_levers(list(got.specializations), stage=stage, launch=launch)
    names = row_names(specs)
    _screen_all(screener, specs, progress)
    out.stopped = screener.stopped
    quiet = 0
    for spec in specs:
        named = names[id(spec)]
        file = _shown_file(spec)
        part = Part(got.label, file, (named,), got.DECLARED_BY, copies=max(1, spec.launches))
        if out.stopped and id(spec) not in screener.done:
            out.collection.parts.append(replace(part, unread=STOPPED))
            continue  # counted in the stop's line (LibraryScreen.outcome)
        collection = screener.screen(spec)
        if isinstance(collection, str):
            out.collection.parts.append(replace(part, unread=f"not screened: {collection}"))
            continue
        out.collection.parts.append(part)
        collection.reports = [r.replace(kernel=named, input=file) if r.kernel == spec.kernel.kernel
                              else r for r in collection.reports]
        # Where a specialization came from is said for those that need a look (scratch, a failed
        # or unlaunchable build): a cache of 500 clean entries would otherwise print 500 notes.
        # The JSON keeps every one's entries or launch sites (`cache` / `capture`).
        if not collection.reports or failing(collection.reports) or any(r.uses_scratch for r in collection.reports):
            collection.notes = [f"{file}:{named}: {got.where(spec)}"]
        else:
            collection.notes, quiet = [], quiet + 1
        out.collection.extend(collection)
    if quiet:
        out.collection.notes.append(
            f"{quiet} {'specialization' if quiet == 1 else 'specializations'} clean on every target: where each came "
            f"from is in the JSON document ({got.KIND}.specializations)")
    return out


def screen_run(command: list[str], config: Settings, *, timeout: float | None = None,
               progress: Progress | None = None, stage: bool = False, launch: Any = None) -> Any:
    """`zeinspect triton --run -- CMD`: what the command launches, captured and screened (triton.library).

    Each launched specialization goes through Triton's front end in the command itself, at
    Triton's pre-compile hook (triton.first_stage: the function that ran, with its globals): its
    TTIR is written to the capture's Triton cache.  After the command, every specialization (and
    every kernel torch.compile generated, triton.inductor) is screened from its TTIR as a cache's
    entries are: batched, their front ends in workers, ocloc in batches.  A launch whose front end
    failed in the command is that specialization's finding (unread: exit 3)."""
    config = config.with_targets(config.targets)
    screener = Screener(config)

    def launched(spec: Specialization) -> object:
        if launch:  # its options change first (with_levers): screened with the others after the command
            return None
        # A kernel rebuilt from its module (the capture without its front end) is screened as it
        # is read; one the run's front end wrote as TTIR is screened with the others after the
        # command, batched as a cache's entries are (its front ends in workers, ocloc in batches).
        return screener.screen(spec) if spec.graph is None and not spec.kernel.file.endswith(IR_SUFFIX) else None

    with tempfile.TemporaryDirectory(prefix="zeinspect-capture-") as tmp:
        got = capture(command, target=capture_target(config), timeout=timeout, meanwhile=_load_screen,
                      on_new=launched, folder=Path(tmp))
        return screen_captured(got, config, progress=progress, screener=screener, stage=stage, launch=launch)


def _load_screen() -> None:
    """The modules the screen and its report need, loaded while the captured command runs."""
    from .. import views  # noqa: F401
    from ..build import warm  # noqa: F401
    from . import single  # noqa: F401

    warm.installed()  # the installed Triton and torch, looked up once
