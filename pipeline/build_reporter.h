//===- pipeline/build_reporter.h - What a build tells its caller -*- C++ -*-===//
//
// The pipeline prints nothing itself: the `kiln` command shows diagnostics,
// progress and cache statistics on the terminal, and an in-process caller
// collects them. Tasks finish on worker threads, so `taskFinished` and
// `note` may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

namespace kiln {
class DiagnosticEngine;
} // namespace kiln

namespace kiln::pipeline {

class BuildReporter {
public:
  virtual ~BuildReporter() = default;

  /// The kernel module's diagnostics (errors and warnings), once the front
  /// end has checked it.
  virtual void sourceDiagnostics(const DiagnosticEngine &diagnostics) = 0;
  /// A problem that does not fail the build (an unusable cache).
  virtual void warning(llvm::StringRef message) = 0;
  /// More tasks to come (the build learns its phases one at a time).
  virtual void expectTasks(unsigned count) = 0;
  /// One task finished: "saxpy(float32[::1], float32) cubin sm_90".
  virtual void taskFinished(llvm::StringRef label) = 0;
  /// A line of detail: cache hits and misses, cache statistics.
  virtual void note(llvm::StringRef line) = 0;
};

} // namespace kiln::pipeline
