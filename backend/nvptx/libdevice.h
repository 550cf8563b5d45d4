//===- backend/nvptx/libdevice.h - NVIDIA's math library ---------------*- C++ -*-===//
//
// libdevice (nvvm/libdevice/libdevice.10.bc in the CUDA toolkit) defines the
// `__nv_*` math functions in LLVM bitcode. Kiln links in the ones a module
// calls, as internal functions, so they are optimized with the kernel and
// never exported. Their code asks `__nvvm_reflect("__CUDA_FTZ")`,
// `("__CUDA_ARCH")` and `("__CUDA_PREC_SQRT")` how to compute; on NVPTX the
// NVVMReflect pass answers the first (from the module's nvvm-reflect-ftz
// flag), and Kiln the other two.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

namespace kiln::backend {

/// Links the libdevice functions `module` calls, if any, as internal
/// definitions. An empty `libdevicePath` means there is none, for the
/// reason `missing` gives.
llvm::Error linkLibdeviceFunctions(llvm::Module &module, llvm::StringRef libdevicePath,
                                   llvm::StringRef missing = "");

/// For NVPTX: links the libdevice functions `module` calls, answers
/// `__CUDA_PREC_SQRT` (a correctly rounded square root unless `fastmath`,
/// as Numba's NVVM options give) and `__CUDA_ARCH` (sm_`arch`), and
/// internalizes everything but `keep`.
llvm::Error linkLibdevice(llvm::Module &module, llvm::StringRef libdevicePath, llvm::StringRef keep,
                          unsigned arch, bool fastmath);

/// Replaces each `__nvvm_reflect(question)` call in `module` with
/// `answer`.
void answerReflectQuestion(llvm::Module &module, llvm::StringRef question, int answer);

} // namespace kiln::backend
