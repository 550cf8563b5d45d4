//===- pipeline/machine_tools.h - The toolkit and cache, found early -*- C++ -*-===//
//
// Before a build of device code compiles anything it needs the CUDA
// toolkit (whose version may take a run of `ptxas --version` to learn) and
// its cache (a database to open and check), and neither depends on the
// kernels. A warm build is mostly these, the front end and the link, so
// MachineTools looks for both on a thread of its own while the front end
// reads the module.
//
// What opening the cache reports (a damaged index, a remote it cannot
// reach) is held until the build takes the cache, so that it still
// follows the module's own diagnostics; a build that stops before (an
// error in the module) reports none of it, as when it opened nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/cuda_toolkit.h"
#include "pipeline/build_cache.h"
#include "pipeline/build_options.h"
#include "pipeline/build_reporter.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::pipeline {

class MachineTools {
public:
  /// Starts looking where `options` ask for device code: then the toolkit
  /// is needed whatever the kernels. A build of host objects needs it only
  /// for kernels that call libdevice, and looks when it knows them.
  MachineTools(const BuildOptions &options, BuildReporter &reporter);
  ~MachineTools();
  MachineTools(const MachineTools &) = delete;
  MachineTools &operator=(const MachineTools &) = delete;

  /// The CUDA toolkit: the one found early, else looked for now.
  llvm::Expected<cuda_tools::CudaToolkit> toolkit();
  /// The cache `options` ask for, for a build with CUDA `cudaVersion`:
  /// the one opened early when it was opened for that version, else
  /// opened now; null when it is off or unusable (with one warning).
  std::unique_ptr<BuildCache> cache(const std::string &cudaVersion);

private:
  /// Holds what the early cache reports until the build takes the cache,
  /// then passes everything on as it comes.
  class HeldReporter final : public BuildReporter {
  public:
    explicit HeldReporter(BuildReporter &reporter) : reporter(reporter) {}
    void sourceDiagnostics(const DiagnosticEngine &diagnostics) override {
      reporter.sourceDiagnostics(diagnostics);
    }
    void warning(llvm::StringRef message) override { pass(true, message); }
    void expectTasks(unsigned count) override { reporter.expectTasks(count); }
    void taskFinished(llvm::StringRef label) override { reporter.taskFinished(label); }
    void note(llvm::StringRef line) override { pass(false, line); }
    void release();

  private:
    /// Holds a warning or a note, or passes it on once released.
    void pass(bool isWarning, llvm::StringRef text);

    BuildReporter &reporter;
    std::mutex mutex;
    bool holding = true;
    std::vector<std::pair<bool, std::string>> held; // (a warning?, text)
  };

  /// Waits for the early search, once.
  void join();

  const BuildOptions &options;
  /// Declared before the cache, whose warnings it receives, so that it
  /// outlives it.
  HeldReporter heldReporter;
  std::thread searching;
  std::optional<llvm::Expected<cuda_tools::CudaToolkit>> foundToolkit;
  /// Set once the early search has opened the cache, even where it is
  /// off or unusable (null): its warning is given once.
  std::optional<std::unique_ptr<BuildCache>> openedCache;
  std::string openedFor;
};

} // namespace kiln::pipeline
