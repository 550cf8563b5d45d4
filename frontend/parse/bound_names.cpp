//===- frontend/parse/bound_names.cpp -------------------------------------===//

#include "frontend/parse/bound_names.h"

namespace kiln::ast {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

void collectTargetNames(const Expr *target, llvm::StringSet<> &names) {
  if (const auto *name = dyn_cast<NameExpr>(target))
    names.insert(name->id);
  else if (const auto *tuple = dyn_cast<SequenceExpr>(target))
    for (const Expr *element : tuple->elements)
      collectTargetNames(element, names);
  else if (const auto *starred = dyn_cast<StarredExpr>(target))
    collectTargetNames(starred->value, names);
}

void collectWalrusNames(const Expr *expr, llvm::StringSet<> &names) {
  if (!expr)
    return;
  if (const auto *named = dyn_cast<NamedExpr>(expr))
    names.insert(named->target->id);
  if (isa<LambdaExpr>(expr) || isa<ComprehensionExpr>(expr))
    return; // their own scopes
  forEachChild(expr, [&](Expr *child) { collectWalrusNames(child, names); });
}

} // namespace

void collectAssignedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
  forEachStatement(body, [&](const Stmt *stmt) {
    switch (stmt->kind()) {
    case Stmt::Kind::Assign:
      for (const Expr *target : cast<AssignStmt>(stmt)->targets)
        collectTargetNames(target, names);
      collectWalrusNames(cast<AssignStmt>(stmt)->value, names);
      break;
    case Stmt::Kind::AugAssign:
      collectTargetNames(cast<AugAssignStmt>(stmt)->target, names);
      collectWalrusNames(cast<AugAssignStmt>(stmt)->value, names);
      break;
    case Stmt::Kind::AnnAssign:
      if (cast<AnnAssignStmt>(stmt)->value)
        collectTargetNames(cast<AnnAssignStmt>(stmt)->target, names);
      break;
    case Stmt::Kind::For:
      collectTargetNames(cast<ForStmt>(stmt)->target, names);
      collectWalrusNames(cast<ForStmt>(stmt)->iter, names);
      break;
    case Stmt::Kind::While:
      collectWalrusNames(cast<WhileStmt>(stmt)->test, names);
      break;
    case Stmt::Kind::If:
      collectWalrusNames(cast<IfStmt>(stmt)->test, names);
      break;
    case Stmt::Kind::Delete:
      for (const Expr *target : cast<DeleteStmt>(stmt)->targets)
        collectTargetNames(target, names);
      break;
    case Stmt::Kind::ExprStmt:
      collectWalrusNames(cast<ExprStmt>(stmt)->value, names);
      break;
    case Stmt::Kind::Return:
      collectWalrusNames(cast<ReturnStmt>(stmt)->value, names);
      break;
    default:
      break;
    }
  });
}

std::vector<const FunctionDefStmt *> definedFunctions(llvm::ArrayRef<Stmt *> body) {
  std::vector<const FunctionDefStmt *> functions;
  forEachStatement(body, [&](const Stmt *stmt) {
    if (const auto *def = dyn_cast<FunctionDefStmt>(stmt))
      functions.push_back(def);
  });
  return functions;
}

void collectUsedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
  forEachExpression(
      body,
      [&](Expr *e) {
        if (const auto *name = dyn_cast<NameExpr>(e))
          names.insert(name->id);
      },
      FunctionBodies::Skip);
}

} // namespace kiln::ast
