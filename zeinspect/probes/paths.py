"""Which path the runtime takes to bring a shipped kernel onto a device, by its own rules.

A product's kernel can reach a device three ways (model.RunPath): a native image built for it,
a fat binary's `generic_ir` member the driver compiles when no member fits, or a SYCL SPIR-V
image compiled at the first launch.  zeinspect builds every path it can for every target
named, so that they can be compared (judge.paths); this module says which one the runtime
really takes there, by the rules docs/how-it-works.md#paths cites:

1. A native image for the device wins: the Level Zero adapter's urDeviceSelectBinary takes the
   first `spir64_gen` image over any `spir64` one, and the driver loads the fat binary's member
   that fits the device (probes.binary.member_rank).
2. A fat binary without a member for the device: the driver compiles its `generic_ir` member,
   with the build options that member records.
3. Otherwise the SPIR-V image, compiled with the image's options and the runtime's.

A (kernel, target) with builds of several paths keeps them all; only the first path of the
order above is taken.  Kernels are grouped by the product that ships them (a file, a member of
an archive, a package): two libraries never share a path.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import KernelReport, RunPath

ORDER = (RunPath.NATIVE, RunPath.GENERIC_IR, RunPath.SPIRV)
"""The runtime's preference, first to last (the module docstring's rules)."""


def product_of(report: KernelReport) -> tuple[str | None, str, str | None]:
    """The shipped file a report's image came from: (package, file, archive member)."""
    origin = report.origin
    if origin is None:
        return None, report.input, None
    return origin.package, origin.file, origin.member


def taken_path(paths: Iterable[RunPath]) -> RunPath | None:
    """The path the runtime takes among the ones built for one kernel on one target."""
    present = set(paths)
    return next((p for p in ORDER if p in present), None)


def mark_taken(reports: list[KernelReport]) -> list[KernelReport]:
    """`reports` with `path_taken` set on every report that has a path."""
    built: dict[tuple, set[RunPath]] = {}
    for r in reports:
        if r.path is not None:
            built.setdefault((product_of(r), r.kernel, r.target), set()).add(r.path)
    taken = {key: taken_path(paths) for key, paths in built.items()}
    return [r if r.path is None else r.replace(path_taken=taken[(product_of(r), r.kernel, r.target)] is r.path)
            for r in reports]
