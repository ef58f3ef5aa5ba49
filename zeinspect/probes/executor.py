"""Running compile jobs: the cache, the process pool, and batching several IPs per ocloc call.

A job is one module for one IP version with one compiler and one set of options.  The
executor answers each job from the cache when it can; the others run in a pool sized to
the cores.  Jobs that differ only in IP are batched into one `ocloc -device ip1,ip2,...`
call per worker, so each worker loads the compiler once instead of once per target
(measured in bench/run.py); the resulting archive is split by member and the log by
ocloc's "Build succeeded for : <ip>" lines, and each IP is cached as if compiled alone.
ocloc stops a fat build at its first failing device and writes nothing, so a failed batch
falls back to one call per IP (that module is simply slower once; then it is cached).
Before that, OpenCL C jobs share ocloc's front end: one `-spv_only` run per group of
targets with the same OpenCL C extensions and features, then SPIR-V to every target
(toolchain.front_end explains why the result is the direct build's).

`Executor` is the small interface a distributed engine could implement instead.
"""

from __future__ import annotations

import functools
import heapq
import math
import os
import queue
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..cache import BuildCache, make_key
from ..errors import FormatError
from ..fileio import sha256
from ..hardware import parse_ip
from ..inputs import Input
from ..inputs.buildlog import LogEventKind, build_verdict, failure_exit, parse_log, says_why
from ..inputs.fatbin import read_members
from ..inputs.includes import keyed_source
from ..inputs.kinds import InputKind
from ..inputs.spirv import read_module
from ..inputs.zebin import read_zebin
from ..levers import Shape
from ..model import Compiler, KernelFigures
from ..toolchain import environment as compiler_environment
from ..toolchain.ocloc import UNQUOTABLE, Flags, compile_argv, multi_exit, multi_line, multi_outputs
from ..toolchain.run import ToolRun, run_tool, stop_compilers
from .dumps import build_fields, keep_dumped, read_dumped
from .results import CompileStats, Progress

if TYPE_CHECKING:  # imported where used: a run whose builds the cache holds starts no thread and dumps nothing
    from concurrent.futures import ThreadPoolExecutor

    from ..toolchain.shader_dump import DumpedBuild

OUTPUT_SKIP_SUFFIXES = (".spv", ".gen", ".dbg", ".ll", ".bc", ".txt", ".log")


class ModuleNeeded(Exception):
    """A job of a bodiless input (Input.digest) that the cache cannot answer: its module's bytes
    must be made again before it can be compiled.  Raised before any compile starts, so that a
    module known only by its digest is never handed to a compiler."""

    def __init__(self, inputs: list[str]):
        super().__init__(f"modules needed: {', '.join(inputs)}")


@dataclass(frozen=True)
class Job:
    input: Input
    module: bytes
    kind: str
    ip: str
    compiler: Compiler
    options: str
    internal_options: str
    shape: Shape
    notes: tuple[str, ...] = ()
    stands_for: Job | None = None
    """Set on a SPIR-V job made from an OpenCL C job by a shared front-end run: it is
    cached, logged and reproduced as that job (see toolchain.front_end)."""
    front_end_log: str = ""
    environment: tuple[tuple[str, str], ...] = ()
    """The compiler's variables it is built under (toolchain.environment.for_compiler): part of its key."""
    reproduce: tuple[str, ...] = ()
    """For an image inside a host file or package (which ocloc cannot read by its name): the
    zeinspect command that builds it the same way, `-t TARGET` to be added."""
    dump: bool = False
    """A SPIR-V module compiled with IGC's ISA dumps on, alone or in an `ocloc multi` list
    (_dumping), never in a fat build of several IPs: the run will measure its scratch users'
    loop traffic (`--cost`, the loop rule), and the same compile gives the plain build
    (probes.dumps) and, kept in the cache where the build may use scratch, their ISA: no second
    compile for the costs."""

    @functools.cached_property
    def module_digest(self) -> str:
        """The module's SHA-256, computed once per job (a library's modules are megabytes); a
        bodiless input's own (Input.digest: its bytes are not at hand)."""
        if self.input.digest is not None and self.module is self.input.data:
            return self.input.digest
        return sha256(self.module)

    @functools.cached_property
    def key(self) -> str:
        if self.stands_for is not None:
            return self.stands_for.key
        module = self.module_digest
        if self.kind == InputKind.OPENCL:  # its headers are part of what it is (inputs.includes)
            module = keyed_source(module, self.module, f"{self.options} {self.internal_options}")
        return make_key(kind="aot", module=module, input_kind=self.kind, ip=self.ip,
                        options=self.options, internal=self.internal_options, compiler=self.compiler.id,
                        environment=[list(kv) for kv in self.environment])

    @property
    def batch_key(self) -> tuple:
        return (id(self.input), self.module_digest, self.kind, self.compiler.id, self.options,
                self.internal_options, self.environment)

    @property
    def process_environment(self) -> dict:
        """The whole environment its ocloc process runs with (toolchain.environment.process)."""
        return compiler_environment.process(self.environment)


@dataclass
class Compiled:
    """One ocloc run (or its cached result) for one module on one IP."""

    run_failure: str | None
    returncode: int | None
    log: str
    binary: bytes | None
    kernel_names: list[str]
    from_cache: bool
    argv: list[str]
    figures: list[KernelFigures] | None = None
    zeinfo_version: tuple[int, int] | None = None
    parse_error: str | None = None
    seconds: float = 0.0
    """How long the compile took (its share of a batched one)."""
    dumped: DumpedBuild | None = None
    """The dumping compile it came from (Job.dump), until the cache has kept its ISA."""


def build_argv(job: Job, file_path: str, out_dir: str | None, device: str) -> list[str]:
    return compile_argv(job.compiler, file_path, device, spirv_input=job.kind == InputKind.SPIRV, out_dir=out_dir,
                        flags=Flags(job.options, job.internal_options))


def _parse(binary: bytes, ip: str) -> tuple[list[KernelFigures] | None, tuple[int, int] | None, str | None]:
    try:
        zebin = read_zebin(binary, f"ocloc output for {ip}", target_ip=ip)
    except FormatError as exc:
        return None, None, str(exc)
    return list(zebin.kernels), zebin.zeinfo_version, None


def _figures_json(figures: list[KernelFigures] | None) -> list[dict] | None:
    return None if figures is None else [f.__dict__ | {"notes": list(f.notes)} for f in figures]


def _figures_from_json(data: Any) -> list[KernelFigures] | None:
    if data is None:
        return None
    return [KernelFigures(**{**d, "notes": tuple(d.get("notes", ())), "calls": tuple(d.get("calls", ()))})
            for d in data]


def _from_cache(meta: dict, payload: bytes) -> Compiled:
    return Compiled(None, meta["returncode"], meta["log"], payload if meta["has_binary"] else None,
                    meta["kernel_names"], True, meta["argv"], _figures_from_json(meta.get("figures")),
                    tuple(meta["zeinfo_version"]) if meta.get("zeinfo_version") else None, meta.get("parse_error"),
                    float(meta.get("seconds") or 0.0))


def _dump_fields(job: Job) -> dict:
    return build_fields(job.compiler.id, job.module_digest, True, job.ip, job.options, job.internal_options,
                        job.environment)


def _from_dump(cache: BuildCache, job: Job) -> Compiled | None:
    """The plain build of a SPIR-V job from the dumping compile of the same build, when the
    cache holds one (probes.dumps: its zebin or its failure, and its log, are the plain
    compile's); None otherwise."""
    if job.kind != InputKind.SPIRV or job.stands_for is not None:
        return None
    return _of_dump(job, read_dumped(cache, _dump_fields(job), local_only=True), from_cache=True)


def _of_dump(job: Job, built: DumpedBuild | None, *, from_cache: bool) -> Compiled | None:
    """A dumping compile as the plain build of `job`: one that built; one that ran to its end and
    did not build (a scratch overflow: the plain compile's exit and log, but for the temporary
    paths of ocloc's framing line "Command was:", which no report reads; tests/integration/
    probes/test_dumps.py), not made again: such a failure is often a run's slowest compile, IGC
    trying every way to fit before it gives up; or a crash or a hang, the finding as it is (a
    hang is not waited for twice).  None for no dump, a success without a zebin, or a failure
    without the compiler's reason (buildlog.says_why: built again plainly)."""
    if built is None:
        return None
    if built.failure is None:
        if built.exit_code == 0 and built.binary is None:
            return None
        if built.exit_code and (built.binary is not None or not says_why(built.log)):
            return None
    binary = None if built.failure else built.binary
    figures = version = error = None
    if binary is not None:
        figures, version, error = _parse(binary, job.ip)
    names = [f.name for f in figures] if figures is not None else _names_from(job, Path(os.devnull))
    argv, log = _as_run(job, Path("module.spv"), Path("out"), built.log)
    returncode = built.exit_code or (None if built.failure else 0)
    return Compiled(built.failure, returncode, log, binary, names, from_cache, argv, figures, version, error,
                    built.seconds, dumped=None if from_cache or built.failure else built)


def _store(cache: BuildCache, job: Job, compiled: Compiled) -> None:
    """A build's entry: what its reports are made of (the zebin's figures, the log), not the
    zebin, which nothing reads again (a run holds no zebin past its figures: _lean) and which
    made most of a Triton screen's cache (a GEMM template's zebin is 100-400 KB).  A dumping
    compile's ISA is kept beside it where the build uses scratch (probes.dumps)."""
    if compiled.run_failure is not None:  # crashes and hangs may be transient: never cached
        return
    cache.put(job.key, {"returncode": compiled.returncode, "log": compiled.log, "has_binary": compiled.binary is not None,
                        "kernel_names": compiled.kernel_names, "argv": compiled.argv,
                        "seconds": round(compiled.seconds, 3),
                        "figures": _figures_json(compiled.figures),
                        "zeinfo_version": list(compiled.zeinfo_version) if compiled.zeinfo_version else None,
                        "parse_error": compiled.parse_error}, b"")
    if (isa := isa_to_keep(compiled)) is not None:
        keep_dumped(cache, _dump_fields(job), isa)


_SCRATCH_EVENTS = (LogEventKind.SPILL, LogEventKind.SPILL_UNKNOWN, LogEventKind.SCRATCH_OVERFLOW)


def isa_to_keep(compiled: Compiled) -> DumpedBuild | None:
    """The dumping compile a build came from, where it may have a scratch user, whose cost reads
    its ISA: a zebin that says so or cannot be read, or a log that speaks of spills (a generous
    test: a build it misses is dumped again by the costs, probes.explain); None otherwise."""
    if compiled.dumped is None or compiled.figures is None:
        return compiled.dumped
    scratch = any(f.spill_bytes or f.private_bytes or f.scratch_space_bytes or f.driver_private_bytes
                  for f in compiled.figures) or any(e.kind in _SCRATCH_EVENTS for e in parse_log(compiled.log))
    return compiled.dumped if scratch else None


def _names_from(job: Job, out: Path) -> list[str]:
    for produced in sorted(out.glob("*.spv")) if out.is_dir() else []:
        try:
            return read_module(produced.read_bytes(), "generated SPIR-V").kernel_names()
        except FormatError:
            return []
    if job.kind == InputKind.SPIRV:
        try:
            return read_module(job.module, job.input.path).kernel_names()
        except FormatError:
            return []
    return []


def _write_module(job: Job, tmp: str) -> Path:
    src = Path(tmp) / ("module.spv" if job.kind == InputKind.SPIRV else "module.cl")
    src.write_bytes(job.module)
    return src


def _as_run(job: Job, src: Path, out: Path, log: str) -> tuple[list[str], str]:
    """The command that reproduces `job` on its own, and its whole log: for a job made by a
    shared front end, the direct OpenCL C build and the front end's lines first."""
    if job.stands_for is None:
        return build_argv(job, str(src), str(out), job.ip), log
    return build_argv(job.stands_for, str(src.with_suffix(".cl")), str(out), job.ip), job.front_end_log + log


def _dumping(jobs: list[Job], timeout: float | None) -> list[Compiled | None]:
    """Dumping compiles (Job.dump) of SPIR-V jobs: one alone, several in one `ocloc multi` process
    (toolchain.shader_dump.dump_isa_many), each module once (IGC names a build's dumps by its
    module); None for one not built there, which the executor builds alone.  Alone, every
    outcome but a missing zebin is the plain build's (_of_dump)."""
    from ..toolchain.shader_dump import DumpModule, dump_isa, dump_isa_many

    first = jobs[0]
    if len(jobs) == 1:
        try:
            alone = dump_isa(first.compiler, first.module, spirv=True, ip=first.ip, options=first.options,
                             internal_options=first.internal_options, timeout=timeout, environment=first.environment)
        except OSError:  # no room for the dumps in the temporary folder: the plain compile says what it can
            return [compile_job(first, timeout)]
        return [_of_dump(first, alone, from_cache=False) or compile_job(first, timeout)]
    once: dict[str, int] = {}
    for n, job in enumerate(jobs):
        once.setdefault(job.module_digest, n)
    chosen = sorted(once.values())
    try:
        got = dump_isa_many(first.compiler, [DumpModule(jobs[n].module, jobs[n].ip, jobs[n].options,
                                                        jobs[n].internal_options) for n in chosen],
                            timeout=timeout, environment=first.environment)
    except OSError:  # no room in the temporary folder: one at a time says why
        return [None] * len(jobs)
    out: list[Compiled | None] = [None] * len(jobs)
    for n, built in zip(chosen, got):
        out[n] = _of_dump(jobs[n], built, from_cache=False)
    return out


def compile_job(job: Job, timeout: float | None) -> Compiled:
    """One ocloc call for one IP."""
    try:
        return _compile_job(job, timeout)
    except OSError as exc:
        # The temporary folder could not be written or read (a full disk): for a job made by
        # a shared front end, the direct build needs less room (source, not SPIR-V); otherwise
        # it is a finding for this (module, target), never cached.
        if job.stands_for is not None:
            return compile_job(job.stands_for, timeout)
        return Compiled(f"could not prepare or read the compile in a temporary folder: {exc.strerror or exc}",
                        None, "", None, [], False, build_argv(job, "module", None, job.ip))


def _compile_job(job: Job, timeout: float | None) -> Compiled:
    with tempfile.TemporaryDirectory(prefix="zeinspect-aot-") as tmp:
        src = _write_module(job, tmp)
        out = Path(tmp) / "out"
        run: ToolRun = run_tool(build_argv(job, str(src), str(out), job.ip), cwd=tmp, timeout=timeout,
                                env=job.process_environment)
        binary = None
        if out.is_dir() and run.returncode == 0:
            for produced in sorted(out.iterdir()):
                if produced.suffix not in OUTPUT_SKIP_SUFFIXES:
                    binary = produced.read_bytes()
                    break
        figures = version = error = None
        if binary is not None:
            figures, version, error = _parse(binary, job.ip)
        # The zebin names its kernels; only a failed build needs them from the module.
        names = [f.name for f in figures] if figures is not None else _names_from(job, out)
    argv, log = _as_run(job, src, out, run.output)
    return Compiled(run.describe_failure(), run.returncode, log, binary, names, False, argv,
                    figures, version, error, run.seconds)


def split_log(text: str) -> dict[str, str]:
    """Per device, the lines an ocloc fat build printed before its verdict for that device."""
    chunks: dict[str, str] = {}
    pending: list[str] = []
    for line in text.splitlines():
        verdict = build_verdict(line)
        pending.append(line)
        if verdict:
            chunks[verdict[1]] = "\n".join(pending) + "\n"
            pending = []
    return chunks


def compile_batch(jobs: list[Job], timeout: float | None) -> list[Compiled | None] | None:
    """One ocloc call for several IPs of one module (a fat build); None in place of each build
    not made there, and None for all when the batch failed without saying where (the caller
    builds those alone)."""
    try:
        return _compile_batch(jobs, timeout)
    except OSError:  # no room in the temporary folder: one job at a time says why
        return None


def _compile_batch(jobs: list[Job], timeout: float | None) -> list[Compiled | None] | None:
    first = jobs[0]
    with tempfile.TemporaryDirectory(prefix="zeinspect-aot-") as tmp:
        src = _write_module(first, tmp)
        out = Path(tmp) / "out"
        argv = build_argv(first, str(src), str(out), ",".join(j.ip for j in jobs))
        run = run_tool(argv, cwd=tmp, timeout=timeout, env=first.process_environment)
        produced = [p for p in sorted(out.iterdir()) if p.suffix not in OUTPUT_SKIP_SUFFIXES] if out.is_dir() else []
        if run.returncode != 0 or run.describe_failure() or len(produced) != 1:
            return _stopped_at(jobs, run, src, out)
        try:
            members = {m.ip: m.data for m in read_members(produced[0].read_bytes(), "ocloc fat build")}
        except FormatError:
            return None
    if any(j.ip not in members for j in jobs):
        return None
    chunks = split_log(run.output)
    names = []
    if first.kind == InputKind.SPIRV:
        names = _names_from(first, Path("/nonexistent"))
    results: list[Compiled | None] = []
    share = run.seconds / len(jobs)
    for job in jobs:
        binary = members[job.ip]
        figures, version, error = _parse(binary, job.ip)
        single, log = _as_run(job, src, out, chunks.get(job.ip, ""))
        results.append(Compiled(None, 0, log, binary, names or [f.name for f in figures or []],
                                False, single, figures, version, error, share))
    return results


def _stopped_at(jobs: list[Job], run: ToolRun, src: Path, out: Path) -> list[Compiled | None] | None:
    """What a fat build that did not finish tells.  ocloc builds the devices one after another
    and stops at the first whose build fails, writing nothing (observed with ocloc 22.43 and
    26.27: `-device bmg-g21,mtl-u` of a module over Xe2's scratch cap never builds mtl-u), so the
    device its output names failed is that failure, as alone: its own lines, and the code of
    its verdict ("Build failed for : <device> with error code: -11") as the exit (245), not
    compiled a second time (a scratch overflow is often the slowest compile of a run: IGC tries
    every way to fit before it gives up); None for the other devices, built again alone (a
    second fat build of them could stop again).  None for all after a crash or a hang, or an
    output that names no device of the batch or no reason for its failure (buildlog.failure_exit);
    and for OpenCL C, whose failed build alone names its kernels from the SPIR-V it leaves."""
    if run.returncode == 0 or run.describe_failure() is not None or jobs[0].kind != InputKind.SPIRV:
        return None
    chunks = split_log(run.output)
    for n, job in enumerate(jobs):
        chunk = chunks.get(job.ip, "")
        code = failure_exit(chunk)
        if code:
            argv, log = _as_run(job, src, out, chunk)
            stopped: list[Compiled | None] = [None] * len(jobs)
            stopped[n] = Compiled(None, code, log, None, _names_from(job, Path(os.devnull)), False, argv,
                                  seconds=run.seconds / len(jobs))
            return stopped
    return None


# `ocloc multi` (toolchain.ocloc): measured on 20 oneMKL RNG images for dg2-g10 (2 cores): 1.34-1.58 s
# in one process against 1.74-1.84 s in twenty, the system time (0.04 against 0.4 s) being the
# process start-ups that vanish.  libocloc's oclocInvoke in a long-lived worker would save the
# same start-ups, but the current stack's libocloc needs a newer libstdc++ than Debian 12's and
# cannot be loaded into this Python (docs/guides/scaling-out.md, "Batched compiles"), and a worker would still need
# a process per batch to contain a crash or a hang: `multi` is that process, and was chosen.
MULTI_MAX_JOBS = 32
"""Builds per `ocloc multi` process at most (so a batch that must be retried costs little)."""
MULTI_MAX_BYTES = 4 << 20
"""SPIR-V bytes per batch at most; a module larger than MULTI_ALONE_BYTES is built alone."""
MULTI_ALONE_BYTES = 1 << 20


def _has_multi(compiler: Compiler) -> bool:
    from ..toolchain.knowledge import has_multi

    return has_multi(compiler)


def multi_eligible(job: Job) -> bool:
    """Whether a job can be one line of an `ocloc multi` list: SPIR-V (an OpenCL C source's
    diagnostics would carry the command's number as their file index, so they stay alone),
    small enough, and options the list's quoting can carry unchanged."""
    return fits_a_multi_line(job.kind == InputKind.SPIRV, len(job.module), job.options + job.internal_options)


def fits_a_multi_line(spirv: bool, size: int, flags: str) -> bool:
    """The rule of multi_eligible, for any build (a dumping compile's too: probes.explain)."""
    return spirv and size <= MULTI_ALONE_BYTES and not UNQUOTABLE.search(flags)


def pack(indices: list[int], jobs: list[Job], workers: int) -> list[list[int]]:
    """Jobs built alone, packed into `ocloc multi` batches of one compiler each: two per worker
    at least, a whole number per worker (so no worker waits for another's last batch alone),
    of about the same SPIR-V size (_balanced), each at most MULTI_MAX_JOBS builds and
    MULTI_MAX_BYTES of SPIR-V; jobs that cannot be batched stay alone.  Two per worker rather
    than more: each `ocloc multi` process pays the compiler's start, and oneMKL DFT's 108 images
    on 2 workers audit 6 % faster in 4 batches than in 8 (a Triton cache's batches no slower);
    fewer would leave a worker idle behind a long batch."""
    out: list[list[int]] = []
    by_compiler: dict[tuple, list[int]] = {}
    for i in indices:
        if multi_eligible(jobs[i]):
            by_compiler.setdefault((jobs[i].compiler.id, jobs[i].environment), []).append(i)
        else:
            out.append([i])
    for members in by_compiler.values():
        # One worker (a Dask task's own pool) needs no balance: full batches.
        if workers > 1:
            total = sum(len(jobs[i].module) for i in members)
            least = max(2 * workers, math.ceil(len(members) / MULTI_MAX_JOBS), math.ceil(total / MULTI_MAX_BYTES))
            count = math.ceil(least / workers) * workers  # a whole number per worker
            out += _balanced(members, jobs, count, math.ceil(len(members) / count))
            continue
        batch: list[int] = []
        size = 0
        for i in members:
            if batch and (len(batch) >= MULTI_MAX_JOBS or size + len(jobs[i].module) > MULTI_MAX_BYTES):
                out.append(batch)
                batch, size = [], 0
            batch.append(i)
            size += len(jobs[i].module)
        if batch:
            out.append(batch)
    return out


def _balanced(members: list[int], jobs: list[Job], count: int, cap: int) -> list[list[int]]:
    """`members` in `count` batches of at most `cap` jobs and of about the same SPIR-V size
    (more where MULTI_MAX_BYTES needs them), the largest batch first.  Why: a module's compile
    time grows with its size, and batches of equal counts but unequal sizes leave a worker
    idle behind the largest (oneMKL DFT on 2 workers: 3 % faster than equal counts in the
    order found, eleven alternating pairs, nine of them faster).  The largest module is placed
    first, each into the lightest batch that has room (the modules come largest first: where
    the lightest batch has no room for one, none has)."""
    batches: list[list[int]] = [[] for _ in range(count)]
    sizes = [0] * count
    lightest = [(0, k) for k in range(count)]  # a heap of (size, batch) of the batches not full
    for i in sorted(members, key=lambda i: len(jobs[i].module), reverse=True):
        if lightest and lightest[0][0] + len(jobs[i].module) <= MULTI_MAX_BYTES:
            _, k = heapq.heappop(lightest)
        else:
            k = len(batches)
            batches.append([])
            sizes.append(0)
        batches[k].append(i)
        sizes[k] += len(jobs[i].module)
        if len(batches[k]) < cap:
            heapq.heappush(lightest, (sizes[k], k))
    return [batches[k] for k in sorted(range(len(batches)), key=lambda k: -sizes[k]) if batches[k]]


def compile_multi(jobs: list[Job], timeout: float | None) -> list[Compiled | None]:
    """Several modules in one `ocloc multi` process; None for each build a crash or a hang left
    unfinished there (the caller builds those alone).  A build that failed there is its own
    failure, as alone: its log is its own output and its exit the code it ends with
    (toolchain.ocloc.multi_exit), not compiled a second time (a scratch overflow is often the
    slowest compile of a run)."""
    try:
        return _compile_multi(jobs, timeout)
    except OSError:
        return [None] * len(jobs)


def _compile_multi(jobs: list[Job], timeout: float | None) -> list[Compiled | None]:
    results: list[Compiled | None] = [None] * len(jobs)
    with tempfile.TemporaryDirectory(prefix="zeinspect-aot-") as tmp:
        lines, places = [], []
        for n, job in enumerate(jobs):
            src = Path(tmp) / f"m{n}.spv"
            src.write_bytes(job.module)
            out = Path(tmp) / f"o{n}"
            places.append((src, out))
            lines.append(multi_line(build_argv(job, src.name, out.name, job.ip)))
        listing = Path(tmp) / "builds.txt"
        listing.write_text("\n".join(lines) + "\n")
        run = run_tool([jobs[0].compiler.path, "multi", listing.name], cwd=tmp, timeout=timeout,
                       env=jobs[0].process_environment)
        share = run.seconds / len(jobs)
        for n, chunk in multi_outputs(run.output, cut_short=run.describe_failure() is not None).items():
            if not 0 <= n < len(jobs):
                continue
            src, out = places[n]
            produced = [p for p in sorted(out.iterdir()) if p.suffix not in OUTPUT_SKIP_SUFFIXES] if out.is_dir() \
                else []
            code = multi_exit(chunk)
            if code is None or len(produced) != (1 if code == 0 else 0):
                continue
            binary = produced[0].read_bytes() if produced else None
            figures = version = error = None
            if binary is not None:
                figures, version, error = _parse(binary, jobs[n].ip)
            names = [f.name for f in figures] if figures is not None else _names_from(jobs[n], out)
            argv, log = _as_run(jobs[n], src, out, chunk)
            results[n] = Compiled(None, code, log, binary, names, False, argv, figures, version, error, share)
    return results


def _module_groups(jobs: list[Job]) -> list[list[str]]:
    """The keys of each module's jobs on the run's targets (a shared store's bundles)."""
    groups: dict[tuple, list[str]] = {}
    for job in jobs:
        source = job.stands_for or job
        groups.setdefault((source.module_digest, source.kind, source.compiler.id, source.options,
                           source.internal_options), []).append(job.key)
    return list(groups.values())


def _lean(compiled: Compiled) -> Compiled:
    """The result without the zebin's bytes once its figures are read: an audit of thousands
    of images on many targets must not hold every zebin (the cache keeps their figures: _store)."""
    if compiled.binary is None or compiled.figures is None:
        return replace(compiled, dumped=None)
    return replace(compiled, binary=b"", dumped=None)


class Executor(Protocol):
    """What runs compile jobs the cache could not answer.

    `run` hands each job's Compiled to `on_result(index, compiled)` as it arrives (in any
    order) and calls `progress(done, total)`; `stats` gives its counters (compiles, front
    ends).  Its jobs are distinct: `CachedExecutor` has already merged identical ones."""

    def run(self, jobs: list[Job], progress: Callable[[int, int], None] | None,
            on_result: Callable[[int, Compiled], None]) -> None: ...

    def stats(self) -> CompileStats: ...


@dataclass
class CachedExecutor:
    """The cache in front of any executor: hits never reach it, results are stored as they
    come back, identical jobs of one run are compiled once."""

    backend: Executor
    cache: BuildCache
    cache_hits: int = 0
    shared: int = 0
    """Jobs answered by an identical job of the same run."""
    _remote_start: tuple[int, int, int, int] = (0, 0, 0, 0)

    def _remote(self) -> tuple[int, int, int, int]:
        store = self.cache.store
        if store is None:
            return (0, 0, 0, 0)
        s = store.stats
        return (s.hits, s.misses, s.errors, s.bytes)

    def run(self, jobs: list[Job], progress: Progress | None = None,
            on_result: Callable[[int, Compiled], None] | None = None) -> list[Compiled]:
        """One Compiled per job, in order; or, with `on_result(index, compiled)`, each handed
        over as it arrives and none kept (an audit of thousands of images streams)."""
        results: list[Compiled | None] = [None] * len(jobs)
        # Identical jobs (the same module bytes, options, IP and compiler: a SYCL library
        # often carries one kernel in several images) are run once and answered together.
        twins: dict[int, list[int]] = {}
        first_of: dict[str, int] = {}
        missed: list[int] = []

        def deliver(i: int, compiled: Compiled) -> None:
            compiled = _lean(compiled)
            for j in (i, *twins.get(i, ())):
                if on_result is None:
                    results[j] = compiled
                else:
                    on_result(j, compiled)

        unique: list[int] = []
        for i, job in enumerate(jobs):
            if job.key in first_of:
                twins.setdefault(first_of[job.key], []).append(i)
                self.shared += 1
            else:
                first_of[job.key] = i
                unique.append(i)
        # Only once every twin is known: a hit is handed to all of them at once.  A shared
        # store is asked for every entry the local cache lacks, together, first.
        self._remote_start = self._remote()
        self.cache.prefetch([jobs[i].key for i in unique], _module_groups([jobs[i] for i in unique]))
        for i in unique:
            hit = self.cache.get(jobs[i].key)
            answered = _from_cache(*hit) if hit is not None else _from_dump(self.cache, jobs[i])
            if answered is not None:
                self.cache_hits += 1
                if hit is None:
                    _store(self.cache, jobs[i], answered)
                deliver(i, answered)
            else:
                missed.append(i)

        def arrived(k: int, compiled: Compiled) -> None:
            _store(self.cache, jobs[missed[k]], compiled)
            deliver(missed[k], compiled)

        try:
            bodiless = list(dict.fromkeys(jobs[i].input.path for i in missed if jobs[i].input.bodiless))
            if bodiless:
                raise ModuleNeeded(bodiless)
            if missed:
                self.backend.run([jobs[i] for i in missed], progress, arrived)
        finally:
            self.cache.flush()
        return results  # type: ignore[return-value]

    def stats(self) -> CompileStats:
        hits, misses, errors, moved = (a - b for a, b in zip(self._remote(), self._remote_start))
        return self.backend.stats() + CompileStats(cache_hits=self.cache_hits, shared=self.shared, remote_hits=hits,
                                                   remote_misses=misses, remote_errors=errors, remote_bytes=moved)


ALONE, DEVICES, MULTI = "alone", "devices", "multi"
"""How a task runs: one ocloc call for one job; one fat call for several IPs of one module;
one `ocloc multi` process for several modules."""


@dataclass(frozen=True)
class Task:
    mode: str
    jobs: list[int]


def _newest_first(ip: str) -> tuple[int, int, int]:
    """A sort key that puts the newest IP version first (a name that is no version, last)."""
    try:
        major, minor, revision = parse_ip(ip)
    except ValueError:
        return (1, 0, 0)
    return (-major, -minor, -revision)


def spread(indices: list[int], workers: int) -> list[list[int]]:
    """Jobs of one module dealt round-robin into at most `workers` tasks (each one ocloc call)."""
    parts = max(1, min(workers, len(indices)))
    return [indices[k::parts] for k in range(parts)]


@dataclass
class LocalExecutor:
    """Compiles on this machine: a thread per core, each running ocloc processes."""

    timeout: float | None = None
    workers: int = 0
    batch: bool = True
    multi: bool = True
    """Build modules built alone several to an `ocloc multi` process (settings: $ZEINSPECT_MULTI=0: off)."""
    share_front_end: bool = True
    compiles: int = 0
    front_ends: int = 0
    multi_batches: int = 0

    def stats(self) -> CompileStats:
        return CompileStats(compiles=self.compiles, front_ends=self.front_ends, multi_batches=self.multi_batches)

    def run(self, jobs: list[Job], progress: Progress | None, on_result: Callable[[int, Compiled], None]) -> None:
        workers = max(1, self.workers or os.cpu_count() or 1)
        total = len(jobs)
        everything = list(range(len(jobs)))
        # Finished tasks arrive on a queue: waiting on thousands of futures at a time
        # (as_completed over all pending, again after each one) costs quadratic time.
        finished: queue.SimpleQueue = queue.SimpleQueue()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            try:
                self._run_tasks(pool, jobs, everything, workers, finished, progress, on_result, total)
            except KeyboardInterrupt:
                # Stopped (Ctrl-C, SIGTERM): the compiles not started never start; those running are
                # ended now (their results are dropped), and what was handed over is kept by the caller.
                stop_compilers()
                pool.shutdown(wait=True, cancel_futures=True)
                raise

    def _run_tasks(self, pool: ThreadPoolExecutor, jobs: list[Job], everything: list[int], workers: int,
                   finished: queue.SimpleQueue, progress: Progress | None,
                   on_result: Callable[[int, Compiled], None], total: int) -> None:
        done = 0
        work = self._share_front_ends(jobs, everything, pool) if self.share_front_end else list(jobs)

        def submit(task: Task) -> None:
            future = pool.submit(self._task, task.mode, [work[i] for i in task.jobs])
            future.add_done_callback(lambda f: finished.put((f, task)))

        outstanding = 0
        for task in self._tasks(work, everything, workers):
            submit(task)
            outstanding += 1
        while outstanding:
            future, task = finished.get()
            outstanding -= 1
            outcome = future.result()
            if outcome is None:  # a failed fat build: one call per IP instead
                outcome = [None] * len(task.jobs)
            for i, compiled in zip(task.jobs, outcome):
                if compiled is None:  # not built in its batch: alone, as any compile
                    submit(Task(ALONE, [i]))
                    outstanding += 1
                    continue
                on_result(i, compiled)
                self.compiles += 1
                done += 1
            if task.mode == MULTI:
                self.multi_batches += 1
            if progress:
                progress(done, total)

    def _tasks(self, work: list[Job], missed: list[int], workers: int) -> list[Task]:
        """Jobs that differ only in IP go to one fat ocloc call per worker; the modules built
        alone go several to an `ocloc multi` process (pack); the rest one by one."""
        groups: dict[tuple, list[int]] = {}
        for i in missed:
            groups.setdefault(work[i].batch_key, []).append(i)
        tasks: list[Task] = []
        alone: list[int] = []
        for group in groups.values():
            # A fat build of several IPs writes every IP's dumps into one folder: dumping builds
            # go several modules to an `ocloc multi` process instead (pack).
            if not self.batch or len(group) < 2 or work[group[0]].dump:
                alone += group
                continue
            # The newest IP first: a fat build stops at the first device that fails and keeps
            # nothing it built before (_stopped_at), and the newest are the likeliest to refuse
            # a module (Xe2 takes no SIMD8, and the corpus's live-set kernel is over the
            # scratch cap there only), so a build that fails costs the least.
            group.sort(key=lambda i: _newest_first(work[i].ip))
            tasks += [Task(DEVICES, part) if len(part) > 1 else Task(ALONE, part) for part in spread(group, workers)]
        batchable = [i for i in alone if self.multi and _has_multi(work[i].compiler)]
        chosen = set(batchable)
        tasks += [Task(ALONE, [i]) for i in alone if i not in chosen]
        if len(batchable) > 1:
            tasks += [Task(MULTI, part) if len(part) > 1 else Task(ALONE, part) for part in pack(batchable, work, workers)]
        else:
            tasks += [Task(ALONE, [i]) for i in batchable]
        return tasks

    def _share_front_ends(self, jobs: list[Job], missed: list[int], pool: ThreadPoolExecutor) -> list[Job]:
        """Replace OpenCL C jobs by SPIR-V jobs, with one front-end run per module and group
        of targets that share a front end.  A front end that fails leaves its jobs as they
        were: the direct builds then report the error for each target as usual."""
        from concurrent.futures import as_completed

        from ..toolchain.front_end import front_end_class, run_front_end

        work = list(jobs)
        modules: dict[tuple, list[int]] = {}
        for i in missed:
            if jobs[i].kind == InputKind.OPENCL and jobs[i].stands_for is None:
                modules.setdefault(jobs[i].batch_key, []).append(i)
        groups: dict[tuple, list[int]] = {}
        for key, members in modules.items():
            for i in members:
                groups.setdefault((key, front_end_class(jobs[i].compiler, jobs[i].ip)), []).append(i)
        # A target alone in its group gains nothing (two processes instead of its share of a
        # batched direct build): only groups of two or more share a front end.
        runs = {pool.submit(run_front_end, jobs[g[0]].compiler, jobs[g[0]].module, jobs[g[0]].ip, jobs[g[0]].options,
                            jobs[g[0]].internal_options, self.timeout, jobs[g[0]].environment): g
                for g in groups.values() if len(g) > 1}
        for future in as_completed(runs):
            front = future.result()
            self.front_ends += 1
            if front.spirv is None:
                continue
            for i in runs[future]:
                work[i] = replace(jobs[i], module=front.spirv, kind=InputKind.SPIRV, stands_for=jobs[i],
                                  front_end_log=front.log, dump=False)
        return work

    def _task(self, mode: str, jobs: list[Job]) -> list[Compiled | None] | None:
        if mode in (ALONE, MULTI) and all(j.dump for j in jobs):
            return _dumping(jobs, self.timeout)
        if mode == ALONE:
            return [compile_job(jobs[0], self.timeout)]
        if mode == MULTI:
            return compile_multi(jobs, self.timeout)
        return list(compile_batch(jobs, self.timeout) or []) or None

