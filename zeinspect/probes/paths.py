"""Which path the runtime takes to bring a shipped kernel onto a device, by its own rules.

A product's kernel can reach a device four ways (model.RunPath): a native image built for it;
a fat binary's `generic_ir` member or a zebin's own SPIR-V (`.spv`), which the driver compiles
when the native image has no code for the device; or a SYCL SPIR-V image compiled at the first
launch.  zeinspect builds every path it can for every target named, so that they can be
compared (judge.paths); this module says which one the runtime really takes there, by the rules
of docs/how-it-works.md#paths (intel/llvm's program manager and Level Zero adapter,
compute-runtime's module creation):

1. The SYCL runtime keeps the kernel's images that may run on the device: a native image
   (`spir64_gen`) whose `compile_target` names the device, or that has none (then it may run on
   any GPU); every SPIR-V image (`spir64`).  urDeviceSelectBinary then takes the *first* native
   image among them, else the first SPIR-V image.  No other image is tried if its build fails.
2. The driver builds a native image for the device: the fat binary's member that fits it (its
   code); without one, its `generic_ir` member; a zebin built for another device, from its own
   `.spv`.  Without either, the build fails: the kernel has no path there.

An image's place in the product is its order in the file, which is the order the runtime
registers them in.  Kernels are grouped by the product that ships them (a file, a member of an
archive, a package): two libraries never share a path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..levers import DEFAULT_SHAPE
from ..model import InputId, KernelReport, RunPath, Source, Status, Target

Product = tuple[str | None, str, str | None]
"""(package, file, archive member) a report's image came from."""


def product_of(report: KernelReport) -> Product:
    origin = report.origin
    if origin is None:
        return None, report.input, None
    return origin.package, origin.file, origin.member


@dataclass(frozen=True)
class ShippedImage:
    """One image of a product, as the runtime's choice sees it."""

    path: str
    """Its input's label (what its reports' `input` says)."""
    kind: str
    """`SPIR-V image`, `zebin` or `fat binary`."""
    kernels: frozenset[str] | None
    """The kernels it holds (None: not known, taken as those of its reports)."""
    origin: InputId | None = None
    compile_target: str | None = None
    ir_kind: RunPath | None = None
    """What the driver builds it from on a device it has no code for (None: nothing: it fails)."""
    ir: str | None = None
    """The label of the input built from that IR (None: not built: --no-jit-paths)."""

    @property
    def native(self) -> bool:
        return self.kind != "SPIR-V image"


@dataclass
class Shipments:
    """Every product's images in the order the runtime registers them (probes.collect fills it)."""

    images: dict[Product, list[ShippedImage]] = field(default_factory=dict)

    def add(self, product: Product, image: ShippedImage) -> None:
        self.images.setdefault(product, []).append(image)


def _fits(compile_target: str | None, target: Target) -> bool:
    """Whether a native image with this `compile_target` may run on the target: none (any GPU), or
    the target's name as `-fsycl-targets` spells it (`intel_gpu_bmg_g21`), or its IP version's."""
    if not compile_target:
        return True
    spelled = compile_target.removeprefix("intel_gpu_")
    return spelled in (target.name.replace("-", "_"), target.ip.replace(".", "_"))


@dataclass(frozen=True)
class Choice:
    image: ShippedImage | None
    """The image urDeviceSelectBinary takes (None: the kernel has no image for the device)."""
    input: str | None
    """The input whose build the device runs (None: no path: the build fails there)."""
    via: RunPath | None


def choose(images: list[ShippedImage], kernel: str, target: Target, native_code: set[str]) -> Choice:
    """The runtime's choice for one kernel on one target; `native_code`: the native images that
    have code for the target (a report there)."""
    def holds(image: ShippedImage) -> bool:
        return image.kernels is None or kernel in image.kernels

    native = next((i for i in images if i.native and holds(i) and _fits(i.compile_target, target)), None)
    if native is not None:
        if native.path in native_code:
            return Choice(native, native.path, RunPath.NATIVE)
        return Choice(native, native.ir, native.ir_kind)  # input None: no IR, or its build not asked for
    spirv = next((i for i in images if not i.native and holds(i)), None)
    return Choice(spirv, spirv.path if spirv else None, RunPath.SPIRV if spirv else None)


def mark_taken(reports: list[KernelReport], shipments: Shipments, targets: list[Target]) -> list[KernelReport]:
    """`reports` with `path_taken` set on every report that has a path, and a BUILD_FAILED report
    for each (kernel, target) of a product that has no path there (the runtime picks a native
    image the driver cannot build for that device)."""
    by_name = {t.name: t for t in targets}
    native_code: dict[tuple[Product, str, str], set[str]] = {}
    built: set[tuple[str, str, str]] = set()
    kernels: dict[Product, set[str]] = {}
    for r in reports:
        if r.path is None:
            continue
        built.add((r.input, r.kernel, r.target))
        kernels.setdefault(product_of(r), set()).add(r.kernel)
        if r.path is RunPath.NATIVE:
            native_code.setdefault((product_of(r), r.kernel, r.target), set()).add(r.input)
    choices: dict[tuple[Product, str, str], Choice] = {}
    for product, names in kernels.items():
        images = shipments.images.get(product, [])
        for kernel in names:
            for target in targets:
                choices[product, kernel, target.name] = choose(images, kernel, target,
                                                               native_code.get((product, kernel, target.name), set()))
    out = []
    for r in reports:
        if r.path is None:
            out.append(r)
            continue
        choice = choices.get((product_of(r), r.kernel, r.target))
        taken = choice.input == r.input if choice is not None else r.path is RunPath.NATIVE
        out.append(r.replace(path_taken=taken))
    for (_, kernel, name), choice in choices.items():
        if choice.image is not None and choice.image.ir_kind is None and choice.input is None:
            out.append(_no_path(kernel, by_name[name], choice.image))
    return out


def _no_path(kernel: str, target: Target, image: ShippedImage) -> KernelReport:
    lacks = ("neither a member for it nor a generic_ir member" if image.kind == "fat binary"
             else "no code for it and no SPIR-V (.spv) to rebuild from")
    chosen = f"for {image.compile_target}" if image.compile_target else "without a compile_target: taken on any GPU"
    reason = (f"no path on {target.name}: the runtime selects the native image {image.path} ({image.kind} {chosen}), "
              f"which has {lacks}: the module fails to build at the first launch")
    return KernelReport(input=image.path, kernel=kernel, target=target.name, ip=target.ip, compiler=None,
                        shape=DEFAULT_SHAPE, status=Status.BUILD_FAILED, source=Source.BINARY, reason=reason,
                        path=RunPath.NATIVE, path_taken=True, origin=image.origin)
