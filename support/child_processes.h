//===- support/child_processes.h - Tools Kiln runs, and stopping them -*- C++ -*-===//
//
// Every program Kiln runs (ptxas, fatbinary, nvcc, the target Python) starts
// here, in a process group of its own, and is recorded while it runs. A
// signal that ends Kiln can then end the tools too, nvcc's own children
// included, instead of leaving them running after Kiln is gone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>

namespace kiln::support {

struct ChildExit {
  /// The exit status, when the program exited.
  std::optional<int> exitCode;
  /// The signal that ended it, when one did.
  int signal = 0;
  /// Whether the time limit ran out (the program was then killed).
  bool timedOut = false;
};

/// Runs `program` with `argv` (argv[0] included) and waits for it: standard
/// input from /dev/null, standard output and error into the files named. A
/// program still running after `timeoutSeconds` is killed with its process
/// group. It runs in `workingDirectory` where one is given, else in Kiln's.
/// An Error means it could not be started.
llvm::Expected<ChildExit> runChildProcess(llvm::StringRef program, llvm::ArrayRef<std::string> argv,
                                          llvm::StringRef standardOutputFile,
                                          llvm::StringRef standardErrorFile,
                                          std::optional<unsigned> timeoutSeconds,
                                          llvm::StringRef workingDirectory = {});

/// Kills every running child's process group and waits for each child, and
/// lets no new child start. Only async-signal-safe calls: it runs in signal
/// handlers.
void killChildProcesses();

} // namespace kiln::support
