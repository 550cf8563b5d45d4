//===- frontend/resolve/build_config.h -------------------------*- C++ -*-===//
//
// Kernels may get their signatures from the build instead of the decorator:
//
//   # pyproject.toml, nearest to the kernel module
//   [tool.kiln.signatures]
//   add = "void(float32[:], float32[:], float32[:])"
//   "pkg.kernels.scale" = ["void(float32[:], float32)", "void(float64[:], float64)"]
//
// from kiln-signatures.toml, where recorded runs write them (its [signatures]
// table, same form), or `--signature 'add=void(float32[:], float32[:],
// float32[:])'`. A key is
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
/// `modulePath` and [signatures] from the nearest kiln-signatures.toml (the
/// file recorded runs write; both searched upwards), keeping unqualified
/// entries and those qualified with `moduleName` (a dotted name; empty: the
/// file's stem). Reports malformed files through `diags`; missing ones are
/// no error.
std::vector<ExternalSignature> readBuildSignatures(llvm::StringRef modulePath,
                                                   llvm::StringRef moduleName,
                                                   SourceManager &sources, DiagnosticEngine &diags);

/// Parses `--signature NAME=SIGNATURE` values.
llvm::Expected<std::vector<ExternalSignature>>
parseSignatureFlags(llvm::ArrayRef<std::string> flags, SourceManager &sources);

} // namespace kiln
