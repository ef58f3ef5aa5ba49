"""A small Pythonic layer over the cffi Level Zero binding (`zeinspect._ze`, built from native/).

Handles are owned by context managers that destroy them in reverse order; every
non-success result is raised as `ZeError` carrying the result's name (never a bare
number), the call that returned it, and the module build log when there is one.  This
module only runs inside the runtime probe's child process: a driver may crash the
process that uses it.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import envvars

RESULT_NAMES = {
    0x0: "ZE_RESULT_SUCCESS", 0x1: "ZE_RESULT_NOT_READY",
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST", 0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000004: "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
    0x70000005: "ZE_RESULT_ERROR_MODULE_LINK_FAILURE", 0x70000006: "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
    0x70000007: "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE", 0x70010000: "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
    0x70010001: "ZE_RESULT_ERROR_NOT_AVAILABLE", 0x70020000: "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
    0x70020001: "ZE_RESULT_WARNING_DROPPED_DATA", 0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED",
    0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION", 0x78000003: "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
    0x78000004: "ZE_RESULT_ERROR_INVALID_ARGUMENT", 0x78000005: "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
    0x78000006: "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE", 0x78000007: "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
    0x78000008: "ZE_RESULT_ERROR_INVALID_SIZE", 0x78000009: "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
    0x7800000a: "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT", 0x7800000b: "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT",
    0x7800000c: "ZE_RESULT_ERROR_INVALID_ENUMERATION", 0x7800000d: "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION",
    0x7800000e: "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT", 0x7800000f: "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY",
    0x78000010: "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME", 0x78000011: "ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
    0x78000012: "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME", 0x78000013: "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
    0x78000014: "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION",
    0x78000015: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX",
    0x78000016: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE",
    0x78000017: "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE", 0x78000018: "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED",
    0x78000019: "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE", 0x7800001a: "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
    0x7800001b: "ZE_RESULT_WARNING_ACTION_REQUIRED", 0x7ffffffe: "ZE_RESULT_ERROR_UNKNOWN",
}

STYPE_DRIVER_PROPERTIES = 0x1
STYPE_DEVICE_PROPERTIES = 0x3
STYPE_DEVICE_COMPUTE_PROPERTIES = 0x4
STYPE_CONTEXT_DESC = 0xD
STYPE_MODULE_DESC = 0x1B
STYPE_KERNEL_DESC = 0x1D
STYPE_KERNEL_PROPERTIES = 0x1E
STYPE_DEVICE_IP_VERSION_EXT = 0x00010022
STYPE_KERNEL_REGISTER_FILE_SIZE_EXP = 0x00030012  # NEO's zex_kernel_register_file_size_exp_t
FORMAT_IL_SPIRV, FORMAT_NATIVE = 0, 1
DEFAULT_LOADER = "libze_loader.so.1"


def result_name(code: int) -> str:
    return RESULT_NAMES.get(code & 0xFFFFFFFF, f"ZE_RESULT_0x{code & 0xFFFFFFFF:08x}")


class ZeError(Exception):
    def __init__(self, call: str, code: int, build_log: str = ""):
        self.call, self.code, self.name, self.build_log = call, code & 0xFFFFFFFF, result_name(code), build_log
        super().__init__(f"{call} returned {self.name}")


class LoaderMissing(Exception):
    pass


def load() -> Any:
    """(ffi, lib) with libze_loader opened; LoaderMissing when it is not installed."""
    from .. import _ze  # generated at install time from native/ze_build.py

    path = envvars.value("ZEINSPECT_ZE_LOADER") or DEFAULT_LOADER
    try:
        return _ze.ffi, _ze.ffi.dlopen(path)
    except OSError as exc:
        raise LoaderMissing(f"cannot load the Level Zero loader {path}: {exc}") from None


def driver_library_present() -> bool:
    """Whether a GPU driver the loader could use is installed (or named through ZE_ENABLE_ALT_DRIVERS)."""
    alt = os.environ.get("ZE_ENABLE_ALT_DRIVERS")
    names = [n for n in alt.split(",") if n] if alt else ["libze_intel_gpu.so.1"]
    for name in names:
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_LOCAL)
            return True
        except OSError:
            continue
    return False


@dataclass
class DeviceInfo:
    name: str
    device_id: int
    vendor_id: int
    ip_version: str | None
    sub_group_sizes: list
    slm_bytes: int
    eu_simd_width: int
    slices: int
    subslices_per_slice: int
    eus_per_subslice: int
    threads_per_eu: int = 0
    max_work_group_size: int = 0

    def to_json(self) -> dict:
        return self.__dict__ | {"device_id": f"0x{self.device_id:04x}"}


class LevelZero:
    """One initialised loader.  Use `with LevelZero() as ze:`; every handle it made is destroyed on exit."""

    def __init__(self) -> None:
        self.ffi, self.lib = load()
        self.stack = contextlib.ExitStack()
        self.step: str | None = None
        self.on_step: Callable[[str], None] = lambda step: None

    def __enter__(self) -> LevelZero:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stack.close()

    def call(self, name: str, *args: Any, build_log: str = "") -> None:
        self.step = name
        self.on_step(name)
        code = getattr(self.lib, name)(*args)
        if code != 0:
            raise ZeError(name, code, build_log)

    def init(self) -> None:
        self.call("zeInit", 0)

    def drivers(self) -> list:
        count = self.ffi.new("uint32_t*")
        self.call("zeDriverGet", count, self.ffi.NULL)
        handles = self.ffi.new("ze_driver_handle_t[]", count[0])
        if count[0]:
            self.call("zeDriverGet", count, handles)
        return list(handles)

    def driver_version(self, driver: Any) -> int:
        props = self.ffi.new("ze_driver_properties_t*", {"stype": STYPE_DRIVER_PROPERTIES})
        self.call("zeDriverGetProperties", driver, props)
        return props.driverVersion

    def devices(self, driver: Any) -> list:
        count = self.ffi.new("uint32_t*")
        self.call("zeDeviceGet", driver, count, self.ffi.NULL)
        handles = self.ffi.new("ze_device_handle_t[]", count[0])
        if count[0]:
            self.call("zeDeviceGet", driver, count, handles)
        return list(handles)

    def device_info(self, device: Any) -> DeviceInfo:
        ip_ext = self.ffi.new("ze_device_ip_version_ext_t*", {"stype": STYPE_DEVICE_IP_VERSION_EXT})
        props = self.ffi.new("ze_device_properties_t*", {"stype": STYPE_DEVICE_PROPERTIES, "pNext": ip_ext})
        try:
            self.call("zeDeviceGetProperties", device, props)
        except ZeError:
            # A driver that predates the IP-version extension may refuse the chain: ask without it.
            props = self.ffi.new("ze_device_properties_t*", {"stype": STYPE_DEVICE_PROPERTIES})
            self.call("zeDeviceGetProperties", device, props)
            ip_ext.ipVersion = 0
        compute = self.ffi.new("ze_device_compute_properties_t*", {"stype": STYPE_DEVICE_COMPUTE_PROPERTIES})
        self.call("zeDeviceGetComputeProperties", device, compute)
        ip = None
        if ip_ext.ipVersion:
            v = ip_ext.ipVersion
            ip = f"{v >> 22}.{(v >> 14) & 0xFF}.{v & 0x3F}"
        return DeviceInfo(
            name=self.ffi.string(props.name).decode("utf-8", "replace"), device_id=props.deviceId,
            vendor_id=props.vendorId, ip_version=ip,
            sub_group_sizes=[compute.subGroupSizes[i] for i in range(min(compute.numSubGroupSizes, 8))],
            slm_bytes=compute.maxSharedLocalMemory, eu_simd_width=props.physicalEUSimdWidth, slices=props.numSlices,
            subslices_per_slice=props.numSubslicesPerSlice, eus_per_subslice=props.numEUsPerSubslice,
            threads_per_eu=props.numThreadsPerEU, max_work_group_size=compute.maxTotalGroupSize)

    def context(self, driver: Any) -> Any:
        desc = self.ffi.new("ze_context_desc_t*", {"stype": STYPE_CONTEXT_DESC})
        handle = self.ffi.new("ze_context_handle_t*")
        self.call("zeContextCreate", driver, desc, handle)
        ctx = handle[0]
        self.stack.callback(self.lib.zeContextDestroy, ctx)
        return ctx

    def module(self, ctx: Any, device: Any, data: bytes, fmt: int, flags: str = "") -> Any:
        """(module handle, build log text).  ZeError carries the log when the build fails."""
        keep = self.ffi.from_buffer(data)
        flags_c = self.ffi.new("char[]", flags.encode())
        desc = self.ffi.new("ze_module_desc_t*", {"stype": STYPE_MODULE_DESC, "format": fmt, "inputSize": len(data),
                                                  "pInputModule": self.ffi.cast("uint8_t*", keep),
                                                  "pBuildFlags": flags_c})
        handle = self.ffi.new("ze_module_handle_t*")
        log_handle = self.ffi.new("ze_module_build_log_handle_t*")
        self.step = "zeModuleCreate"
        self.on_step("zeModuleCreate")
        code = self.lib.zeModuleCreate(ctx, device, desc, handle, log_handle)
        log = self._log(log_handle[0])
        if code != 0:
            if handle[0] != self.ffi.NULL:
                self.lib.zeModuleDestroy(handle[0])
            raise ZeError("zeModuleCreate", code, log)
        self.stack.callback(self.lib.zeModuleDestroy, handle[0])
        return handle[0], log

    def _log(self, log_handle: Any) -> str:
        if log_handle == self.ffi.NULL:
            return ""
        try:
            size = self.ffi.new("size_t*")
            if self.lib.zeModuleBuildLogGetString(log_handle, size, self.ffi.NULL) != 0 or size[0] == 0:
                return ""
            buf = self.ffi.new("char[]", size[0])
            self.lib.zeModuleBuildLogGetString(log_handle, size, buf)
            return self.ffi.string(buf).decode("utf-8", "replace")
        finally:
            self.lib.zeModuleBuildLogDestroy(log_handle)

    def kernel_names(self, module: Any) -> list[str]:
        count = self.ffi.new("uint32_t*")
        self.call("zeModuleGetKernelNames", module, count, self.ffi.NULL)
        names = self.ffi.new("const char*[]", count[0])
        if count[0]:
            self.call("zeModuleGetKernelNames", module, count, names)
        return [self.ffi.string(n).decode("utf-8", "replace") for n in names]

    def native_binary(self, module: Any) -> bytes:
        size = self.ffi.new("size_t*")
        self.call("zeModuleGetNativeBinary", module, size, self.ffi.NULL)
        buf = self.ffi.new("uint8_t[]", size[0])
        self.call("zeModuleGetNativeBinary", module, size, buf)
        return bytes(self.ffi.buffer(buf, size[0]))

    def kernel_properties(self, module: Any, name: str) -> dict:
        """Create the kernel, read its properties, destroy it.  A failed create is never used:
        NEO crashes when a handle from a failed zeKernelCreate is touched."""
        name_c = self.ffi.new("char[]", name.encode())
        desc = self.ffi.new("ze_kernel_desc_t*", {"stype": STYPE_KERNEL_DESC, "pKernelName": name_c})
        handle = self.ffi.new("ze_kernel_handle_t*")
        self.call("zeKernelCreate", module, desc, handle)
        kernel = handle[0]
        if envvars.value("ZEINSPECT_RUNTIME_FAULT") == "bogus-kernel-handle":
            # Test hook: hand the real driver a handle that is not one, as a buggy caller would;
            # the crash it causes must be contained by the probe's child process.
            kernel = self.ffi.cast("ze_kernel_handle_t", 0xDEAD0000)
        try:
            grf = self.ffi.new("zex_kernel_register_file_size_exp_t*",
                               {"stype": STYPE_KERNEL_REGISTER_FILE_SIZE_EXP})
            props = self.ffi.new("ze_kernel_properties_t*", {"stype": STYPE_KERNEL_PROPERTIES, "pNext": grf})
            try:
                self.call("zeKernelGetProperties", kernel, props)
            except ZeError:
                props = self.ffi.new("ze_kernel_properties_t*", {"stype": STYPE_KERNEL_PROPERTIES})
                self.call("zeKernelGetProperties", kernel, props)
                grf.registerFileSize = 0
            return {
                "numKernelArgs": props.numKernelArgs, "requiredSubgroupSize": props.requiredSubgroupSize,
                "maxSubgroupSize": props.maxSubgroupSize, "maxNumSubgroups": props.maxNumSubgroups,
                "localMemSize": props.localMemSize, "privateMemSize": props.privateMemSize,
                "spillMemSize": props.spillMemSize, "registerFileSize": grf.registerFileSize or None,
                "requiredGroupSize": [props.requiredGroupSizeX, props.requiredGroupSizeY, props.requiredGroupSizeZ],
            }
        finally:
            self.lib.zeKernelDestroy(kernel)
