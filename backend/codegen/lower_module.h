//===- backend/codegen/lower_module.h - Typed IR to LLVM IR -------------*- C++ -*-===//
//
// The one lowering from typed IR to LLVM IR, for every target; what differs
// between targets comes from a TargetHooks object (backend/codegen/target_hooks.h).
// Each kernel specialization becomes its own LLVM module holding the kernel
// and every function it reaches, so that specializations compile, cache and
// load independently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_abi.h"
#include "backend/codegen/target_hooks.h"
#include "ir/typed_ir.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::backend {

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  /// The LLVM (and PTX) name of the kernel's entry point.
  std::string entryName;
  std::vector<KernelParameter> parameters;
  /// Bytes of static shared memory each block needs.
  uint64_t staticSharedBytes = 0;
  /// Bytes of local arrays each thread needs.
  uint64_t localBytes = 0;
};

/// Lowers `kernel` (a Kernel function of its module) and everything it
/// calls. An error is an internal error: typed IR that passed the
/// verifier always lowers.
llvm::Expected<LoweredKernel> lowerKernel(const ir::Function &kernel, TargetHooks &hooks,
                                          llvm::LLVMContext &context);

/// The symbol a function gets in LLVM IR, PTX and host objects: a C
/// identifier that encodes `irSymbol` ("pkg.kernels.add$1") unambiguously,
/// as `_kiln_3pkg7kernels3add_1`. Non-ASCII bytes of names are written as
/// `$XX`, which PTX and ELF accept.
std::string mangledName(llvm::StringRef irSymbol);

} // namespace kiln::backend
