"""cffi out-of-line (ABI) build of the Level Zero subset zeinspect uses: `zeinspect._ze`.

Run by setuptools at install time (`cffi_modules` in setup.py); needs no C compiler and
no headers: the declarations below are the part of ze_api.h (and NEO's zex extension for
the register-file size) that the runtime probe calls.  The library itself,
libze_loader.so.1 (or $ZEINSPECT_ZE_LOADER), is opened at run time.
"""

import cffi

ffibuilder = cffi.FFI()
ffibuilder.set_source("zeinspect._ze", None)
ffibuilder.cdef("""
typedef int32_t ze_result_t;
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_context_handle_t *ze_context_handle_t;
typedef struct _ze_module_handle_t *ze_module_handle_t;
typedef struct _ze_module_build_log_handle_t *ze_module_build_log_handle_t;
typedef struct _ze_kernel_handle_t *ze_kernel_handle_t;

typedef struct {
    int32_t stype; void* pNext; uint8_t uuid[16]; uint32_t driverVersion;
} ze_driver_properties_t;

typedef struct {
    int32_t stype; void* pNext; int32_t type; uint32_t vendorId; uint32_t deviceId; uint32_t flags;
    uint32_t subdeviceId; uint32_t coreClockRate; uint64_t maxMemAllocSize; uint32_t maxHardwareContexts;
    uint32_t maxCommandQueuePriority; uint32_t numThreadsPerEU; uint32_t physicalEUSimdWidth;
    uint32_t numEUsPerSubslice; uint32_t numSubslicesPerSlice; uint32_t numSlices; uint64_t timerResolution;
    uint32_t timestampValidBits; uint32_t kernelTimestampValidBits; uint8_t uuid[16]; char name[256];
} ze_device_properties_t;

typedef struct {
    int32_t stype; void* pNext; uint32_t ipVersion;
} ze_device_ip_version_ext_t;

typedef struct {
    int32_t stype; void* pNext; uint32_t maxTotalGroupSize; uint32_t maxGroupSizeX; uint32_t maxGroupSizeY;
    uint32_t maxGroupSizeZ; uint32_t maxGroupCountX; uint32_t maxGroupCountY; uint32_t maxGroupCountZ;
    uint32_t maxSharedLocalMemory; uint32_t numSubGroupSizes; uint32_t subGroupSizes[8];
} ze_device_compute_properties_t;

typedef struct { int32_t stype; const void* pNext; uint32_t flags; } ze_context_desc_t;

typedef struct {
    int32_t stype; const void* pNext; int32_t format; size_t inputSize; const uint8_t* pInputModule;
    const char* pBuildFlags; const void* pConstants;
} ze_module_desc_t;

typedef struct { int32_t stype; const void* pNext; uint32_t flags; const char* pKernelName; } ze_kernel_desc_t;

typedef struct {
    int32_t stype; void* pNext; uint32_t numKernelArgs; uint32_t requiredGroupSizeX; uint32_t requiredGroupSizeY;
    uint32_t requiredGroupSizeZ; uint32_t requiredNumSubGroups; uint32_t requiredSubgroupSize; uint32_t maxSubgroupSize;
    uint32_t maxNumSubgroups; uint32_t localMemSize; uint32_t privateMemSize; uint32_t spillMemSize;
    uint8_t kid[16]; uint8_t mid[16];
} ze_kernel_properties_t;

typedef struct { int32_t stype; void* pNext; uint32_t registerFileSize; } zex_kernel_register_file_size_exp_t;

ze_result_t zeInit(uint32_t flags);
ze_result_t zeDriverGet(uint32_t* pCount, ze_driver_handle_t* phDrivers);
ze_result_t zeDriverGetProperties(ze_driver_handle_t hDriver, ze_driver_properties_t* pDriverProperties);
ze_result_t zeDeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount, ze_device_handle_t* phDevices);
ze_result_t zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t* pDeviceProperties);
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t hDevice, ze_device_compute_properties_t* pProps);
ze_result_t zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t* desc, ze_context_handle_t* phContext);
ze_result_t zeContextDestroy(ze_context_handle_t hContext);
ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_module_desc_t* desc,
                           ze_module_handle_t* phModule, ze_module_build_log_handle_t* phBuildLog);
ze_result_t zeModuleDestroy(ze_module_handle_t hModule);
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize, char* pBuildLog);
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog);
ze_result_t zeModuleGetNativeBinary(ze_module_handle_t hModule, size_t* pSize, uint8_t* pModuleNativeBinary);
ze_result_t zeModuleGetKernelNames(ze_module_handle_t hModule, uint32_t* pCount, const char** pNames);
ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc, ze_kernel_handle_t* phKernel);
ze_result_t zeKernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t zeKernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t* pKernelProperties);
ze_result_t zeKernelGetName(ze_kernel_handle_t hKernel, size_t* pSize, char* pName);
""")

if __name__ == "__main__":
    # For editable installs (setuptools does not carry generated modules into them):
    # write zeinspect/_ze.py into the source tree next to this folder.
    import os

    ffibuilder.compile(tmpdir=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), verbose=False)
