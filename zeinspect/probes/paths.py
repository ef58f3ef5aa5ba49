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
archive, a package): two libraries never share a path.  A file given by itself (a zebin, a fat
binary) is loaded by the driver as it is: rule 2 alone.

The choice is made only for the targets the user named: without them, native images are read
for the devices they were built for and no JIT path is built, so there is nothing to choose
between (`path_taken` stays unknown, and every report is judged).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hardware import ip_for_name
from ..levers import DEFAULT_SHAPE
from ..model import WHOLE_MODULE, InputId, KernelReport, RunPath, Source, Status, Target

Product = tuple[str | None, str, str | None]
"""(package, file, archive member) a report's image came from."""


def product_of(origin: InputId | None, label: str) -> Product:
    """The product an image (its origin, or its label when it is a file of its own) belongs to."""
    if origin is None:
        return None, label, None
    return origin.package, origin.file, origin.member


def _product(report: KernelReport) -> Product:
    return product_of(report.origin, report.input)


@dataclass(frozen=True)
class ShippedImage:
    """One image of a product, as the runtime's choice sees it."""

    path: str
    """Its input's label (what its reports' `input` says)."""
    kind: str
    """`SPIR-V image`, `zebin` or `fat binary`."""
    kernels: frozenset[str] | None
    """The kernels it holds (None: not known: those of its own reports)."""
    origin: InputId | None = None
    compile_target: str | None = None
    ir_kind: RunPath | None = None
    """What the driver builds it from on a device it has no code for (None: nothing: it fails)."""
    ir: str | None = None
    """The label of the input built from that IR (None: not built: --no-jit-paths)."""

    @property
    def native(self) -> bool:
        return self.kind != "SPIR-V image"

    @property
    def in_a_product(self) -> bool:
        """Whether the runtime chooses among it and others (an image inside a host file), rather
        than the driver being given it alone (a file of its own)."""
        return self.origin is not None and self.origin.image is not None


@dataclass
class Shipments:
    """Every product's images in the order the runtime registers them (probes.collect fills it)."""

    images: dict[Product, list[ShippedImage]] = field(default_factory=dict)

    def add(self, product: Product, image: ShippedImage) -> None:
        self.images.setdefault(product, []).append(image)


def fits(compile_target: str | None, target: Target) -> bool:
    """Whether a native image with this `compile_target` may run on the target: none (any GPU), or
    the device `-fsycl-targets` names (`intel_gpu_bmg_g21`, an alias such as `intel_gpu_acm_g10`,
    or an IP version `intel_gpu_20_1_0`) is the target's."""
    if not compile_target:
        return True
    spelled = compile_target.removeprefix("intel_gpu_")
    return target.ip in (ip_for_name(spelled.replace("_", "-")), spelled.replace("_", "."))


@dataclass(frozen=True)
class Choice:
    image: ShippedImage | None
    """The image urDeviceSelectBinary takes (None: the kernel has no image for the device)."""
    input: str | None
    """The input whose build the device runs (None: none: no IR, or its build not asked for)."""


def choose(holding: list[ShippedImage], target: Target, native_code: set[str]) -> Choice:
    """The runtime's choice for one kernel on one target among the images that hold it, in the
    order the runtime registers them (_holding); `native_code`: the native images that have code
    for the target (a report there)."""
    native = next((i for i in holding if i.native and fits(i.compile_target, target)), None)
    if native is not None:
        return Choice(native, native.path if native.path in native_code else native.ir)
    spirv = next((i for i in holding if not i.native), None)
    return Choice(spirv, spirv.path if spirv else None)


def mark_taken(reports: list[KernelReport], shipments: Shipments, targets: list[Target]) -> list[KernelReport]:
    """`reports` with `path_taken` set on every report that has a path, and a BUILD_FAILED report
    for each (kernel, target) of a product that has no path there (the native image taken has
    neither code nor IR for the device).  `targets`: the targets named (none: nothing chosen)."""
    if not targets:
        return reports
    native_code: dict[tuple[Product, str, str], set[str]] = {}
    reported: dict[str, set[str]] = {}
    kernels: dict[Product, set[str]] = {}
    for r in reports:
        if r.path is None or r.kernel == WHOLE_MODULE:
            continue
        reported.setdefault(r.input, set()).add(r.kernel)
        kernels.setdefault(_product(r), set()).add(r.kernel)
        if r.path is RunPath.NATIVE and r.ip is not None:
            native_code.setdefault((_product(r), r.kernel, r.ip), set()).add(r.input)
    for product, images in shipments.images.items():
        for image in images:
            kernels.setdefault(product, set()).update(image.kernels or ())
    choices: dict[tuple[Product, str, str], Choice] = {}
    for product, names in kernels.items():
        holding = _holding(shipments.images.get(product, []), reported)
        for kernel in names:
            for target in targets:
                choices[product, kernel, target.name] = choose(
                    holding.get(kernel, []), target, native_code.get((product, kernel, target.ip), set()))
    chosen_inputs: dict[tuple[Product, str], set[str]] = {(product, name): set() for product, _, name in choices}
    for (product, _, name), choice in choices.items():
        if choice.input is not None:
            chosen_inputs[product, name].add(choice.input)
    out = []
    for r in reports:
        if r.path is None:
            out.append(r)
        elif r.kernel == WHOLE_MODULE:  # a module that failed before naming its kernels: taken where its input is
            out.append(r.replace(path_taken=r.input in chosen_inputs.get((_product(r), r.target), {r.input})))
        else:
            found = choices.get((_product(r), r.kernel, r.target))
            # A kernel no image lists (a table shorter than the module): judged, never dropped.
            taken = found.input == r.input if found is not None and found.image is not None else True
            out.append(r.replace(path_taken=taken))
    by_name = {t.name: t for t in targets}
    for (_, kernel, name), choice in choices.items():
        if choice.image is not None and choice.image.native and choice.input is None and choice.image.ir_kind is None:
            out.append(_no_path(kernel, by_name[name], choice.image))
    return out


def _holding(images: list[ShippedImage], reported: dict[str, set[str]]) -> dict[str, list[ShippedImage]]:
    """kernel -> the images that hold it (its table's kernels, or for an image whose table is
    unknown, those of its reports: `reported`), in the runtime's order: all `choose` looks at for
    that kernel.  Indexed once per product, not searched per kernel and target: a library of a few
    thousand images, each with its own kernels, made that search quadratic (seconds)."""
    out: dict[str, list[ShippedImage]] = {}
    for image in images:
        for kernel in image.kernels if image.kernels is not None else reported.get(image.path, ()):
            out.setdefault(kernel, []).append(image)
    return out


def _no_path(kernel: str, target: Target, image: ShippedImage) -> KernelReport:
    lacks = ("neither a member for it nor a generic_ir member" if image.kind == "fat binary"
             else "no code for it and no SPIR-V (.spv) to rebuild from")
    if image.in_a_product:
        chosen = f"for {image.compile_target}" if image.compile_target else "without a compile_target: taken on any GPU"
        how = f"the runtime selects the native image {image.path} ({image.kind} {chosen})"
    else:
        how = f"the driver is given {image.path} ({image.kind})"
    reason = f"no path on {target.name}: {how}, which has {lacks}: the module fails to build at the first launch"
    return KernelReport(input=image.path, kernel=kernel, target=target.name, ip=target.ip, compiler=None,
                        shape=DEFAULT_SHAPE, status=Status.BUILD_FAILED, source=Source.BINARY, reason=reason,
                        path=RunPath.NATIVE, path_taken=True, origin=image.origin)
