//===- tests/runtime/stand_in_driver/stand_in_errors.cpp - CUresult names ===//
//
// Part of the stand-in CUDA driver of the tests: every CUresult of cuda.h
// (CUDA 13) with its name, and the driver's description for the common ones.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/stand_in_driver/stand_in_errors.h"

#include <cstdlib>
#include <cstring>

namespace kiln::stand_in {

namespace {

struct ErrorInfo {
  int code;
  const char *name;
  const char *description;
};

const ErrorInfo kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {5, "CUDA_ERROR_PROFILER_DISABLED", nullptr},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", nullptr},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", nullptr},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", nullptr},
    {34, "CUDA_ERROR_STUB_LIBRARY", nullptr},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", nullptr},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", nullptr},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", nullptr},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", nullptr},
    {205, "CUDA_ERROR_MAP_FAILED", nullptr},
    {206, "CUDA_ERROR_UNMAP_FAILED", nullptr},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED", nullptr},
    {208, "CUDA_ERROR_ALREADY_MAPPED", nullptr},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED", nullptr},
    {211, "CUDA_ERROR_NOT_MAPPED", nullptr},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", nullptr},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", nullptr},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", nullptr},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT", nullptr},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", nullptr},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", nullptr},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", nullptr},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", nullptr},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", nullptr},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", nullptr},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", nullptr},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", nullptr},
    {226, "CUDA_ERROR_CONTAINED", nullptr},
    {300, "CUDA_ERROR_INVALID_SOURCE", nullptr},
    {301, "CUDA_ERROR_FILE_NOT_FOUND", nullptr},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", nullptr},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", nullptr},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", nullptr},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", nullptr},
    {402, "CUDA_ERROR_LOSSY_QUERY", nullptr},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", nullptr},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", nullptr},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", nullptr},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", nullptr},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", nullptr},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", nullptr},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {711, "CUDA_ERROR_TOO_MANY_PEERS", nullptr},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", nullptr},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", nullptr},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", nullptr},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", nullptr},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", nullptr},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", nullptr},
    {718, "CUDA_ERROR_INVALID_PC", nullptr},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", nullptr},
    {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", nullptr},
    {800, "CUDA_ERROR_NOT_PERMITTED", nullptr},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", nullptr},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", nullptr},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", nullptr},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED", nullptr},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE", nullptr},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY", nullptr},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", nullptr},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", nullptr},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", nullptr},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED", nullptr},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH", nullptr},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", nullptr},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", nullptr},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", nullptr},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", nullptr},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", nullptr},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", nullptr},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", nullptr},
    {907, "CUDA_ERROR_CAPTURED_EVENT", nullptr},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", nullptr},
    {909, "CUDA_ERROR_TIMEOUT", nullptr},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", nullptr},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE", nullptr},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", nullptr},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED", nullptr},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", nullptr},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", nullptr},
    {916, "CUDA_ERROR_KEY_ROTATION", nullptr},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

} // namespace

const char *errorName(int code) {
  for (const ErrorInfo &error : kErrors)
    if (error.code == code)
      return error.name;
  return nullptr;
}

const char *errorDescription(int code) {
  for (const ErrorInfo &error : kErrors)
    if (error.code == code)
      return error.description ? error.description
                               : "(the stand-in driver has no description of this error)";
  return nullptr;
}

int parseError(const char *text) {
  for (const ErrorInfo &error : kErrors)
    if (std::strcmp(error.name, text) == 0)
      return error.code;
  char *end = nullptr;
  long code = std::strtol(text, &end, 10);
  return end != text && *end == 0 && errorName(static_cast<int>(code)) ? static_cast<int>(code)
                                                                       : -1;
}

} // namespace kiln::stand_in
