//===- frontend/parse/ast_printer.h - Textual AST dumps --------*- C++ -*-===//
//
// Prints an AST as nested S-expressions, one statement per line:
//
//   (def f (params x y)
//     (= (target i) (Call (Attr cuda grid) 1))
//     (if (Compare i < (Sub x 0))
//       ...))
//
// Used by `kiln build --emit ast` and by the parser tests, which compare it
// with the same rendering of CPython's own `ast` module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"

#include <llvm/Support/raw_ostream.h>

namespace kiln {

void printModule(const ast::Module &module, llvm::raw_ostream &os);
void printStmt(const ast::Stmt *stmt, llvm::raw_ostream &os);
void printExpr(const ast::Expr *expr, llvm::raw_ostream &os);

} // namespace kiln
