//===- driver/visible_commands.h - The commands --help lists ----*- C++ -*-===//
#pragma once

#include <CLI/CLI.hpp>

#include <vector>

namespace kiln::driver {

/// The subcommands of `app` that `--help` lists: all but those kept out of
/// it (an empty group), which completion and the man page leave out too.
inline std::vector<const CLI::App *> visibleSubcommands(const CLI::App &app) {
  return app.get_subcommands([](const CLI::App *child) { return !child->get_group().empty(); });
}

} // namespace kiln::driver
