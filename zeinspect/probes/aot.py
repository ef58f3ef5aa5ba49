"""The AOT probe: compile a module with the real ocloc for each target IP, read what IGC decided.

One compile per distinct IP version (aliases such as rpl-s/adl-s share one), run in
parallel, each result cached by content.  The zebin's .ze_info is the authority for the
figures; the build log adds the spill warning, the PTSS error and any failure text.
A kernel that does not build is a report with a status, never an exception.
"""

from __future__ import annotations

import functools
import itertools
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from .. import names
from ..cache import BuildCache
from ..errors import UsageError
from ..inputs import Input
from ..inputs.buildlog import LogEvent, LogEventKind, compiler_lines, kernel_matches, lines_for_kernel, parse_log
from ..inputs.kinds import InputKind
from ..inputs.spirv import kernel_names, read_module
from ..ledger import Part, input_of
from ..levers import MODULE_LEVERS, How, module_rewrites
from ..levers.register_file import CANDIDATES, grf_spelling
from ..model import (
    LARGE_GRF_WORDS,
    WHOLE_MODULE,
    Compiler,
    KernelFigures,
    KernelReport,
    Source,
    Status,
    Target,
    option_words,
    scratch_limit_for_ip,
    slot_overflow,
)
from ..settings import Settings, merge_options
from ..toolchain.environment import shell_prefix
from ..toolchain.targets import TargetPlan
from .executor import Compiled, Job, ModuleNeeded, build_argv
from .results import Collection, Progress
from .session import Session

if TYPE_CHECKING:  # imported where used: a warm audit of a source file calls none of them (start-up)
    from ..inputs.sycl_image import ImageInfo
    from ..levers.spirv_rewrite import Rewrite
    from ..toolchain.requirements import RequirementCheck

__all__ = ["build_options", "prepare_module", "probe", "reports_for"]


def kernel_wanted(name: str, patterns: tuple[str, ...]) -> bool:
    return not patterns or any(names.matches(p, name) for p in patterns)


def _rewrites_for(inp: Input, config: Settings, compiler: Compiler, ip: str, cache: BuildCache
                  ) -> tuple[Rewrite, ...]:
    """The SPIR-V rewrites this build applies: the config's own, or the shape's rewrite levers
    (those not left as written) for every kernel `config.kernels` selects."""
    if config.rewrites is not None:
        return config.rewrites
    if not module_rewrites("", config.shape):
        return ()
    from .modules import module_spirv

    spirv = module_spirv(inp, config, cache, compiler, ip)
    return tuple(rw for name in read_module(spirv, inp.path).kernel_names() if kernel_wanted(name, config.kernels)
                 for rw in module_rewrites(name, config.shape))


def prepare_module(inp: Input, config: Settings, compiler: Compiler, ip: str, cache: BuildCache
                   ) -> tuple[bytes, str, tuple[str, ...]]:
    """The bytes to hand ocloc: the input itself, or SPIR-V with the shape's rewrites applied."""
    if inp.bodiless and (config.rewrites or module_rewrites("", config.shape)):
        raise ModuleNeeded([inp.path])  # which kernels to rewrite, and how, is read from its bytes
    rewrites = _rewrites_for(inp, config, compiler, ip, cache)
    if not rewrites:
        return inp.data, inp.kind, ()
    from .modules import rewritten

    data, notes = rewritten(inp, rewrites, config, cache, compiler, ip)
    return data, InputKind.SPIRV, notes


class _ImageOptions(NamedTuple):
    """What of a SYCL image decides the options the runtime builds it with (hashable: the key of
    `_options_for`'s memo)."""

    compile_options: str
    link_options: str
    spec_constants: bool
    esimd: bool
    grf_size: str | None
    opt_level: int | None


def _image_options(image: ImageInfo, targets: list[Target], compiler: Compiler,
                   sycl: tuple[tuple[str, str], ...] = ()) -> tuple[str, str, tuple[str, ...]]:
    """(options, internal options, notes) the SYCL runtime would build this image with here.

    A register-file option among them takes the spelling this compiler accepts for that mode
    (some are internal options for ocloc, as NEO treats them when it gets them from the runtime)."""
    asked = _ImageOptions(image.compile_options, image.link_options, image.has_spec_constants, image.is_esimd,
                          image.grf_size, image.opt_level)
    return _options_for(asked, tuple(t.name for t in targets), compiler, sycl)


@functools.lru_cache(maxsize=4096)
def _options_for(image: _ImageOptions, target_names: tuple[str, ...], compiler: Compiler,
                 sycl: tuple[tuple[str, str], ...] = ()) -> tuple[str, str, tuple[str, ...]]:
    """_image_options for one spelling of options: a library's thousands of images share a few."""
    from ..inputs.sycl_image import options_for_target

    tokens, notes = options_for_target(image.compile_options, image.link_options, target_names, esimd=image.esimd,
                                       grf_size=image.grf_size, opt_level=image.opt_level, environment=sycl)
    plain: list[str] = []
    internal: list[str] = []
    for token in tokens:
        mode = next((m for m, cands in CANDIDATES.items() if any(text == token for _, text, _ in cands)), None)
        if mode is None:
            plain.append(shlex.quote(token))
            continue
        spelling = grf_spelling(compiler, mode)
        plain.append(spelling.options)
        internal.append(spelling.internal_options)
    if tokens:
        notes.append(f"built with the image's own options: {shlex.join(tokens)}")
    if image.spec_constants:
        notes.append("specialization constants compiled with their default values")
    return merge_options(*plain), merge_options(*internal), tuple(notes)


def build_options(inp: Input, config: Settings, compiler: Compiler, targets: list[Target]
                  ) -> tuple[str, str, tuple[str, ...]]:
    """(options, internal options, notes) an input is built with for these targets: the user's,
    the shape's register-file spelling, a SYCL image's own, and the zebin request old ocloc needs."""
    image_options, image_internal, image_notes = (
        _image_options(inp.image, targets, compiler, config.sycl_environment) if inp.image is not None
        else ("", "", ()))
    chosen = [lv.build_options(compiler, getattr(config.shape, lv.name))
              for lv in MODULE_LEVERS.of(How.BUILD_OPTION) if lv.build_options is not None]
    internal = merge_options("" if compiler.zebin_by_default else "-cl-intel-allow-zebin",
                             *(c.internal_options for c in chosen), image_internal)
    options = merge_options(config.options_for(inp.path), *(c.options for c in chosen), image_options)
    return options, internal, tuple(c.note for c in chosen if c.note) + image_notes


def _requirements(inp: Input, ip: str, compiler: Compiler, targets: list[Target], compilers: list[Compiler]
                  ) -> list[tuple[Target, RequirementCheck]] | None:
    """Each target's check of a SYCL image's device requirements; None for other inputs."""
    if inp.image is None:
        return None
    from ..toolchain.requirements import check as check_requirements

    return [(t, check_requirements(inp.image, t.name, ip, [compiler] + compilers)) for t in targets]


def _not_applicable(inp: Input, ip: str, compiler: Compiler, config: Settings,
                    checks: list[tuple[Target, RequirementCheck]] | None) -> list[KernelReport] | None:
    """Reports for an image whose device requirements the targets of this IP do not meet; None
    when it is applicable there (targets sharing an IP share their capabilities)."""
    if not checks or not checks[0][1].unmet or inp.image is None:
        return None
    kernels = inp.image.entries or tuple(kernel_names(inp.data, inp.path))
    return [KernelReport(input=inp.path, origin=inp.origin, kernel=name, target=target.name, ip=ip, compiler=compiler.id,
                         shape=config.shape, status=Status.NOT_APPLICABLE, source=Source.AOT,
                         reason=found.reason, unmet_requirements=found.unmet,
                         unchecked_requirements=found.unchecked)
            for target, found in checks for name in kernels]


def _figures_report(job: Job, target: Target, fig: KernelFigures, log_events: list[LogEvent], log_text: str,
                    command: str, zeinfo_version: tuple[int, int], compile_seconds: float = 0.0) -> KernelReport:
    spilled = None
    overflow = None
    log_spill_bytes = None
    retries = 0
    for ev in log_events:
        if kernel_matches(ev.kernel, fig.name):
            if ev.kind == LogEventKind.RETRY:
                retries += "Start recompilation" in ev.line
            elif ev.kind == LogEventKind.SPILL and ev.spill_bytes is not None:
                log_spill_bytes = ev.spill_bytes
            elif ev.kind == LogEventKind.SPILL:
                spilled = ev.spilled_regs
            elif ev.kind == LogEventKind.SCRATCH_OVERFLOW:
                overflow = ev
    limit: int | None = scratch_limit_for_ip(job.ip)
    status = Status.OK
    needed = None
    reason = None
    if overflow is not None:
        status, needed, limit = Status.SCRATCH_OVERFLOW, overflow.needed_bytes, overflow.limit_bytes
        reason = overflow.line.strip()
    elif (why := slot_overflow(fig.largest_scratch_slot, limit)) is not None:
        status, needed, reason = Status.SCRATCH_OVERFLOW, fig.largest_scratch_slot, why
    notes = list(job.notes) + list(fig.notes)
    if fig.has_stack_calls:
        notes.append("kernel uses stack calls: IGC prints no spill warning for it")
    spill_bytes = fig.spill_bytes
    if log_spill_bytes is not None and log_spill_bytes != (fig.spill_bytes or 0):
        # The zebin is the authority, but a kernel whose log says it spills is never clean.
        notes.append(f"the build log says {log_spill_bytes} bytes of spill memory; .ze_info says "
                     f"{fig.spill_bytes or 0}")
        if not fig.spill_bytes:
            spill_bytes = log_spill_bytes
    notes.append(sys.intern(f"ze_info {zeinfo_version[0]}.{zeinfo_version[1]}"))
    if fig.grf is not None and fig.grf < 256 and _asks_large_grf(job.options, job.internal_options):
        # A flag the compiler accepted that did not take effect (Xe-LP has no large register file).
        notes.append(f"the build asks for the large register file and {target.name} built it with {fig.grf} "
                     "registers: the request did not take effect")
    if status is Status.OK and (why := fig.cannot_launch(job.ip)) is not None:
        status, reason = Status.WG_OVERFLOW, why
    return KernelReport(
        input=job.input.path, origin=job.input.origin, kernel=fig.name, target=target.name, ip=job.ip, compiler=job.compiler.id,
        shape=job.shape, status=status, source=Source.AOT, simd=fig.simd, grf=fig.grf,
        spill_bytes=spill_bytes, private_bytes=fig.private_bytes, slm_bytes=fig.slm_bytes,
        scratch_space_bytes=fig.scratch_space_bytes, log_spilled_regs=spilled, needed_scratch_bytes=needed,
        scratch_limit_bytes=limit, required_sub_group_size=fig.required_sub_group_size,
        driver_private_bytes=fig.driver_private_bytes, reason=reason,
        log=tuple(lines_for_kernel(log_text, fig.name)), command=command, notes=tuple(notes),
        options=merge_options(job.options, job.internal_options), work_group_size=fig.work_group,
        eu_thread_count=fig.eu_thread_count, code_bytes=fig.code_bytes, environment=job.environment,
        input_digest=job.module_digest, stack_calls=fig.has_stack_calls, callees=fig.calls, retries=retries,
        compile_seconds=round(compile_seconds, 3) if compile_seconds else None,
    )


def _asks_large_grf(*options: str | None) -> bool:
    return bool(option_words(*options) & set(LARGE_GRF_WORDS))


def _failure_reports(job: Job, target: Target, compiled: Compiled, log_events: list[LogEvent], command: str
                     ) -> list[KernelReport]:
    kernels = [n for n in compiled.kernel_names if not names.is_internal(n)] or [WHOLE_MODULE]
    errors = [ev.line.strip() for ev in log_events if ev.kind in (LogEventKind.ERROR, LogEventKind.SCRATCH_OVERFLOW)]
    if not errors:  # the compiler said why in a form of its own: keep its words
        errors = compiler_lines(compiled.log)
    generic = compiled.run_failure or "; ".join(errors[:5]) or (
        f"ocloc exited with code {compiled.returncode} and wrote no binary")
    overflowed = [ev for ev in log_events if ev.kind == LogEventKind.SCRATCH_OVERFLOW]
    out = []
    for name in kernels:
        own = next((ev for ev in overflowed if kernel_matches(ev.kernel, name)), None)
        if own is not None:
            status, needed, limit, reason = Status.SCRATCH_OVERFLOW, own.needed_bytes, own.limit_bytes, own.line.strip()
        else:
            status, needed, limit = Status.BUILD_FAILED, None, scratch_limit_for_ip(job.ip)
            if overflowed and compiled.run_failure is None:
                others = ", ".join(sorted({ev.kernel or "?" for ev in overflowed}))
                reason = f"module did not build: kernel {others} overflowed the scratch cap"
            else:
                reason = generic
        out.append(KernelReport(
            input=job.input.path, origin=job.input.origin, kernel=name, target=target.name, ip=job.ip, compiler=job.compiler.id,
            shape=job.shape, status=status, source=Source.AOT, needed_scratch_bytes=needed,
            scratch_limit_bytes=limit, reason=reason,
            log=tuple(lines_for_kernel(compiled.log, name)) if name != WHOLE_MODULE else tuple(errors[:20]),
            command=command, notes=job.notes, options=merge_options(job.options, job.internal_options),
            environment=job.environment, input_digest=job.module_digest,
        ))
    return out


def _reproduce(inp: Input, config: Settings) -> tuple[str, ...]:
    """How to build an image of a host file or package again as printed: ocloc cannot read
    `lib.so[.tgtimg[21]]`, zeinspect can (it is an input), and builds it with the image's own
    options, the user's (--options) and the shape's, as this run did."""
    if inp.origin is None or (inp.origin.image is None and inp.image is None and "!" not in inp.path):
        return ()  # a file ocloc reads as it is (a SYCL cache entry's SPIR-V is not: it has an image)
    argv = ["zeinspect", "kernel", inp.path]
    if config.options_for(inp.path):
        argv += ["--options", config.options_for(inp.path)]
    for lever in MODULE_LEVERS:
        value = getattr(config.shape, lever.name)
        if lever.cli is not None and value != lever.default:
            argv += [lever.cli.flag, str(value)]
    return tuple(argv)


def reports_for(job: Job, compiled: Compiled, targets: list[Target]) -> list[KernelReport]:
    events = parse_log(compiled.log)
    out: list[KernelReport] = []
    for target in targets:
        rewritten = job.module is not job.input.data
        file_arg = f"<{job.input.path} rewritten: {'; '.join(job.notes)}>" if rewritten else job.input.path
        argv = [*job.reproduce, "-t", target.name] if job.reproduce else build_argv(job, file_arg, None, target.name)
        command = shell_prefix(job.environment) + shlex.join(argv)
        if compiled.binary is not None and compiled.figures is not None:
            for fig in compiled.figures:
                if names.is_internal(fig.name):
                    continue
                out.append(_figures_report(job, target, fig, events, compiled.log, command,
                                           compiled.zeinfo_version or (0, 0), compiled.seconds))
        elif compiled.binary is not None:
            broken = Compiled(f"ocloc wrote an unreadable binary: {compiled.parse_error}", compiled.returncode,
                              compiled.log, None, compiled.kernel_names, compiled.from_cache, compiled.argv)
            out.extend(_failure_reports(job, target, broken, events, command))
        else:
            out.extend(_failure_reports(job, target, compiled, events, command))
    return out


def _source_declares(inp: Input, kernels: list[str] | None) -> Part:
    """An OpenCL C source's kernels, as the SPIR-V its front end made declares them (a source
    whose front end failed declares none: its failure is the finding)."""
    return Part(input_of(inp.identity), inp.path, tuple(kernels) if kernels else None,
                "SPIR-V entry points of its front end" if kernels else "not declared (its front end made no SPIR-V)",
                compiled=True)


def probe(inputs: list[Input], config: Settings, session: Session, *, progress: Progress | None = None,
          plan: TargetPlan | None = None) -> Collection:
    """Compile every compilable input for every planned IP; reports in input, kernel, target order."""
    compilers = session.compilers
    plan = plan or session.plan(config.targets)
    cache = session.cache
    result = Collection(plan=plan)

    jobs: list[tuple[Job, list[Target]]] = []
    not_applicable: list[KernelReport] = []
    unchecked: dict[int, tuple[str, ...]] = {}  # job index -> requirements assumed met
    for inp in inputs:
        if not inp.compilable:
            continue
        for ip in plan.ips:
            compiler = plan.compiler_for_ip[ip]
            targets = [t for t in plan.targets if t.ip == ip]
            if compiler not in result.compilers:
                result.compilers.append(compiler)
            checks = _requirements(inp, ip, compiler, targets, compilers)
            skipped = _not_applicable(inp, ip, compiler, config, checks)
            if skipped is not None:
                not_applicable += skipped
                continue
            options, internal, build_notes = build_options(inp, config, compiler, targets)
            module, kind, notes = prepare_module(inp, config, compiler, ip, cache)
            job = Job(inp, module, kind, ip, compiler, options, internal, config.shape, notes + build_notes,
                      environment=config.compiler_environment, reproduce=_reproduce(inp, config),
                      # A run that will measure its scratch users' loop traffic builds SPIR-V with
                      # IGC's dumps on (executor.Job.dump): the costs read the ISA of the same compile.
                      dump=config.measures_cost and kind == InputKind.SPIRV)
            jobs.append((job, targets))
            if checks and checks[0][1].unchecked:
                unchecked[len(jobs) - 1] = checks[0][1].unchecked

    executor = session.executor()
    per_job: list[list[KernelReport]] = [[] for _ in jobs]
    failures: dict[int, str] = {}
    front_end: dict[str, list[str]] = {}
    """OpenCL C source -> the kernels its front end's SPIR-V declares (the ledger's table for it)."""

    def take(i: int, compiled: Compiled) -> None:
        """Each result becomes reports as it arrives: no zebin or log outlives its job."""
        job, targets = jobs[i]
        if job.input.kind == InputKind.OPENCL and compiled.kernel_names:
            front_end.setdefault(job.input.path, compiled.kernel_names)
        if any(names.is_internal(f.name) for f in compiled.figures or ()):
            result.internal_kernels.add(job.input.path)
        if compiled.run_failure:
            failures[i] = f"{job.input.path}: {compiled.run_failure} on {', '.join(t.name for t in targets)}"
        per_job[i] = reports_for(job, compiled, targets)
        if i in unchecked:
            per_job[i] = [r.replace(unchecked_requirements=unchecked[i]) for r in per_job[i]]

    try:
        executor.run([job for job, _ in jobs], progress=progress, on_result=take)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the compiles done are kept and reported
        if threading.current_thread() is not threading.main_thread():
            raise  # a probe on a worker thread (a Triton batch's audit): its caller keeps what was whole
        built = sum(1 for got in per_job if got)
        result.stopped = f"after {built} of {len(jobs)} compiles (their reports are kept; a re-run reads them back " \
                         "from the build cache)"
    result.stats = executor.stats()
    result.parts += [_source_declares(inp, front_end.get(inp.path)) for inp in inputs if inp.kind == InputKind.OPENCL]
    result.incidents += [failures[i] for i in sorted(failures)]
    if (trouble := session.cache.take_incident()) is not None:
        result.notes.append(trouble)  # a shared cache that failed is no finding: the run compiled instead

    seen_names: dict[str, int] = {}
    produced: list[KernelReport] = []
    for report in itertools.chain(not_applicable, *per_job):
        seen_names.setdefault(report.kernel, len(seen_names))
        if report.kernel == WHOLE_MODULE or kernel_wanted(report.kernel, config.kernels):
            produced.append(report)
    if config.kernels and seen_names and not any(r.kernel != WHOLE_MODULE for r in produced):
        known = ", ".join(n for n in seen_names if n != WHOLE_MODULE)
        raise UsageError(f"no kernel matches {', '.join(config.kernels)} (kernels: {known})")
    input_order = {inp.path: i for i, inp in enumerate(inputs)}
    kernel_order = seen_names
    target_order = {t.name: i for i, t in enumerate(plan.targets)}
    produced.sort(key=lambda r: (input_order.get(r.input, 0), kernel_order.get(r.kernel, 0),
                                 target_order.get(r.target, 1 << 30)))
    result.reports = produced
    return result


def probe_each(inp: Input, configs: list[Settings], session: Session) -> Iterator[Collection | str]:
    """`inp` built in each of `configs` (a shape search's module shapes, each on its own targets),
    `jobs` at a time on threads, the results in order: each build's reports, or the one-line
    reason a config cannot be built on this compiler (no spelling for its register file)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(config: Settings) -> Collection | str:
        try:
            return probe([inp], config, session, plan=session.plan(config.targets))
        except UsageError as exc:
            return str(exc)

    if not configs:
        return
    workers = max(1, min(len(configs), configs[0].jobs or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(one, configs)
