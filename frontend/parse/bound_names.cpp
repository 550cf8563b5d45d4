//===- frontend/parse/bound_names.cpp -------------------------------------===//

#include "frontend/parse/bound_names.h"

namespace kiln::ast {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

using Bind = llvm::function_ref<void(llvm::StringRef)>;

void bindTargetNames(const Expr *target, Bind bind) {
  if (const auto *name = dyn_cast<NameExpr>(target))
    bind(name->id);
  else if (const auto *tuple = dyn_cast<SequenceExpr>(target))
    for (const Expr *element : tuple->elements)
      bindTargetNames(element, bind);
  else if (const auto *starred = dyn_cast<StarredExpr>(target))
    bindTargetNames(starred->value, bind);
}

void bindWalrusNames(const Expr *expr, Bind bind) {
  if (!expr)
    return;
  if (const auto *named = dyn_cast<NamedExpr>(expr))
    bind(named->target->id);
  if (isa<LambdaExpr>(expr) || isa<ComprehensionExpr>(expr))
    return; // their own scopes
  forEachChild(expr, [&](Expr *child) { bindWalrusNames(child, bind); });
}

} // namespace

void forEachAssignedName(llvm::ArrayRef<Stmt *> body, Bind bind) {
  forEachStatement(body, [&](const Stmt *stmt) {
    switch (stmt->kind()) {
    case Stmt::Kind::Assign:
      for (const Expr *target : cast<AssignStmt>(stmt)->targets)
        bindTargetNames(target, bind);
      bindWalrusNames(cast<AssignStmt>(stmt)->value, bind);
      break;
    case Stmt::Kind::AugAssign:
      bindTargetNames(cast<AugAssignStmt>(stmt)->target, bind);
      bindWalrusNames(cast<AugAssignStmt>(stmt)->value, bind);
      break;
    case Stmt::Kind::AnnAssign:
      if (cast<AnnAssignStmt>(stmt)->value)
        bindTargetNames(cast<AnnAssignStmt>(stmt)->target, bind);
      break;
    case Stmt::Kind::For:
      bindTargetNames(cast<ForStmt>(stmt)->target, bind);
      bindWalrusNames(cast<ForStmt>(stmt)->iter, bind);
      break;
    case Stmt::Kind::While:
      bindWalrusNames(cast<WhileStmt>(stmt)->test, bind);
      break;
    case Stmt::Kind::If:
      bindWalrusNames(cast<IfStmt>(stmt)->test, bind);
      break;
    case Stmt::Kind::Delete:
      for (const Expr *target : cast<DeleteStmt>(stmt)->targets)
        bindTargetNames(target, bind);
      break;
    case Stmt::Kind::ExprStmt:
      bindWalrusNames(cast<ExprStmt>(stmt)->value, bind);
      break;
    case Stmt::Kind::Return:
      bindWalrusNames(cast<ReturnStmt>(stmt)->value, bind);
      break;
    default:
      break;
    }
  });
}

void collectAssignedNames(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
  forEachAssignedName(body, [&](llvm::StringRef name) { names.insert(name); });
}

std::vector<const FunctionDefStmt *> definedFunctions(llvm::ArrayRef<Stmt *> body) {
  std::vector<const FunctionDefStmt *> functions;
  forEachStatement(body, [&](const Stmt *stmt) {
    if (const auto *def = dyn_cast<FunctionDefStmt>(stmt))
      functions.push_back(def);
  });
  return functions;
}

std::vector<const FunctionDefStmt *> definedLambdas(llvm::ArrayRef<Stmt *> body) {
  std::vector<const FunctionDefStmt *> functions;
  forEachExpression(
      body,
      [&](Expr *e) {
        if (const auto *lambda = dyn_cast<LambdaExpr>(e))
          functions.push_back(lambda->function);
      },
      FunctionBodies::Skip);
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
