//===- driver/command_line.h - What the subcommands share ------*- C++ -*-===//
//
// CLI11 validators for option values with a grammar of their own: a value
// that does not parse is a usage error (exit status 2), like an unknown
// option.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::driver {

/// An architecture list, as `kiln targets --arch` takes one.
CLI::Validator archListValidator();
/// A size such as 500M or 4G.
CLI::Validator sizeValidator();
/// An age such as 30d, 12h or 45m.
CLI::Validator ageValidator();
/// OLD=NEW, as GCC's -ffile-prefix-map takes it.
CLI::Validator prefixMapValidator();

} // namespace kiln::driver
