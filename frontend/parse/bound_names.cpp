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

void collectDefinedFunctions(llvm::ArrayRef<Stmt *> body,
                             std::vector<const FunctionDefStmt *> &functions) {
  for (const Stmt *stmt : body) {
    switch (stmt->kind()) {
    case Stmt::Kind::FunctionDef:
      functions.push_back(cast<FunctionDefStmt>(stmt));
      break;
    case Stmt::Kind::For:
      collectDefinedFunctions(cast<ForStmt>(stmt)->body, functions);
      collectDefinedFunctions(cast<ForStmt>(stmt)->orelse, functions);
      break;
    case Stmt::Kind::While:
      collectDefinedFunctions(cast<WhileStmt>(stmt)->body, functions);
      collectDefinedFunctions(cast<WhileStmt>(stmt)->orelse, functions);
      break;
    case Stmt::Kind::If:
      collectDefinedFunctions(cast<IfStmt>(stmt)->body, functions);
      collectDefinedFunctions(cast<IfStmt>(stmt)->orelse, functions);
      break;
    case Stmt::Kind::With:
    case Stmt::Kind::Try:
      collectDefinedFunctions(cast<BlockStmt>(stmt)->body, functions);
      break;
    default:
      break;
    }
  }
}

} // namespace

void collectAssignedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
  for (const Stmt *stmt : body) {
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
    case Stmt::Kind::For: {
      const auto *loop = cast<ForStmt>(stmt);
      collectTargetNames(loop->target, names);
      collectWalrusNames(loop->iter, names);
      collectAssignedNames(loop->body, names);
      collectAssignedNames(loop->orelse, names);
      break;
    }
    case Stmt::Kind::While: {
      const auto *loop = cast<WhileStmt>(stmt);
      collectWalrusNames(loop->test, names);
      collectAssignedNames(loop->body, names);
      collectAssignedNames(loop->orelse, names);
      break;
    }
    case Stmt::Kind::If: {
      const auto *branch = cast<IfStmt>(stmt);
      collectWalrusNames(branch->test, names);
      collectAssignedNames(branch->body, names);
      collectAssignedNames(branch->orelse, names);
      break;
    }
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
  }
}

std::vector<const FunctionDefStmt *> definedFunctions(llvm::ArrayRef<Stmt *> body) {
  std::vector<const FunctionDefStmt *> functions;
  collectDefinedFunctions(body, functions);
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
