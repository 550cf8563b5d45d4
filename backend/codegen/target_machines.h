//===- backend/codegen/target_machines.h - LLVM target machines ---------*- C++ -*-===//
//
// The two machines Kiln generates code for: NVPTX for one GPU architecture,
// and the host, for the CPU engine. Host code is built for the baseline of
// the host's architecture (x86-64, not the build machine's CPU), because
// built modules travel in wheels and conda packages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/jit_options.h"

#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>

namespace kiln::backend {

/// Registers LLVM's NVPTX and host back ends; safe to call repeatedly and
/// from several threads.
void initializeTargets();

/// A machine producing PTX with `.target sm_<arch>`.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createNvptxMachine(unsigned arch,
                                                                        const JitOptions &options);

/// A machine producing position-independent host objects.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostMachine(const JitOptions &options);

/// The host triple Kiln builds CPU-engine code for.
std::string hostTriple();

} // namespace kiln::backend
