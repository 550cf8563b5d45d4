//===- runtime/cuda/cuda_driver_api.h - The Driver API Kiln calls -*- C++ -*-===//
//
// The few types, constants and entry points of the CUDA Driver API that the
// runtime uses, declared here so that the runtime builds without CUDA's
// headers (the driver is loaded with dlopen at run time; see cuda_driver.h).
// Every value is cuda.h's (CUDA 13), and every signature is the one of the
// versioned symbol that libcuda.so.1 exports (cuMemAlloc_v2, not cuMemAlloc).
//
// The stand-in driver of the tests (tests/runtime/stand_in_driver/) defines
// its exports from the same list, so that a signature that drifts from this
// one fails to compile there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::runtime::cu {

// Handles. The structures are the driver's; Kiln never looks inside.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

struct CUuuid {
  char bytes[16];
};

/// cuda.h's CUipcMemHandle: an allocation as another process opens it.
inline constexpr size_t CU_IPC_HANDLE_SIZE = 64;
struct CUipcMemHandle {
  char reserved[CU_IPC_HANDLE_SIZE];
};

/// cuda.h's `enum cudaError_enum`, which has the size of an int.
using CUresult = int;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr CUresult CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

/// cuda.h's `enum CUdevice_attribute_enum` (the values Kiln asks for).
using CUdevice_attribute = int;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

/// cuda.h's `enum CUfunction_attribute_enum` (the values Kiln sets).
using CUfunction_attribute = int;
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// Flags.
inline constexpr unsigned CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
/// cuda.h's `enum CUmemAttach_flags_enum`: managed memory any stream may use.
inline constexpr unsigned CU_MEM_ATTACH_GLOBAL = 0x1;
/// cuda.h's `enum CUipcMem_flags_enum`, the one flag cuIpcOpenMemHandle takes.
inline constexpr unsigned CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1;
/// The special stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
inline constexpr uintptr_t CU_STREAM_LEGACY_HANDLE = 0x1;
inline constexpr uintptr_t CU_STREAM_PER_THREAD_HANDLE = 0x2;

// The entry points, one X(member, symbol, fallback symbol, parameters) each:
// `member` names the function pointer in CudaDriver, `symbol` is what
// libcuda.so.1 exports, and `fallback` (or nullptr) an older export of the
// same signature that older drivers have instead.
#define KILN_CUDA_DRIVER_ENTRY_POINTS(X)                                                           \
  X(cuInit, "cuInit", nullptr, (unsigned int flags))                                               \
  X(cuDriverGetVersion, "cuDriverGetVersion", nullptr, (int *driverVersion))                       \
  X(cuGetErrorName, "cuGetErrorName", nullptr, (CUresult error, const char **pStr))                \
  X(cuGetErrorString, "cuGetErrorString", nullptr, (CUresult error, const char **pStr))            \
  X(cuDeviceGetCount, "cuDeviceGetCount", nullptr, (int *count))                                   \
  X(cuDeviceGet, "cuDeviceGet", nullptr, (CUdevice * device, int ordinal))                         \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr,                                         \
    (int *pi, CUdevice_attribute attrib, CUdevice dev))                                            \
  X(cuDeviceGetName, "cuDeviceGetName", nullptr, (char *name, int len, CUdevice dev))              \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", nullptr, (size_t *bytes, CUdevice dev))               \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid", (CUuuid * uuid, CUdevice dev))       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr,                                 \
    (CUcontext * pctx, CUdevice dev))                                                              \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", nullptr, (CUdevice dev))            \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", nullptr, (CUcontext * pctx))                               \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", nullptr, (CUcontext ctx))                                  \
  X(cuCtxSynchronize, "cuCtxSynchronize", nullptr, ())                                             \
  X(cuMemAlloc, "cuMemAlloc_v2", nullptr, (CUdeviceptr * dptr, size_t bytesize))                   \
  X(cuMemFree, "cuMemFree_v2", nullptr, (CUdeviceptr dptr))                                        \
  X(cuMemAllocManaged, "cuMemAllocManaged", nullptr,                                               \
    (CUdeviceptr * dptr, size_t bytesize, unsigned int flags))                                     \
  X(cuMemGetInfo, "cuMemGetInfo_v2", nullptr, (size_t *free, size_t *total))                       \
  X(cuMemHostAlloc, "cuMemHostAlloc", nullptr, (void **pp, size_t bytesize, unsigned int Flags))   \
  X(cuMemFreeHost, "cuMemFreeHost", nullptr, (void *p))                                            \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", nullptr,                            \
    (CUdeviceptr * pdptr, void *p, unsigned int Flags))                                            \
  X(cuMemGetAddressRange, "cuMemGetAddressRange_v2", nullptr,                                      \
    (CUdeviceptr * pbase, size_t *psize, CUdeviceptr dptr))                                        \
  X(cuIpcGetMemHandle, "cuIpcGetMemHandle", nullptr, (CUipcMemHandle * pHandle, CUdeviceptr dptr)) \
  X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle",                             \
    (CUdeviceptr * pdptr, CUipcMemHandle handle, unsigned int Flags))                              \
  X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", nullptr, (CUdeviceptr dptr))                       \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", nullptr,                                            \
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream))              \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", nullptr,                                            \
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))                    \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", nullptr,                                            \
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))            \
  X(cuMemsetD8Async, "cuMemsetD8Async", nullptr,                                                   \
    (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))                         \
  X(cuStreamCreate, "cuStreamCreate", nullptr, (CUstream * phStream, unsigned int Flags))          \
  X(cuStreamDestroy, "cuStreamDestroy_v2", nullptr, (CUstream hStream))                            \
  X(cuStreamSynchronize, "cuStreamSynchronize", nullptr, (CUstream hStream))                       \
  X(cuStreamQuery, "cuStreamQuery", nullptr, (CUstream hStream))                                   \
  X(cuEventCreate, "cuEventCreate", nullptr, (CUevent * phEvent, unsigned int Flags))              \
  X(cuEventDestroy, "cuEventDestroy_v2", nullptr, (CUevent hEvent))                                \
  X(cuEventRecord, "cuEventRecord", nullptr, (CUevent hEvent, CUstream hStream))                   \
  X(cuEventSynchronize, "cuEventSynchronize", nullptr, (CUevent hEvent))                           \
  X(cuEventQuery, "cuEventQuery", nullptr, (CUevent hEvent))                                       \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime",                             \
    (float *pMilliseconds, CUevent hStart, CUevent hEnd))                                          \
  X(cuModuleLoadData, "cuModuleLoadData", nullptr, (CUmodule * module, const void *image))         \
  X(cuModuleUnload, "cuModuleUnload", nullptr, (CUmodule hmod))                                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", nullptr,                                           \
    (CUfunction * hfunc, CUmodule hmod, const char *name))                                         \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", nullptr,                                             \
    (CUfunction hfunc, CUfunction_attribute attrib, int value))                                    \
  X(cuLaunchKernel, "cuLaunchKernel", nullptr,                                                     \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,            \
     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                       \
     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra))            \
  X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", nullptr,                               \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,            \
     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                       \
     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams))                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",    \
    nullptr, (int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize))

// PFN_cuInit, PFN_cuMemAlloc, ...: the type of each entry point.
#define KILN_CUDA_DECLARE_PFN(member, symbol, fallback, parameters)                                \
  using PFN_##member = CUresult(*) parameters;
KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_CUDA_DECLARE_PFN)
#undef KILN_CUDA_DECLARE_PFN

} // namespace kiln::runtime::cu
