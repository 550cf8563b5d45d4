//===- driver/arch_option.h - Checking an --arch value -----------*- C++ -*-===//
//
// An architecture list on the command line that does not parse is a usage
// error (exit status 2). `native` parses whatever the machine has: that it
// finds no GPU is a problem of the machine (exit status 1), known only when
// the list is used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace kiln::driver {

/// Why `list` is not an architecture list, or nothing if it is one.
std::optional<std::string> archListSyntaxProblem(llvm::StringRef list);

} // namespace kiln::driver
