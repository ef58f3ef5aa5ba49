"""One entry point from inputs to reports: compile what needs compiling, read the rest.

`inspect`, `kernel` and `audit` all go through `collect_reports`; the CLI stays thin.
"""

from __future__ import annotations

from .. import names
from ..inputs import Input, declared, generic_ir_input, native_ir_input
from ..inputs.fatbin import GENERIC_IR_SUFFIX
from ..inputs.kinds import InputKind
from ..model import WHOLE_MODULE, Compiler, RunPath
from ..settings import Settings
from ..toolchain.targets import TargetPlan
from .aot import kernel_wanted, probe
from .binary import Counts, probe_binaries
from .paths import Shipments, ShippedImage, mark_taken, product_of
from .results import Collection, Progress
from .session import Session

IR_KINDS = (InputKind.FATBIN, InputKind.ZEBIN)
"""Native images the driver can rebuild from IR they carry (a generic_ir member, a zebin's .spv)."""


def _declared_kernels(image: Input) -> frozenset[str] | None:
    """The kernels a native image holds, read from it (an image without the runtime's table)."""
    from ..errors import FormatError, InputError

    try:
        part = declared(image)
    except (FormatError, InputError):
        return None
    return frozenset(part.kernels) if part is not None and part.kernels is not None else None


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
    # The inputs built as a JIT path of a shipped product (SPIR-V images, generic_ir members),
    # held like any module waiting to be compiled.
    jit: dict[str, RunPath] = {}
    any_gpu: set[str] = set()  # files with a native image the runtime takes on any GPU (no compile_target)
    shipments = Shipments()

    def read_native(image: Input) -> None:
        # Read and let go, one native image at a time: a library of a thousand zebins never
        # sits in memory whole.
        got = probe_binaries([image], plan=plan, compilers=found or [], counts=counts, cache=session.cache)
        out.reports += [r.replace(path=RunPath.NATIVE) for r in got.reports if kernel_wanted(r.kernel, config.kernels)]
        out.notes += got.notes
        ship(image, got.reports)

    def ship(image: Input, reports: list) -> None:
        # Where the runtime would take this image, and the driver's JIT path of a native one (its
        # generic_ir member, a zebin's .spv): built for the targets named, to say what a device
        # without code of its own runs, and to compare with the native code (probes.paths).
        info = image.image
        kernels = frozenset(info.kernels) if info is not None and info.version is not None else \
            frozenset(r.kernel for r in reports) or _declared_kernels(image)
        if image.compilable:
            jit[image.path] = RunPath.SPIRV
            shipments.add(product_of(image.origin, image.path), ShippedImage(image.path, "SPIR-V image", kernels, image.origin))
            return
        fat = image.kind == InputKind.FATBIN
        ir = (generic_ir_input(image) if fat else native_ir_input(image)) if image.kind in IR_KINDS else None
        via = (RunPath.GENERIC_IR if fat else RunPath.NATIVE_IR) if ir is not None else None
        built = None
        if ir is not None and via is not None and explicit_targets and config.jit_paths:
            compilable.append(ir)
            jit[ir.path] = via
            built = ir.path
        compile_target = info.requirements.compile_target if info is not None else None
        if not compile_target:
            any_gpu.add(image.identity.file)
        shipped = ShippedImage(image.path, "fat binary" if fat else "zebin", kernels, image.origin, compile_target, via,
                               built)
        shipments.add(product_of(image.origin, image.path), shipped)

    def read_host(host: Input) -> None:
        notes: list[str] = []
        info = hosts[host.path] = host_info()
        for image in iter_host_images(host, notes, info):
            if image.compilable:
                compilable.append(image)
                ship(image, [])
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
                if not inp.compilable:
                    ship(inp, [])

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
        out.notes += [f"{path}: holds no image for {', '.join(missing)}" + (
            "; its generic_ir member is built there (the paths lines say what runs)" if path + GENERIC_IR_SUFFIX in jit
            else "")
            for path, missing in got.missing_targets.items()]
    out.plan = out.plan or plan
    if explicit_targets:
        out.reports = [r for r in mark_taken(out.reports, shipments, list((out.plan or plan or
                                                                          session.plan(config.targets)).targets))
                       if kernel_wanted(r.kernel, config.kernels) or r.kernel == WHOLE_MODULE]
    out.notes += counts.notes() + reading.notes()
    out.parts += reading.parts
    out.incidents += reading.incidents
    if hosts and explicit_targets:
        out.notes += _without_native_code(hosts, out.plan or session.plan(config.targets), any_gpu)
    return out


def _without_native_code(hosts: dict[str, dict], plan: TargetPlan, any_gpu: set[str]) -> list[str]:
    """A note per host file that has no native image for some targets named: what runs there."""
    notes = []
    for path, info in hosts.items():
        missing = [t.name for t in plan.targets if t.ip not in info["ips"]]
        if missing and (info["ips"] or info["spirv"]):
            fallback = ("; the runtime still selects its native images there (they name no compile_target): "
                        "the paths line says what the driver builds" if path in any_gpu
                        else "; its SPIR-V image is compiled at run time there" if info["spirv"]
                        else "; it has no SPIR-V image to fall back on")
            notes.append(f"{path}: no native image for {', '.join(missing)}{fallback}")
    return notes
