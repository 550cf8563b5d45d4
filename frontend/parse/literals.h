//===- frontend/parse/literals.h -------------------------------*- C++ -*-===//
//
// The lexer only delimits literals; these functions compute their values with
// Python's rules, reporting malformed literals through the diagnostics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/token.h"
#include "frontend/source/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

struct NumberValue {
  enum class Kind { Integer, Float, Imaginary };
  Kind kind;
  uint64_t integer = 0; // for Integer
  /// An Integer above 2**64 - 1: valid Python, but no kernel can use it.
  bool integerTooLarge = false;
  double real = 0; // for Float, or the imaginary part of Imaginary
};

/// Evaluates a Number token. Returns nothing (after a diagnostic) if the
/// literal is malformed.
std::optional<NumberValue> evaluateNumber(const Token &token, DiagnosticEngine &diags);

struct StringValue {
  std::string text; // UTF-8 for str literals, raw bytes for bytes literals
  bool isBytes = false;
  bool isFormatted = false;
  /// True when every byte of `text` sits at the same offset from the opening
  /// quote in the source, i.e. no escapes were processed. Signature strings
  /// without escapes are parsed in place, with exact source positions.
  bool isVerbatim = true;
  uint32_t contentOffset = 0; // source offset of the first content byte
};

/// Decodes a String token: prefix, quotes and escape sequences.
std::optional<StringValue> evaluateString(const Token &token, DiagnosticEngine &diags);

} // namespace kiln
