//===- backend/libdevice.h - NVIDIA's math library for NVPTX ----*- C++ -*-===//
//
// libdevice (nvvm/libdevice/libdevice.10.bc in the CUDA toolkit) defines the
// `__nv_*` math functions in LLVM bitcode. Kiln links in the ones a kernel
// calls and makes them internal, so they are optimized with the kernel and
// never exported from the PTX; NVVMReflect then settles their
// `__nvvm_reflect("__CUDA_FTZ")` and `("__CUDA_ARCH")` questions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

namespace kiln::backend {

/// Links the libdevice functions `module` calls, if any, and internalizes
/// everything but `keep`. The file is read once per process.
llvm::Error linkLibdevice(llvm::Module &module, llvm::StringRef libdevicePath,
                          llvm::StringRef keep);

} // namespace kiln::backend
