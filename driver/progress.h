//===- driver/progress.h - Build progress, as ninja shows it ----*- C++ -*-===//
//
// `kiln build` counts its tasks (code per specialization and target, cubins,
// fat binaries) and reports each one as it finishes:
//
//   on a terminal:  [12/48] saxpy(float32[::1], float32) cubin sm_90
//                   one line, rewritten in place, erased when the build ends;
//   otherwise:      nothing, unless --verbose: one plain line per task;
//   --quiet:        nothing at all.
//
// Tasks finish on the build's worker threads; the reporter serializes them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>
#include <string>

namespace kiln::driver {

enum class ProgressStyle {
  /// No output.
  Silent,
  /// One line rewritten in place (stderr is a terminal).
  Terminal,
  /// One line per finished task.
  Lines,
};

/// The style for a build: Silent with --quiet; Terminal when `stream` is a
/// terminal (and TERM is not "dumb"); else Lines with --verbose, else Silent.
ProgressStyle chooseProgressStyle(llvm::raw_fd_ostream &stream, bool quiet, bool verbose);

class ProgressReporter {
public:
  ProgressReporter(llvm::raw_ostream &stream, ProgressStyle style);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter &) = delete;
  ProgressReporter &operator=(const ProgressReporter &) = delete;

  /// Adds tasks to the total (a build learns its phases one at a time).
  void expect(unsigned tasks);
  /// Reports one finished task; thread-safe.
  void finished(llvm::StringRef label);
  /// Erases the terminal line, so that what follows starts on a clean line.
  void done();

  /// Writes what `write` writes (whole lines) between progress lines, never
  /// inside one: warnings come from any thread, as tasks finish.
  void interject(llvm::function_ref<void(llvm::raw_ostream &)> write);

private:
  llvm::raw_ostream &stream;
  ProgressStyle style;
  std::mutex mutex;
  unsigned total = 0;
  unsigned count = 0;
  bool lineShown = false;
  unsigned width;
};

} // namespace kiln::driver
