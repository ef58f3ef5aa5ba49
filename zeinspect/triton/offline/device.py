"""The offline target as a device describes itself, from zeinspect's device table: what the
offline driver answers Triton (`driver.active.utils.get_device_properties()`) and what the
capture's stand-in `torch.xpu.get_device_properties()` answers torch (triton.capture.xpu).

One stand-in device told two ways; the captured command's process imports this module (the
device table with it, and nothing else of zeinspect).
"""

from __future__ import annotations

from typing import Any

from ...hardware import DEVICES, Device, ip_for_name, parse_ip, product, slm_per_work_group, wide_core


def part_of(name: str) -> Device:
    """The target's figures in the device table; for a name it does not hold, a nominal part
    (8 Xe-cores, 2 GHz, a 128-bit bus), so a stand-in still answers every field."""
    return DEVICES.get(name) or Device(8, 2000, 2000, 128)


def device_properties(caps: dict, name: str) -> dict:
    """What `driver.active.utils.get_device_properties()` answers for the target (Triton-XPU's
    driver.c, from zeDeviceGetProperties and its compute and memory properties)."""
    part = part_of(name)
    return {"max_shared_mem": slm_per_work_group(ip_for_name(name)), "multiprocessor_count": part.xe_cores,
            "sm_clock_rate": part.core_clock_mhz, "mem_clock_rate": part.mem_clock_mhz,
            "mem_bus_width": part.mem_bus_width, "max_work_group_size": part.max_work_group_size,
            "sub_group_sizes": tuple(caps.get("sub_group_sizes") or ())}


def properties(spec: dict) -> dict[str, Any]:
    """What `torch.xpu.get_device_properties()` answers for the target, field by field."""
    name, caps = spec.get("name", "bmg-g21"), spec.get("caps", {})
    part, made = part_of(name), product(name)
    ip = ip_for_name(name)
    eus = part.xe_cores * (8 if ip and wide_core(ip) else 16)
    major, minor, revision = parse_ip(ip) if ip else (0, 0, 0)
    sizes = list(caps.get("sub_group_sizes") or [16, 32])
    memory = (made.memory_gib or 16) * 1024 ** 3
    return {
        "name": made.name, "platform_name": "Intel(R) oneAPI Unified Runtime over Level-Zero",
        "vendor": "Intel(R) Corporation", "device_id": made.device_id, "driver_version": "zeinspect offline",
        "version": ip or "0.0.0", "max_compute_units": eus, "gpu_eu_count": eus,
        "max_work_group_size": part.max_work_group_size, "max_num_sub_groups": part.max_work_group_size // min(sizes),
        "memory_clock_rate": part.mem_clock_mhz, "memory_bus_width": part.mem_bus_width, "sub_group_sizes": sizes,
        "local_mem_size": slm_per_work_group(ip), "last_level_cache_size": made.cache_mib * 1024 ** 2,
        "has_fp16": True, "has_fp64": bool(caps.get("has_fp64", True)), "has_atomic64": True,
        "has_bfloat16_conversions": bool(caps.get("has_bfloat16_conversions")),
        "has_subgroup_matrix_multiply_accumulate": bool(caps.get("has_subgroup_matrix_multiply_accumulate")),
        "has_subgroup_matrix_multiply_accumulate_tensor_float32":
            bool(caps.get("has_subgroup_matrix_multiply_accumulate_tensor_float32")),
        "has_subgroup_2d_block_io": bool(caps.get("has_subgroup_2d_block_io")),
        "is_integrated_gpu": made.memory_gib is None, "total_memory": memory, "gpu_subslice_count": part.xe_cores,
        # SYCL's architecture enumeration encodes the IP version (major << 22 | minor << 14 | revision).
        "architecture": major << 22 | minor << 14 | revision, "type": "gpu", "uuid": bytes(16),
    }
