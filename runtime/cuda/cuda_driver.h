//===- runtime/cuda/cuda_driver.h - libcuda, loaded with dlopen -*- C++ -*-===//
//
// The CUDA driver library, loaded at first use: KILN_CUDA_DRIVER if set (the
// tests point it at their stand-in driver), else libcuda.so.1. Every entry
// point of cuda_driver_api.h is resolved once per process, under
// std::call_once, so that any number of threads may ask at once; the library
// then stays loaded until the process ends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/execution_target.h"

#include <string>

namespace kiln::runtime {

/// The driver's entry points, all non-null.
struct CudaDriver {
#define KILN_CUDA_DECLARE_MEMBER(member, symbol, fallback, parameters)                             \
  cu::PFN_##member member = nullptr;
  KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_CUDA_DECLARE_MEMBER)
#undef KILN_CUDA_DECLARE_MEMBER

  /// The library as it was opened: "libcuda.so.1" or $KILN_CUDA_DRIVER.
  std::string libraryPath;
};

/// The driver, loaded on the first call; null (with `why`, an Unavailable
/// Status naming the library and what went wrong) when it cannot be loaded
/// or lacks an entry point. Every call returns the first call's outcome.
/// Does not call cuInit.
const CudaDriver *loadCudaDriver(Status &why);

/// The driver's name for `code` ("CUDA_ERROR_OUT_OF_MEMORY"), or
/// "CUDA_ERROR_<code>" when the driver does not know it.
std::string cudaErrorName(const CudaDriver &driver, cu::CUresult code);

/// A CudaError Status for a failed call:
/// "<call> failed: CUDA_ERROR_X: <the driver's description>[ (<context>)]".
Status cudaCallFailed(const CudaDriver &driver, const char *call, cu::CUresult code,
                      const std::string &context = {});

} // namespace kiln::runtime
