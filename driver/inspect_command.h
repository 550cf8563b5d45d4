//===- driver/inspect_command.h - `kiln inspect` ----------------*- C++ -*-===//
#pragma once

#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct InspectOptions {
  std::string path;
  bool json = false;
};

/// Reads a module built by `kiln build --module` (without loading it),
/// checks its bundle and every fat binary's checksum, and prints the
/// module's kernels, their signatures, entries, architectures and sizes,
/// the options and the Kiln that built it. Returns the exit status: 0, or 1
/// when the file cannot be read or is damaged (the message says where).
int runInspect(const InspectOptions &options);

/// Declares `kiln inspect` and its options on `app`; parsing fills `inspect`.
CLI::App *addInspectCommand(CLI::App &app, InspectOptions &inspect);

} // namespace kiln::driver
