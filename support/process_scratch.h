//===- support/process_scratch.h - One temporary folder per process -*- C++ -*-===//
//
// Every temporary file Kiln makes lies under one folder of the process,
// <system temp dir>/kiln-XXXXXX, created at first use and removed at exit.
// A signal handler then has one folder to remove, whatever the threads were
// doing, and a killed Kiln leaves at most that one folder. Files that must
// be written elsewhere until complete are recorded for the handler too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::support {

/// The process's temporary folder, created on the first call.
llvm::Expected<std::string> processScratchDirectory();

/// Removes the process's temporary folder and everything in it, if it was
/// created. Only async-signal-safe calls: it runs in signal handlers.
void removeProcessScratchDirectory();

/// Records `path`, a file being written outside the folder (an output's
/// temporary twin, renamed when complete), for removeUnfinishedFiles.
/// Kiln's own record rather than llvm::sys::RemoveFileOnSignal, which would
/// install LLVM's signal handlers in the Python process of the binding.
void recordUnfinishedFile(llvm::StringRef path);
/// Forgets `path`, finished or removed.
void forgetUnfinishedFile(llvm::StringRef path);
/// Removes every recorded file. Only async-signal-safe calls.
void removeUnfinishedFiles();

} // namespace kiln::support
