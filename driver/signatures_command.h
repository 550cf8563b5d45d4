//===- driver/signatures_command.h - `kiln signatures` ----------*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct SignaturesOptions {
  enum class Action { List, Add, Prune };
  Action action = Action::List;
  /// The signatures file, or a folder to look for it from (upwards).
  std::string path = ".";
  /// Add: the module-qualified kernel and its signatures.
  std::string kernel;
  std::vector<std::string> signatures;
  bool json = false;
  /// Prune: show what would go, change nothing.
  bool dryRun = false;
};

/// `kiln signatures list|add|prune`: shows the signatures a project's build
/// compiles (kiln-signatures.toml and pyproject.toml's
/// [tool.kiln.signatures]), adds some to kiln-signatures.toml, or removes
/// its entries whose kernel no longer exists. Returns the exit status: 0,
/// or 1 with a message on stderr.
int runSignatures(const SignaturesOptions &options);

/// Declares `kiln signatures` and its options on `app`; parsing fills `signatures`.
CLI::App *addSignaturesCommand(CLI::App &app, SignaturesOptions &signatures);

} // namespace kiln::driver
