//===- driver/check_command.h - `kiln check` --------------------*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct CheckOptions {
  std::vector<std::string> files;
  std::string moduleName;
  std::vector<std::string> signatures;
  /// The Python that imports a module whose kernels read globals its host
  /// code computes (empty: python3 on $PATH).
  std::string python;
  bool json = false;
  bool verbose = false;
  bool color = false;
};

/// Type-checks each file and prints what it defines, or its diagnostics.
/// Returns the process exit status: 0 if every file checked clean, 1 if any
/// had errors.
int runCheck(const CheckOptions &options);

/// Declares `kiln check` and its options on `app`; parsing fills `check`.
CLI::App *addCheckCommand(CLI::App &app, CheckOptions &check);

} // namespace kiln::driver
