//===- pipeline/signature_file.h - kiln-signatures.toml ---------*- C++ -*-===//
//
// The signatures file holds, per kernel (by its module-qualified name), the
// signatures a package's test runs called it with:
//
//   # Kernel signatures recorded from test runs; `kiln build` reads them.
//   [signatures]
//   "pkg.kernels.scale" = [
//       "void(float32[::1], float32[::1])",
//   ]
//
// Recording runs (kiln/signature_file.py) and `kiln signatures` write it in
// this one form, sorted and without duplicates, under an flock on the file
// itself, which is replaced rather than rewritten; `kiln build` reads it
// (frontend/resolve/build_config.h); both read it through
// frontend/resolve/signature_table.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <map>
#include <set>
#include <string>

namespace kiln::pipeline {

/// Kernel (module-qualified) -> its signatures.
using SignatureTable = std::map<std::string, std::set<std::string>>;

/// The table at `tablePath` ({"signatures"}, or {"tool", "kiln",
/// "signatures"} in a pyproject.toml) of the TOML file at `path`; empty
/// when the file or the table does not exist. A value is a signature or a
/// list of them.
llvm::Expected<SignatureTable> readSignatureTable(llvm::StringRef path,
                                                  llvm::ArrayRef<llvm::StringRef> tablePath);

/// The file's text for `table`, as recording runs write it.
std::string renderSignatureFile(const SignatureTable &table);

/// Reads the signatures file at `path` (created if missing) under its lock,
/// lets `change` edit the table, and replaces the file if the table changed.
llvm::Error updateSignatureFile(llvm::StringRef path,
                                llvm::function_ref<void(SignatureTable &)> change);

} // namespace kiln::pipeline
