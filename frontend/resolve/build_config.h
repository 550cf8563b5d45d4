//===- frontend/resolve/build_config.h -------------------------*- C++ -*-===//
//
// Kernels may get their signatures from the build instead of the decorator:
//
//   # pyproject.toml, nearest to the kernel module
//   [tool.kiln.signatures]
//   add = "void(float32[:], float32[:], float32[:])"
//   "pkg.kernels.scale" = ["void(float32[:], float32)", "void(float64[:], float64)"]
//
// or `--signature 'add=void(float32[:], float32[:], float32[:])'`. A key is
// a function name, or a module-qualified one that applies only to that
// module. Each signature's text is registered with the SourceManager so
// that diagnostics point into pyproject.toml or the command line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/resolve/module_scope.h"

#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln {

/// Reads [tool.kiln.signatures] from the pyproject.toml nearest to
/// `modulePath` (searching upwards), keeping entries for `moduleName` (a
/// dotted name; may be empty) and unqualified ones. Reports malformed files
/// through `diags`; a missing pyproject.toml is no error.
std::vector<ExternalSignature> readPyprojectSignatures(llvm::StringRef modulePath,
                                                       llvm::StringRef moduleName,
                                                       SourceManager &sources,
                                                       DiagnosticEngine &diags);

/// Parses `--signature NAME=SIGNATURE` values.
llvm::Expected<std::vector<ExternalSignature>>
parseSignatureFlags(llvm::ArrayRef<std::string> flags, SourceManager &sources);

} // namespace kiln
