//===- frontend/parse/lexer.h - Python tokenizer ---------------*- C++ -*-===//
//
// Turns one source file into Python tokens, including the NEWLINE, INDENT and
// DEDENT tokens that carry Python's block structure. Follows CPython's
// tokenizer: implicit line joining inside brackets, backslash continuation,
// tabs to multiples of 8 with a consistency check, blank and comment-only
// lines ignored. Bad input becomes a diagnostic and an Invalid token; the
// lexer always reaches the end of the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/token.h"
#include "frontend/source/diagnostics.h"

#include <vector>

namespace kiln {

/// Tokenizes a whole file. The result always ends with EndOfFile, preceded by
/// a Newline and enough Dedents to close every open block.
std::vector<Token> tokenize(const SourceManager &sources, uint32_t file, DiagnosticEngine &diags);

/// Tokenizes the bytes [begin, end) of a file as one expression: line breaks
/// and indentation carry no meaning, as inside brackets. Used for signature
/// strings, so that their tokens keep their true positions in the module.
std::vector<Token> tokenizeExpression(const SourceManager &sources, uint32_t file, uint32_t begin,
                                      uint32_t end, DiagnosticEngine &diags);

} // namespace kiln
