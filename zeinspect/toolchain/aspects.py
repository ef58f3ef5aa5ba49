"""Which SYCL device aspects a target has, by the compiler's own word.

A SYCL image lists the aspects it requires (`SYCL/device requirements`, `aspects`); the
runtime never builds an image on a device that lacks one.  zeinspect keeps no table of
targets: it asks the compiler which OpenCL extensions the target offers (`ocloc query
CL_DEVICE_EXTENSIONS`) and maps each aspect to the extensions that carry it, as the SYCL
runtime does on OpenCL devices.  Aspects no compiler answers for (USM, images, ...) cannot be
decided offline and are assumed present: an image is never called not applicable on a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.sycl_image import aspect_name
from ..model import Compiler
from .knowledge import device_extensions

# aspect -> extensions a device must list to have it
ASPECT_EXTENSIONS = {
    5: ("cl_khr_fp16",),
    6: ("cl_khr_fp64",),
    28: ("cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"),
}
ON_EVERY_GPU = {2}  # gpu
ON_NO_GPU = {0: "host", 1: "cpu", 3: "accelerator", 4: "custom"}


@dataclass(frozen=True)
class AspectCheck:
    missing: tuple[str, ...] = ()
    """Required aspects the target lacks."""
    unchecked: tuple[str, ...] = ()
    """Required aspects that cannot be decided offline (assumed present)."""
    reason: str = ""


def check(required: tuple[int, ...], target: str, ip: str, compilers: list[Compiler]) -> AspectCheck:
    """Whether a target of this IP has every aspect in `required`, asking each compiler that
    knows the IP in turn until one can answer."""
    missing, unchecked, lacks = [], [], []
    extensions: tuple[str, ...] | None = None
    for aspect in required:
        if aspect in ON_EVERY_GPU:
            continue
        if aspect in ON_NO_GPU:
            missing.append(aspect_name(aspect))
            lacks.append(f"{target} is a GPU")
            continue
        needed = ASPECT_EXTENSIONS.get(aspect)
        if needed is None:
            unchecked.append(aspect_name(aspect))
            continue
        if extensions is None:
            extensions = _extensions(ip, compilers)
        if extensions is None:
            unchecked.append(aspect_name(aspect))
            continue
        absent = [e for e in needed if e not in extensions]
        if absent:
            missing.append(aspect_name(aspect))
            lacks.append(f"no {', '.join(absent)}")
    reason = ""
    if missing:
        reason = (f"requires {', '.join(missing)}, which {target} does not have ({'; '.join(lacks)} in "
                  "ocloc query CL_DEVICE_EXTENSIONS): the SYCL runtime never builds this image there")
    return AspectCheck(tuple(missing), tuple(unchecked), reason)


def _extensions(ip: str, compilers: list[Compiler]) -> tuple[str, ...] | None:
    for compiler in compilers:
        if compiler.knows(ip):
            found = device_extensions(compiler, ip)
            if found is not None:
                return found
    return None
