//===- backend/process_scratch.h - One temporary folder per process -*- C++ -*-===//
//
// Every temporary file Kiln makes lies under one folder of the process,
// <system temp dir>/kiln-XXXXXX, created at first use and removed at exit.
// A signal handler then has one folder to remove, whatever the threads were
// doing, and a killed Kiln leaves at most that one folder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cuda {

/// The process's temporary folder, created on the first call.
llvm::Expected<std::string> processScratchDirectory();

/// Removes the process's temporary folder and everything in it, if it was
/// created. Only async-signal-safe calls: it runs in signal handlers.
void removeProcessScratchDirectory();

} // namespace kiln::cuda
