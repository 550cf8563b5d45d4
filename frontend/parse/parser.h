//===- frontend/parse/parser.h - Python parser -----------------*- C++ -*-===//
//
// A hand-written recursive-descent parser for Python 3 as kernel modules use
// it. It parses the whole module, recovering at statement boundaries after a
// syntax error so that one run reports several errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/source/diagnostics.h"

namespace kiln {

/// Parses one file. Statements with syntax errors are dropped from the
/// result after their diagnostic; check `diags.hasErrors()`.
ast::Module parseModule(const SourceManager &sources, uint32_t file, ast::AstContext &context,
                        DiagnosticEngine &diags);

/// Parses the bytes [begin, end) of a file as a single expression, such as
/// the text of a signature string. Returns null after a diagnostic.
ast::Expr *parseExpression(const SourceManager &sources, uint32_t file, uint32_t begin,
                           uint32_t end, ast::AstContext &context, DiagnosticEngine &diags);

} // namespace kiln
