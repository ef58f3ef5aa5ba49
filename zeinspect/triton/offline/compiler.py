"""Triton-XPU's Intel backend without a device: the compiler and the target it compiles for.

PyPI's triton-xpu compiles to SPIR-V without a device once its backend does not build the
small C helper that only maps a SYCL architecture number to a name (it needs torch and SYCL
headers): `_OfflineXPUBackend` skips it, and the target carries the capabilities the real
compiler gives (triton.build.backend.capabilities) and the part's figures of the device table.
This module and triton.offline.device (what the driver and torch answer for the device) are
all the captured command's process needs of the offline backend (triton.capture): they import
Triton and zeinspect's device table, nothing else.
"""

from __future__ import annotations

from typing import Any

from ...errors import ToolchainError
from ...hardware import DEVICES, TRITON_ARCH, ip_for_name, slm_per_work_group


def triton_module() -> Any:
    try:
        import triton
        import triton.backends.intel.compiler  # noqa: F401 - only triton-xpu has it
    except ImportError:
        raise ToolchainError("the Triton front end needs triton-xpu: pip install 'zeinspect[triton]'") from None
    return triton


_BACKEND_CLASS: list[type] = []


def offline_backend_class() -> type:
    """A subclass of Intel's backend that skips the SYCL-only helper (made once)."""
    if not _BACKEND_CLASS:
        from triton.backends.compiler import BaseBackend
        from triton.backends.intel import compiler as ic

        class _OfflineXPUBackend(ic.XPUBackend):  # type: ignore[misc, name-defined]
            _zeinspect_offline = True

            def __init__(self, target: Any) -> None:
                BaseBackend.__init__(self, target)
                self.device_arch = ""  # nothing to look up: the capabilities come with the target
                self.properties = self.parse_target(target.arch)
                self.binary_ext = "spv"

        _BACKEND_CLASS.append(_OfflineXPUBackend)
    return _BACKEND_CLASS[0]


def gpu_target(caps: dict, name: str, threads_per_warp: int) -> Any:
    """The target as Triton-XPU's driver builds it for a device (driver.py get_current_target:
    the device's capability dict, with `arch` from its arch parser): the compiler's
    capabilities, and the part's figures of the device table (hardware.DEVICES)."""
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": name, "arch": TRITON_ARCH.get(name, ""), **caps, **_device_figures(caps, name)},
                     threads_per_warp)


def _device_figures(caps: dict, name: str) -> dict:
    part = DEVICES.get(name)
    if part is None:
        return {}
    return {"max_work_group_size": part.max_work_group_size, "max_shared_mem": slm_per_work_group(ip_for_name(name)),
            "max_num_sub_groups": part.max_work_group_size // min(caps.get("sub_group_sizes") or [16]),
            "gpu_subslice_count": part.xe_cores}
