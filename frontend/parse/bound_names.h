//===- frontend/parse/bound_names.h ----------------------------*- C++ -*-===//
//
// Which names a function body binds, as Python's compiler decides a
// function's local variables: assignment targets (also in `for`, `del`,
// `:=`, augmented and annotated assignments) and the functions defined in
// it, anywhere in its statements but not inside the functions it defines,
// which have scopes of their own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"

#include <llvm/ADT/StringSet.h>

#include <vector>

namespace kiln::ast {

/// Calls `bind` with each name the statements assign (not the functions
/// they define), once for each assignment: a name assigned twice comes
/// twice. `del x` counts as an assignment of `x`.
void forEachAssignedName(llvm::ArrayRef<Stmt *> body,
                         llvm::function_ref<void(llvm::StringRef)> bind);

/// Adds the names the statements assign to `names` (not the functions they
/// define).
void collectAssignedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names);

/// The functions the statements define, directly or in their loops,
/// branches, `with` and `try` blocks, in source order.
std::vector<const FunctionDefStmt *> definedFunctions(llvm::ArrayRef<Stmt *> body);

/// The functions the statements' lambdas make (LambdaExpr::function), in
/// source order; not those of lambdas inside other lambdas or inside the
/// functions the statements define.
std::vector<const FunctionDefStmt *> definedLambdas(llvm::ArrayRef<Stmt *> body);

/// Adds every name the statements read or write to `names`; not those in
/// the bodies of the functions they define.
void collectUsedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names);

} // namespace kiln::ast
