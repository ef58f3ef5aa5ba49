"""Whether a target meets a SYCL image's device requirements, by the runtime's rules.

The SYCL runtime builds an image for a device only when the device meets every entry of the
image's `SYCL/device requirements` (intel/llvm sycl/source/detail/program_manager/
program_manager.cpp, checkDevSupportDeviceRequirements, which image selection and
kernel_bundle use alike).  An image that fails one is never built there: the pair is
`not_applicable`, with the requirement named.

Device capabilities come from the compiler, never from a hand list of targets:
- aspects that the runtime decides from the device's extension string are decided from
  `ocloc query CL_DEVICE_EXTENSIONS`, as the Level Zero device reports the same capabilities
  (fp16, fp64, 64-bit atomics).  Level Zero is the SYCL runtime's backend for Intel GPUs;
  its adapter builds the extension string from a fixed set (unified-runtime
  adapters/level_zero/device.cpp, UR_DEVICE_INFO_EXTENSIONS: checked in
  libur_adapter_level_zero.so and _v2.so of intel-cmplr-lib-ur 2026.2.0), and an extension
  outside that set is never listed there whatever the OpenCL driver says;
- sub-group sizes from a probe compile (knowledge.sub_group_sizes).
A requirement zeinspect cannot decide offline (USM, images, joint_matrix, an aspect number it
cannot name) is assumed met, so the image is
still audited, and it is named in the report's `unchecked_requirements` and counted apart:
never taken as met or unmet silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..inputs.sycl_image import ImageInfo, aspect_label, aspect_name
from ..model import Compiler
from ..occupancy import device_max_work_group_size
from .knowledge import device_extensions, sub_group_sizes

# Aspects the runtime decides with device_impl::has_extension (libsycl.so.9's
# AspectInitializer for aspects 5, 6, 7, 8 and 73; the extension names are its strings),
# and atomic64, which it takes from the device's 64-bit atomics flag.
ASPECT_EXTENSIONS = {
    "fp16": ("cl_khr_fp16",),
    "fp64": ("cl_khr_fp64",),
    "int64_base_atomics": ("cl_khr_int64_base_atomics",),
    "int64_extended_atomics": ("cl_khr_int64_extended_atomics",),
    "atomic64": ("cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"),
    "ext_oneapi_atomic16": ("cl_ext_float_atomics",),
}
# The extensions the Level Zero adapter can list (all others it never lists).
LEVEL_ZERO_EXTENSIONS = frozenset({
    "cl_khr_fp16", "cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics",
    "cl_intel_bfloat16_conversions", "cl_khr_3d_image_writes", "cl_khr_il_program", "cl_khr_subgroups",
    "cl_intel_subgroups", "cl_intel_subgroups_short", "cl_intel_required_subgroup_size",
})
# Every Intel GPU has these: `gpu`, and ESIMD (the adapter answers UR_DEVICE_INFO_ESIMD_SUPPORT
# true for an Intel GPU).
ON_EVERY_GPU = {"gpu", "ext_intel_esimd"}
ON_NO_GPU = {"host", "cpu", "accelerator", "custom"}


@dataclass(frozen=True)
class RequirementCheck:
    unmet: tuple[str, ...] = ()
    """Requirements the target does not meet, each named with what the target offers."""
    unchecked: tuple[str, ...] = ()
    """Requirements that cannot be decided offline (assumed met)."""
    reason: str = ""


def check(info: ImageInfo, target: str, ip: str, compilers: list[Compiler]) -> RequirementCheck:
    """Whether a target of this IP meets every device requirement of the image, asking each
    compiler that knows the IP in turn until one can answer."""
    req = info.requirements
    unmet: list[str] = []
    unchecked: list[str] = []
    why: list[str] = []
    extensions: tuple[str, ...] | None = None
    for number in req.aspects:
        name = aspect_name(number, info.sycl_abi)
        label = aspect_label(number, info.sycl_abi)
        if name is None:
            unchecked.append(label)
        elif name in ON_EVERY_GPU:
            continue
        elif name in ON_NO_GPU:
            unmet.append(f"aspect {name}")
            why.append(f"{target} is a GPU")
        elif name in ASPECT_EXTENSIONS:
            needed = ASPECT_EXTENSIONS[name]
            if any(e not in LEVEL_ZERO_EXTENSIONS for e in needed):
                unmet.append(f"aspect {name}")
                why.append(f"the runtime asks for {', '.join(needed)}, which a Level Zero device never lists")
                continue
            if extensions is None:
                extensions = _ask(ip, compilers, device_extensions)
            if extensions is None:
                unchecked.append(f"aspect {name}")
                continue
            absent = [e for e in needed if e not in extensions]
            if absent:
                unmet.append(f"aspect {name}")
                why.append(f"no {', '.join(absent)} in ocloc query CL_DEVICE_EXTENSIONS")
        else:
            unchecked.append(f"aspect {name}")
    # ESIMD images carry reqd_sub_group_size 1, which no device lists: the runtime skips the
    # check for them (checkDevSupportDeviceRequirements, "a WA for ESIMD").
    if req.reqd_sub_group_size is not None and not info.is_esimd:
        offered = _ask(ip, compilers, sub_group_sizes)
        if offered is None:
            unchecked.append(f"reqd_sub_group_size {req.reqd_sub_group_size}")
        elif req.reqd_sub_group_size not in offered:
            sizes = ", ".join(map(str, offered))
            unmet.append(f"reqd_sub_group_size {req.reqd_sub_group_size} (target offers {sizes})")
            why.append(f"{target} offers sub-group sizes {sizes}")
    if req.reqd_work_group_size:
        # The program manager checks the product against the device's max_work_group_size
        # (checkDevSupportDeviceRequirements); the device's is NEO's (zeinspect.occupancy).
        size = math.prod(req.reqd_work_group_size)
        most = device_max_work_group_size(ip)
        if size > most:
            spelled = "x".join(map(str, req.reqd_work_group_size))
            unmet.append(f"reqd_work_group_size {spelled} (target offers at most {most} work-items)")
            why.append(f"{target}'s work-groups have at most {most} work-items")
    for name, value in (("joint_matrix", req.joint_matrix), ("joint_matrix_mad", req.joint_matrix_mad)):
        if value:
            unchecked.append(f"{name} {value}")
    unchecked += [f"requirement {name}" for name in req.others]
    reason = ""
    if unmet:
        reason = (f"requires {', '.join(unmet)}, which {target} does not meet ({'; '.join(why)}): "
                  "the SYCL runtime never builds this image there")
    return RequirementCheck(tuple(unmet), tuple(unchecked), reason)


def _ask(ip: str, compilers: list[Compiler], question: Callable[[Compiler, str], Any]) -> Any:
    for compiler in compilers:
        if compiler.knows(ip):
            found = question(compiler, ip)
            if found is not None:
                return found
    return None
