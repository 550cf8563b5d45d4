//===- backend/cuda_tools/native_gpu.h - The GPUs of this machine ----------*- C++ -*-===//
//
// For the `native` architecture list: asks the CUDA driver (libcuda.so.1,
// loaded with dlopen so that kiln runs without it) which GPUs this machine
// has. Without a driver, or with no GPU, the answer is an error that says so.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Support/Error.h>

#include <vector>

namespace kiln::cuda_tools {

/// The compute capability of every visible GPU, as architecture numbers
/// (86 for 8.6), in device order.
llvm::Expected<std::vector<unsigned>> probeNativeGpuArchitectures();

} // namespace kiln::cuda_tools
