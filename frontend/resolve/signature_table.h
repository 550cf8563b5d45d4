//===- frontend/resolve/signature_table.h - signature tables ----*- C++ -*-===//
//
// The one reader of a signatures table, the TOML form in which kernels get
// signatures from outside their source:
//
//   [tool.kiln.signatures]                  # in pyproject.toml
//   add = "void(float32[:], float32[:])"
//   "pkg.kernels.scale" = ["void(float32[:], float32)", "void(float64[:], float64)"]
//
// and the [signatures] table of kiln-signatures.toml, which recording runs
// write in the same form. A key is a function name or a module-qualified
// one; a value is a signature or a list of them. The reader keeps where each
// value is written, so that the build's diagnostics point into the file,
// and leaves to its callers what a malformed value means: the build reports
// it and goes on, `kiln signatures` refuses the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// A place in a TOML file: 1-based line and column.
struct TomlPosition {
  uint32_t line = 1;
  uint32_t column = 1;
};

/// One value written for a key: a signature's text, or (`text` empty) a
/// value that is not a string and so cannot be a signature.
struct WrittenSignature {
  std::optional<std::string> text;
  TomlPosition begin;
  TomlPosition end;
};

/// A key of the table and the signatures written for it, in file order.
struct SignatureTableRow {
  std::string key;
  std::vector<WrittenSignature> signatures;
};

/// What a file holds at the table's path.
struct SignatureTableContents {
  /// False when the path names a value that is not a table.
  bool isTable = true;
  /// Rows in key order; empty when the file has no such table.
  std::vector<SignatureTableRow> rows;
};

/// A file that is not TOML, and where it stops being so.
class TomlSyntaxError : public llvm::ErrorInfo<TomlSyntaxError> {
public:
  static char ID;
  TomlSyntaxError(TomlPosition at, std::string description)
      : at(at), description(std::move(description)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  TomlPosition at;
  std::string description;
};

/// The table at `tablePath` ({"signatures"}, or {"tool", "kiln",
/// "signatures"} in a pyproject.toml) of the TOML text `contents`, read from
/// `path` (named in positions). Fails with a TomlSyntaxError only.
llvm::Expected<SignatureTableContents>
readSignatureTableText(llvm::StringRef contents, llvm::StringRef path,
                       llvm::ArrayRef<llvm::StringRef> tablePath);

} // namespace kiln
