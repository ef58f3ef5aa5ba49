"""The offline driver: `triton.runtime.driver.active` with no device.

While a module loads (triton.load.loader), and in a captured command (triton.capture), Triton
asks the driver for the current target, device and stream; this driver answers for the target
being built, and with a placeholder for what only a device could say.
"""

from __future__ import annotations

# The driver takes the arguments its protocol passes.
# ruff: noqa: ARG002
from typing import Any

from ..model.placeholder import Placeholder


class OfflineDriver:
    """`triton.runtime.driver.active` while a module loads: an Intel XPU with no device, whose
    answers are the target's (triton.offline.compiler.gpu_target; its `device_properties`,
    triton.offline.device)."""

    def __init__(self, target: Any, device_properties: dict | None = None) -> None:
        self.target = target
        self.utils = _OfflineUtils(device_properties or {})

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: Any = None) -> Placeholder:
        return Placeholder("torch.xpu.current_stream()")

    def get_active_torch_device(self) -> Placeholder:
        return Placeholder("torch.device('xpu')")

    def get_device_interface(self) -> Placeholder:
        return Placeholder("torch.xpu")

    @staticmethod
    def is_active() -> bool:
        return True

    def get_benchmarker(self) -> Placeholder:
        return Placeholder("triton.testing.do_bench")

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"triton.runtime.driver.active.{name}")


class _OfflineUtils:
    """`driver.active.utils`: what Triton-XPU's launcher answers (backends/intel/driver.c,
    get_device_properties: max_shared_mem, multiprocessor_count, sm_clock_rate, mem_clock_rate,
    mem_bus_width, max_work_group_size, sub_group_sizes), for the target being built."""

    def __init__(self, properties: dict) -> None:
        self.properties = properties

    def get_device_properties(self, device: Any = 0) -> dict:
        return dict(self.properties)

    def get_current_device(self) -> int:
        return 0

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"triton.runtime.driver.active.utils.{name}")
