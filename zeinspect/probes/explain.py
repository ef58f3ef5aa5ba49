"""`zeinspect explain`: which source lines spill, per kernel and target, from IGC's own ISA.

Each compilable input is compiled once per planned IP with IGC's shader dumps on
(toolchain.shader_dump), with the options the audit would use; OpenCL C gets `-g` so that
the ISA carries its source lines (SPIR-V keeps the line information it was built with).  The
dumps are read by inputs.isa.  The same compile writes the zebin: IGC may compile a kernel
more than once (its retry with other settings writes one dump per pass), and the pass whose
spill size is the zebin's is the one explained.  Dumps and zebin are cached like any build.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import names
from ..cache import BuildCache, make_key
from ..errors import FormatError, UsageError
from ..fileio import sha256
from ..inputs import Input, expand_host
from ..inputs.buildlog import LogEventKind, parse_log
from ..inputs.includes import keyed_source
from ..inputs.isa import KernelIsa, read_dump
from ..inputs.kinds import InputKind
from ..inputs.zebin import read_zebin
from ..model import Compiler, KernelReport, Remarks
from ..settings import Settings
from ..toolchain.run import stop_compilers
from ..toolchain.shader_dump import THE_MODULE, DumpedBuild, DumpModule, IsaDump, dump_isa, dump_isa_many
from ..toolchain.targets import TargetPlan
from .aot import build_options, prepare_module
from .dumps import build_fields, keep_dumped, read_dumped
from .session import Session


@dataclass
class Explanation:
    input: str
    target: str
    ip: str
    compiler: str
    isa: KernelIsa
    zebin_spill: int | None = None
    """The zebin's spill size for this kernel (.ze_info), None when no zebin was read."""
    passes: int = 1

    @property
    def agrees_with_zebin(self) -> bool | None:
        """Whether the ISA's spill size is the zebin's.  IGC 1.0 rounds what its zebin asks for up
        to a power of two (seen: ISA 16,896 bytes, .ze_info 32,768): that counts as agreeing."""
        if self.zebin_spill is None:
            return None
        return _agrees(self.isa.spill_size or 0, self.zebin_spill)


@dataclass
class ExplainResult(Remarks):
    explanations: list[Explanation] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """Modules that did not build, with the compiler's error lines."""
    compilers: list[Compiler] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    """Source text by file, for the annotated listings (where the file could be read)."""

    def extend(self, other: ExplainResult) -> None:
        self.explanations += other.explanations
        self.notes += other.notes
        self.incidents += other.incidents
        self.failures += other.failures
        self.compilers += [c for c in other.compilers if c not in self.compilers]
        self.sources.update(other.sources)


_PASS = re.compile(r"_(\d+)_simd\d+_entry_")
_KERNEL = re.compile(r"^//\.kernel (\S+)", re.M)


def _agrees(isa_spill: int, zebin_spill: int) -> bool:
    return isa_spill == zebin_spill or (isa_spill > 0 and zebin_spill == 1 << (isa_spill - 1).bit_length())


def _zebin_spills(binary: bytes | None, ip: str) -> dict[str, int]:
    if binary is None:
        return {}
    try:
        return {k.name: k.spill_bytes or 0 for k in read_zebin(binary, "the explained build", target_ip=ip).kernels}
    except FormatError:
        return {}


def _passes(dumps: Sequence[IsaDump], zebin: dict[str, int],
            wanted: Callable[[str], bool] = lambda kernel: True, *, pressure: bool = True
            ) -> list[tuple[KernelIsa, int]]:
    """Per kernel, the dump of the pass that made the binary, and how many passes there were.
    The dump names the pass (`OCL_asm<hash>_simd32_entry_0001.asm` is pass 0, `..._1_simd32_...`
    pass 1); the binary's pass is the last one whose spill size is the zebin's."""
    by_kernel: dict[str, list[tuple[int, KernelIsa]]] = {}
    for dump in dumps:
        named = _KERNEL.search(dump.text[:4096])
        if named and not wanted(named.group(1)):
            continue  # -k: other kernels' dumps are not read
        m = _PASS.search(dump.file)
        isa = read_dump(dump.text, dump.file, pressure=pressure)
        by_kernel.setdefault(isa.kernel, []).append((int(m.group(1)) if m else 0, isa))
    out = []
    for kernel, found in by_kernel.items():
        found.sort(key=lambda x: x[0])
        matching = [isa for _, isa in found if kernel in zebin and _agrees(isa.spill_size or 0, zebin[kernel])]
        out.append((matching[-1] if matching else found[-1][1], len(found)))
    return out


def _build_fields(job: _Job, environment: tuple[tuple[str, str], ...]) -> dict:
    """What a dumping compile's result depends on (probes.dumps.build_fields)."""
    source = sha256(job.data) if job.spirv else keyed_source(sha256(job.data), job.data, f"{job.options} {job.internal}")
    return build_fields(job.compiler.id, source, job.spirv, job.ip, job.options, job.internal, environment)


def _dumped_builds(cache: BuildCache, items: list[tuple[Settings, _Job]]) -> list[DumpedBuild]:
    """Each job's dumping compile (IGC's ISA of each kernel), with its config's time limit and
    compiler environment, from the build cache when it holds it; the others compiled on a pool
    of threads (`jobs` of the first config at a time), SPIR-V modules several to an `ocloc
    multi` process (_batches), as the audit's plain builds are, and kept in the cache."""
    fields = [_build_fields(job, config.compiler_environment) for config, job in items]
    out: list[DumpedBuild | None] = [read_dumped(cache, f) for f in fields]
    twins = [make_key(kind="dump-job", **f, timeout=config.timeout) for f, (config, _) in zip(fields, items)]
    first: dict[str, int] = {}  # the same build asked twice is compiled once
    for n, twin in enumerate(twins):
        if out[n] is None:
            first.setdefault(twin, n)
    missing = sorted(first.values())
    if missing:
        def alone(n: int) -> DumpedBuild:
            config, job = items[n]
            return dump_isa(job.compiler, job.data, spirv=job.spirv, ip=job.ip, options=job.options,
                            internal_options=job.internal, timeout=config.timeout,
                            environment=config.compiler_environment)

        def task(batch: list[int]) -> list[DumpedBuild]:
            config, job = items[batch[0]]
            got: list[DumpedBuild | None] = [None] * len(batch)
            if len(batch) > 1:
                modules = [DumpModule(items[n][1].data, items[n][1].ip, items[n][1].options, items[n][1].internal)
                           for n in batch]
                try:  # the batch's time limit: a plain batch's (probes.executor.compile_multi)
                    got = dump_isa_many(job.compiler, modules, timeout=config.timeout,
                                        environment=config.compiler_environment)
                except OSError:  # no room in the temporary folder: one at a time says why
                    pass
            done = [built or alone(n) for n, built in zip(batch, got)]
            for n, built in zip(batch, done):
                keep_dumped(cache, fields[n], built)
            return done

        workers = max(1, items[0][0].jobs or os.cpu_count() or 1)
        batches = _batches(missing, items, workers)
        pool = ThreadPoolExecutor(max_workers=min(workers, len(batches)))
        try:
            for batch, done in zip(batches, pool.map(task, batches)):
                for n, built in zip(batch, done):
                    out[n] = built
        except KeyboardInterrupt:  # a stop: the compiles running end now, none queued starts
            stop_compilers()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    for n, twin in enumerate(twins):  # the twins of a build compiled once
        if out[n] is None:
            out[n] = out[first[twin]]
    return [built for built in out if built is not None]


def _batches(indices: list[int], items: list[tuple[Settings, _Job]], workers: int) -> list[list[int]]:
    """The dumping compiles to make, in `ocloc multi` batches of one compiler, environment and time
    limit each: SPIR-V that a list's line can carry, at most MULTI_MAX_JOBS builds and
    MULTI_MAX_BYTES of SPIR-V and each module once (IGC names a build's dumps by its module's
    bytes: toolchain.shader_dump), two batches per worker at least (a scratch user's compile can
    take minutes: smaller batches leave no worker idle behind one), of about the same SPIR-V
    size, the largest first.  The others alone."""
    from ..toolchain.knowledge import has_multi
    from .executor import MULTI_MAX_BYTES, MULTI_MAX_JOBS, fits_a_multi_line

    out: list[list[int]] = []
    groups: dict[tuple, list[int]] = {}
    for n in indices:
        config, job = items[n]
        if fits_a_multi_line(job.spirv, len(job.data), job.options + job.internal) and has_multi(job.compiler):
            groups.setdefault((job.compiler.id, config.compiler_environment, config.timeout), []).append(n)
        else:
            out.append([n])
    for members in groups.values():
        count = max(1, min(len(members) // 2, max(2 * workers, -(-len(members) // MULTI_MAX_JOBS))))
        batches: list[list[int]] = [[] for _ in range(count)]
        sizes: list[int] = [0] * count
        modules: list[set[str]] = [set() for _ in range(count)]
        for n in sorted(members, key=lambda n: -len(items[n][1].data)):
            digest, size = sha256(items[n][1].data), len(items[n][1].data)
            room = [k for k in range(len(batches)) if digest not in modules[k] and len(batches[k]) < MULTI_MAX_JOBS
                    and sizes[k] + size <= MULTI_MAX_BYTES]
            if not room:
                batches.append([])
                sizes.append(0)
                modules.append(set())
                room = [len(batches) - 1]
            k = min(room, key=lambda k: sizes[k])
            batches[k].append(n)
            sizes[k] += size
            modules[k].add(digest)
        out += [b for _, b in sorted(zip(sizes, batches), key=lambda x: -x[0]) if b]
    return out


def dump_builds(asked: list[tuple[list[Input], Settings]], session: Session) -> None:
    """The dumping compiles of several (inputs, config) pairs into the build cache, read by
    nobody yet: a shape search that will read the ISA of its SPIR-V builds makes them first,
    and its plain builds are then answered from them (probes.dumps)."""
    cache = session.cache
    jobs: list[tuple[Settings, _Job]] = []
    for inputs, config in asked:
        try:
            jobs += [(config, job) for job in _jobs(inputs, config, session.plan(config.targets), {}, ExplainResult(),
                                                     cache)]
        except UsageError:  # a shape this compiler cannot build: its plain build says why
            continue
    if jobs:
        _dumped_builds(cache, jobs)


SOURCE_LIMIT = 4 << 20


def _attribute_files(isa: KernelIsa, module_file: str | None) -> None:
    """The compiled file itself (and lines the dump names no file for) belong to `module_file`."""
    for x in isa.lines:
        if x.line is not None and x.file in (None, THE_MODULE):
            x.file = module_file


def _read_sources(result: ExplainResult, isa: KernelIsa) -> None:
    """Source text of the files the lines name, for the listing; a file that cannot be read is
    shown through the ISA's own copy of each line."""
    for x in isa.lines:
        if x.file and x.file not in result.sources:
            try:
                path = Path(x.file)
                lines = path.read_bytes().decode(errors="replace").splitlines() if (
                    path.is_file() and path.stat().st_size <= SOURCE_LIMIT) else []
            except OSError:
                lines = []
            result.sources[x.file] = lines


def _with_images(inputs: list[Input], out: ExplainResult) -> Iterator[Input]:
    """The inputs, a host file (a SYCL library or object) replaced by its device images: its
    SPIR-V images are explained with their own options, as the audit builds them."""
    for inp in inputs:
        if inp.kind != InputKind.HOST:
            yield inp
            continue
        images, notes, _ = expand_host(inp)
        out.notes += notes
        yield from images


@dataclass(frozen=True)
class _Job:
    """One dumping compile: an input on the targets of one IP."""

    input: Input
    ip: str
    compiler: Compiler
    targets: tuple[str, ...]
    options: str
    internal: str
    module_file: str | None
    data: bytes
    """What ocloc builds: the input, or its SPIR-V with the shape's rewrites (probes.aot.prepare_module),
    so that the dump is of the build the report came from."""
    spirv: bool


def _jobs(inputs: list[Input], config: Settings, plan: TargetPlan, module_files: dict[str, str],
          out: ExplainResult, cache: BuildCache) -> Iterator[_Job]:
    for inp in _with_images(inputs, out):
        if not inp.compilable:
            out.notes.append(f"{inp.path}: explain compiles sources and SPIR-V; a {inp.kind} has no ISA to read")
            continue
        module_file = module_files.get(inp.path) or (inp.path if inp.kind == InputKind.OPENCL else None)
        if inp.kind == InputKind.OPENCL:
            out.sources[inp.path] = inp.data.decode(errors="replace").splitlines()
        for ip in plan.ips:
            compiler = plan.compiler_for_ip[ip]
            if compiler not in out.compilers:
                out.compilers.append(compiler)
            options, internal, _ = build_options(inp, config, compiler, [t for t in plan.targets if t.ip == ip])
            data, kind, notes = prepare_module(inp, config, compiler, ip, cache)
            if kind == InputKind.OPENCL:
                options = f"{options} -g".strip()
            elif notes and inp.kind == InputKind.OPENCL:  # the rewrite's SPIR-V carries no line information
                said = f"{inp.path}: {'; '.join(notes)}: its source lines are not known in the rewritten module"
                if said not in out.notes:
                    out.notes.append(said)
            yield _Job(inp, ip, compiler, tuple(plan.names_for_ip(ip)), options, internal, module_file, data,
                       kind == InputKind.SPIRV)


def explain(inputs: list[Input], config: Settings, session: Session, plan: TargetPlan | None = None, *,
            module_files: dict[str, str] | None = None) -> ExplainResult:
    """`module_files`: input path -> the source file its lines belong to where the dump does not
    say (OpenCL C: the input itself; Triton: the kernel's module).  The dumping compiles run in
    parallel (`config.jobs`, default one per core); their dumps are read in input order."""
    plan = plan or session.plan(config.targets)
    cache = session.cache
    out = ExplainResult()
    jobs = list(_jobs(inputs, config, plan, module_files or {}, out, cache))
    for job, built in zip(jobs, _dumped_builds(cache, [(config, job) for job in jobs])):
        _read_build(out, job, built, config)
    return out


COST_FORMAT = 1
"""The version of the cached costs (inputs.isa.ScratchCost): how they are computed is in the key."""


def scratch_costs(inputs: list[Input], config: Settings, session: Session) -> tuple[dict[tuple[str, str, str], dict],
                                                                                   list[str]]:
    """(input path, kernel, target) -> the ScratchCost JSON of each kernel `config.kernels`
    selects, from the same dumping compile as `explain` (cached like it), read without the
    register-pressure pass; each build's costs are cached too, so a warm run reads no dump.
    Also the incidents (a crashed or hung dumping compile), one line each."""
    [got] = scratch_costs_each([(inputs, config)], session)
    return got


def scratch_costs_each(asked: list[tuple[list[Input], Settings]], session: Session
                       ) -> list[tuple[dict[tuple[str, str, str], dict], list[str]]]:
    """scratch_costs of several (inputs, config) pairs (a shape search's module shapes), their
    dumping compiles all on one pool of threads (`jobs` of the first config at a time)."""
    cache = session.cache
    jobs = [(n, config, job) for n, (inputs, config) in enumerate(asked)
            for job in _jobs(inputs, config, session.plan(config.targets), {}, ExplainResult(), cache)]

    def cost_key(config: Settings, job: _Job) -> str:
        return make_key(kind=f"isa-cost/{COST_FORMAT}", kernels=sorted(config.kernels),
                        **_build_fields(job, config.compiler_environment))

    # A build's costs are cached: a warm run reads no dump.  The others' dumps, batched.
    known = [cache.get_json(cost_key(config, job)) for _, config, job in jobs]
    unknown = [k for k, hit in enumerate(known) if hit is None]
    found: list[tuple[dict[str, dict], list[str]]] = [(hit or {}, []) for hit in known]
    dumped = _dumped_builds(cache, [(jobs[k][1], jobs[k][2]) for k in unknown]) if unknown else []
    for k, built in zip(unknown, dumped):
        _, config, job = jobs[k]
        read = ExplainResult()
        _read_build(read, job, built, config, pressure=False)
        got = {e.isa.kernel: e.isa.cost().to_json() for e in read.explanations}
        if not read.incidents and not read.failures:  # a crash or a failed dump may not happen again
            cache.put_json(cost_key(config, job), got)
        found[k] = (got, read.incidents)
    out: list[tuple[dict[tuple[str, str, str], dict], list[str]]] = [({}, []) for _ in asked]
    for (n, _, job), (got, said) in zip(jobs, found):
        costs, problems = out[n]
        problems += said
        for kernel, cost in got.items():
            for target in job.targets:  # every target of the job's IP: one build serves them all
                costs[(job.input.path, kernel, target)] = cost
    return out


def users_costs(inp: Input, users: list[KernelReport], config: Settings, session: Session
                ) -> tuple[dict[tuple[str, str, str], dict], list[str]]:
    """scratch_costs for one input's scratch users: a dumping compile of only the targets where
    they use scratch, reading only their dumps (a library image holds many kernels, most clean)."""
    chosen = config.with_targets(sorted({r.target for r in users})).replace(
        kernels=tuple(sorted({r.kernel for r in users})))
    return scratch_costs([inp], chosen, session)


def _read_build(out: ExplainResult, job: _Job, built: DumpedBuild, config: Settings, *, pressure: bool = True
                ) -> None:
    where, target = f"{job.input.path} on {', '.join(job.targets)}", job.targets[0]
    if built.failure:
        out.incidents.append(f"{where}: {built.failure}")
        return
    if built.exit_code:
        errors = [e.line.strip().replace(THE_MODULE, job.input.path) for e in parse_log(built.log)
                  if e.kind == LogEventKind.ERROR][:5]
        out.failures.append(f"{where}: did not build (ocloc exited with {built.exit_code})"
                            + (": " + " | ".join(errors) if errors else ""))
        return
    if not built.dumps:
        out.notes.append(f"{where}: the compiler wrote no ISA dump ({' '.join(built.log.split())[-200:] or 'no output'})")
    zebin = _zebin_spills(built.binary, job.ip)

    def wanted(kernel: str) -> bool:
        return not config.kernels or any(names.matches(p, kernel) for p in config.kernels)

    for isa, passes in _passes(built.dumps, zebin, wanted, pressure=pressure):
        _attribute_files(isa, job.module_file)
        if pressure:  # the listing: not for a cost
            _read_sources(out, isa)
        e = Explanation(job.input.path, target, job.ip, job.compiler.id, isa, zebin.get(isa.kernel), passes)
        if passes > 1:
            out.notes.append(f"{isa.kernel} on {target}: IGC compiled it {passes} times (a retry); "
                             "shown: the pass that made the zebin")
        if e.agrees_with_zebin is False:
            out.notes.append(f"{isa.kernel} on {target}: the ISA's spill size ({isa.spill_size or 0} "
                             f"bytes) differs from the zebin's ({e.zebin_spill} bytes)")
        out.explanations.append(e)
