//===- driver/targets_command.h - `kiln targets` ----------------*- C++ -*-===//
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct TargetsOptions {
  /// --arch: a list to check and expand instead of $CUDAARCHS or the default.
  std::optional<std::string> arch;
  /// --python-abi: the Python ABI whose module file name suffix to show.
  std::string pythonAbi = "abi3";
  bool json = false;
};

/// Prints the CUDA toolkit Kiln found, the architectures CUDA 13 supports
/// and how Kiln builds each, the default list and the selected one, and the
/// file name suffix of kernel modules for the Python ABI asked for. Returns
/// the process exit status: 0, or 1 when there is no usable toolkit or the
/// selected architecture list is invalid, 2 for an unknown Python ABI.
int runTargets(const TargetsOptions &options);

/// Declares `kiln targets` and its options on `app`; parsing fills `targets`.
CLI::App *addTargetsCommand(CLI::App &app, TargetsOptions &targets);

} // namespace kiln::driver
