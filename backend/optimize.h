//===- backend/optimize.h - LLVM's optimization pipeline --------*- C++ -*-===//
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace kiln::backend {

/// Runs LLVM's default -O3 pipeline (or -O0's, which still inlines
/// always-inline functions) with the machine's own passes, which for NVPTX
/// include NVVMReflect.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine, bool optimize);

} // namespace kiln::backend
