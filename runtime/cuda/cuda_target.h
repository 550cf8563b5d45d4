//===- runtime/cuda/cuda_target.h - Kernels on a GPU ------------*- C++ -*-===//
//
// The CUDA target: the Driver API, loaded with dlopen (libcuda.so.1, or the
// library KILN_CUDA_DRIVER names) at first use, so that importing Kiln never
// needs a driver. One primary context on device 0, retained at creation and
// made current on every thread that calls in. Specializations load lazily, at
// their first launch, from their fat binary.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/execution_target.h"

#include <memory>

namespace kiln::runtime {

/// The CUDA target, or null with `why` saying what is missing (no driver
/// library, cuInit failed, no device) in words fit for a warning.
std::unique_ptr<ExecutionTarget> createCudaTarget(Status &why);

} // namespace kiln::runtime
