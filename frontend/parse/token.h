//===- frontend/parse/token.h - Tokens of Python source --------*- C++ -*-===//
#pragma once

#include "frontend/source/source_manager.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>

namespace kiln {

enum class TokenKind : uint8_t {
#define TOKEN(NAME, DESCRIPTION) NAME,
#include "frontend/parse/token_kinds.def"
};

/// How a token is named in diagnostics: its spelling for operators and
/// keywords ("')'"), a description otherwise ("end of line").
llvm::StringRef describeTokenKind(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Invalid;
  SourceRange range;
  /// The token's source text (for strings and numbers, including prefixes
  /// and quotes); empty for Indent, Dedent and EndOfFile.
  llvm::StringRef text;

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
  bool isKeyword() const;
};

} // namespace kiln
