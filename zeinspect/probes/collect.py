"""One entry point from inputs to reports: compile what needs compiling, read the rest.

`inspect`, `kernel` and `audit` all go through `collect_reports`; the CLI stays thin.
"""

from __future__ import annotations

from .. import names
from ..inputs import Input, declared, generic_ir_input
from ..inputs.kinds import InputKind
from ..model import Compiler, RunPath
from ..settings import Settings
from .aot import kernel_wanted, probe
from .binary import Counts, probe_binaries
from .paths import mark_taken
from .results import Collection, Progress
from .session import Session


def collect_reports(paths: list[str], config: Settings, session: Session, *,
                    progress: Progress | None = None, inputs: list[Input] | None = None) -> Collection:
    """Reports for every path: sources compiled for the planned targets, binaries read as they are
    (and, when targets were named (`config.targets_given`), narrowed to them with the missing ones noted).

    Inputs come one at a time (a package's members as they are read), a large host file is
    mapped rather than read (inputs.files.map_file), and its native images are read one by one
    and dropped once reported: at any moment memory holds one native image, the reports and
    the modules waiting to be compiled, whatever the size of the input."""
    from ..inputs import Reading, contained, host_info, iter_host_images, iter_inputs

    explicit_targets = config.targets_given
    out = Collection()
    reading = Reading()
    hosts: dict[str, dict] = {}
    compilable: list[Input] = []
    binaries: list[Input] = []
    counts = Counts()
    plan = session.plan(config.targets) if explicit_targets else None
    found: list[Compiler] | None = session.compilers if explicit_targets else None
    source = iter(inputs) if inputs is not None else iter_inputs(list(paths), reading)
    jit: dict[str, RunPath] = {}
    """The inputs built as a JIT path of a shipped product: SPIR-V images, generic_ir members."""

    def read_native(image: Input) -> None:
        # Read and let go, one native image at a time: a library of a thousand zebins never
        # sits in memory whole.
        got = probe_binaries([image], plan=plan, compilers=found or [], counts=counts, cache=session.cache)
        out.reports += [r.replace(path=RunPath.NATIVE) for r in got.reports if kernel_wanted(r.kernel, config.kernels)]
        out.notes += got.notes
        take_generic_ir(image)

    def take_generic_ir(image: Input) -> None:
        # The driver's JIT path of a fat binary (probes.paths): built for the targets named, to say
        # what a device without a member of its own runs, and to compare with the members.
        if image.kind == InputKind.FATBIN and explicit_targets and config.jit_paths:
            member = generic_ir_input(image)
            if member is not None:
                compilable.append(member)
                jit[member.path] = RunPath.GENERIC_IR

    def read_host(host: Input) -> None:
        notes: list[str] = []
        info = hosts[host.path] = host_info()
        for image in iter_host_images(host, notes, info):
            if image.compilable:
                compilable.append(image)
                jit[image.path] = RunPath.SPIRV
            else:
                contained(image, reading, lambda: read_native(image))  # noqa: B023 - called at once
        out.notes += notes

    def read_all() -> None:
        for inp in source:
            if inp.kind == InputKind.HOST:
                contained(inp, reading, lambda: read_host(inp))  # noqa: B023 - called at once
                out.parts += hosts.get(inp.path, {}).get("parts", [])
                del inp  # a large library's map is closed here (nothing else holds it)
            else:
                out.parts += filter(None, [declared(inp)])
                (compilable if inp.compilable else binaries).append(inp)
                take_generic_ir(inp)

    try:
        read_all()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM while the inputs are read: what was read is kept
        out.stopped = f"while reading the inputs ({len(out.reports)} reports of native images kept; nothing compiled)"
        compilable.clear()
    if compilable or (explicit_targets and found is None):
        found = session.compilers
    if compilable:
        result = probe(compilable, config, session, progress=progress)
        out.extend(result, [r.replace(path=jit[r.input]) if r.input in jit else r for r in result.reports])
        if result.internal_kernels:
            out.notes.append(f"IGC's internal kernels ({', '.join(sorted(names.INTERNAL_KERNELS))}) in "
                             f"{len(result.internal_kernels)} module(s): not user kernels, not reported")
    if binaries:
        plan = out.plan or (session.plan(config.targets) if explicit_targets else None)
        got = probe_binaries(binaries, plan=plan if explicit_targets else None, compilers=found or [], counts=counts,
                             cache=session.cache)
        out.reports += [r.replace(path=RunPath.NATIVE) for r in got.reports if kernel_wanted(r.kernel, config.kernels)]
        out.notes += got.notes
        out.notes += [f"{path}: holds no image for {', '.join(missing)}" for path, missing in got.missing_targets.items()]
    out.plan = out.plan or plan
    out.reports = mark_taken(out.reports)
    out.notes += counts.notes() + reading.notes()
    out.parts += reading.parts
    out.incidents += reading.incidents
    if hosts and explicit_targets:
        plan = out.plan or session.plan(config.targets)
        for path, info in hosts.items():
            missing = [t.name for t in plan.targets if t.ip not in info["ips"]]
            if missing and (info["ips"] or info["spirv"]):
                fallback = ("; its SPIR-V image is compiled at run time there" if info["spirv"]
                            else "; it has no SPIR-V image to fall back on")
                out.notes.append(f"{path}: no native image for {', '.join(missing)}{fallback}")
    return out
