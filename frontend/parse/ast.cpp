//===- frontend/parse/ast.cpp ---------------------------------------------------===//

#include "frontend/parse/ast.h"

namespace kiln::ast {

llvm::StringRef spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::TrueDiv:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::LShift:
    return "<<";
  case BinaryOp::RShift:
    return ">>";
  case BinaryOp::BitOr:
    return "|";
  case BinaryOp::BitXor:
    return "^";
  case BinaryOp::BitAnd:
    return "&";
  }
  return "?";
}

llvm::StringRef spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Negate:
    return "-";
  case UnaryOp::Plus:
    return "+";
  case UnaryOp::Invert:
    return "~";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

llvm::StringRef spelling(CompareOp op) {
  switch (op) {
  case CompareOp::Eq:
    return "==";
  case CompareOp::NotEq:
    return "!=";
  case CompareOp::Lt:
    return "<";
  case CompareOp::LtE:
    return "<=";
  case CompareOp::Gt:
    return ">";
  case CompareOp::GtE:
    return ">=";
  case CompareOp::Is:
    return "is";
  case CompareOp::IsNot:
    return "is not";
  case CompareOp::In:
    return "in";
  case CompareOp::NotIn:
    return "not in";
  }
  return "?";
}

llvm::StringRef spelling(BoolOpKind op) {
  return op == BoolOpKind::And ? "and" : "or";
}

void forEachChild(const Expr *e, llvm::function_ref<void(Expr *)> visit) {
  auto visitAll = [&](llvm::ArrayRef<Expr *> exprs) {
    for (Expr *child : exprs)
      if (child)
        visit(child);
  };
  auto visitOne = [&](Expr *child) {
    if (child)
      visit(child);
  };
  switch (e->kind()) {
  case Expr::Kind::Name:
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
  case Expr::Kind::ImaginaryLiteral:
  case Expr::Kind::StringLiteral:
  case Expr::Kind::BoolLiteral:
  case Expr::Kind::NoneLiteral:
  case Expr::Kind::EllipsisLiteral:
    return;
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
  case Expr::Kind::Set:
    return visitAll(llvm::cast<SequenceExpr>(e)->elements);
  case Expr::Kind::Dict: {
    const auto *dict = llvm::cast<DictExpr>(e);
    for (size_t i = 0; i < dict->values.size(); ++i) {
      visitOne(dict->keys[i]);
      visitOne(dict->values[i]);
    }
    return;
  }
  case Expr::Kind::Attribute:
    return visitOne(llvm::cast<AttributeExpr>(e)->value);
  case Expr::Kind::Subscript: {
    const auto *sub = llvm::cast<SubscriptExpr>(e);
    visitOne(sub->value);
    return visitOne(sub->index);
  }
  case Expr::Kind::Slice: {
    const auto *slice = llvm::cast<SliceExpr>(e);
    visitOne(slice->lower);
    visitOne(slice->upper);
    return visitOne(slice->step);
  }
  case Expr::Kind::Call: {
    const auto *call = llvm::cast<CallExpr>(e);
    visitOne(call->callee);
    visitAll(call->args);
    for (const Keyword &keyword : call->keywords)
      visitOne(keyword.value);
    return;
  }
  case Expr::Kind::Unary:
    return visitOne(llvm::cast<UnaryExpr>(e)->operand);
  case Expr::Kind::Binary: {
    const auto *binary = llvm::cast<BinaryExpr>(e);
    visitOne(binary->lhs);
    return visitOne(binary->rhs);
  }
  case Expr::Kind::BoolOp:
    return visitAll(llvm::cast<BoolOpExpr>(e)->values);
  case Expr::Kind::Compare: {
    const auto *compare = llvm::cast<CompareExpr>(e);
    visitOne(compare->left);
    return visitAll(compare->comparators);
  }
  case Expr::Kind::IfExp: {
    const auto *ifExp = llvm::cast<IfExpExpr>(e);
    visitOne(ifExp->test);
    visitOne(ifExp->body);
    return visitOne(ifExp->orelse);
  }
  case Expr::Kind::NamedExpr: {
    const auto *named = llvm::cast<NamedExpr>(e);
    visitOne(named->target);
    return visitOne(named->value);
  }
  case Expr::Kind::Starred:
    return visitOne(llvm::cast<StarredExpr>(e)->value);
  case Expr::Kind::Lambda: {
    const auto *lambda = llvm::cast<LambdaExpr>(e);
    for (const Parameter &param : lambda->function->params)
      if (param.defaultValue)
        visitOne(param.defaultValue);
    return visitOne(lambda->body);
  }
  case Expr::Kind::Comprehension:
    return visitOne(llvm::cast<ComprehensionExpr>(e)->element);
  case Expr::Kind::Yield:
    return visitOne(llvm::cast<YieldExpr>(e)->value);
  case Expr::Kind::Await:
    return visitOne(llvm::cast<AwaitExpr>(e)->value);
  }
}

void forEachSubexpression(Expr *e, llvm::function_ref<void(Expr *)> visit) {
  // The parser bounds the depth of expressions, and so the recursion.
  visit(e);
  forEachChild(e, [&](Expr *child) { forEachSubexpression(child, visit); });
}

void forEachSubexpressionInScope(Expr *e, llvm::function_ref<void(Expr *)> visit) {
  visit(e);
  if (const auto *lambda = llvm::dyn_cast<LambdaExpr>(e)) {
    for (const Parameter &param : lambda->function->params)
      if (param.defaultValue)
        forEachSubexpressionInScope(param.defaultValue, visit);
    return;
  }
  forEachChild(e, [&](Expr *child) { forEachSubexpressionInScope(child, visit); });
}

llvm::SmallVector<llvm::ArrayRef<Stmt *>, 2> nestedBodies(const Stmt *stmt) {
  switch (stmt->kind()) {
  case Stmt::Kind::For:
    return {llvm::cast<ForStmt>(stmt)->body, llvm::cast<ForStmt>(stmt)->orelse};
  case Stmt::Kind::While:
    return {llvm::cast<WhileStmt>(stmt)->body, llvm::cast<WhileStmt>(stmt)->orelse};
  case Stmt::Kind::If:
    return {llvm::cast<IfStmt>(stmt)->body, llvm::cast<IfStmt>(stmt)->orelse};
  case Stmt::Kind::With:
  case Stmt::Kind::Try:
    return {llvm::cast<BlockStmt>(stmt)->body};
  default:
    return {};
  }
}

void forEachStatement(llvm::ArrayRef<Stmt *> body, llvm::function_ref<void(const Stmt *)> visit) {
  for (const Stmt *stmt : body) {
    visit(stmt);
    for (llvm::ArrayRef<Stmt *> nested : nestedBodies(stmt))
      forEachStatement(nested, visit);
  }
}

void forEachExpression(llvm::ArrayRef<Stmt *> body, llvm::function_ref<void(Expr *)> visit,
                       FunctionBodies functionBodies) {
  auto one = [&](Expr *e) {
    if (!e)
      return;
    if (functionBodies == FunctionBodies::Visit)
      forEachSubexpression(e, visit);
    else
      forEachSubexpressionInScope(e, visit);
  };
  auto all = [&](llvm::ArrayRef<Expr *> exprs) { llvm::for_each(exprs, one); };
  for (const Stmt *stmt : body) {
    switch (stmt->kind()) {
    case Stmt::Kind::FunctionDef: {
      const auto *def = llvm::cast<FunctionDefStmt>(stmt);
      all(def->decorators);
      for (const Parameter &param : def->params)
        one(param.defaultValue);
      if (functionBodies == FunctionBodies::Visit)
        forEachExpression(def->body, visit);
      break;
    }
    case Stmt::Kind::ClassDef:
      all(llvm::cast<ClassDefStmt>(stmt)->bases);
      forEachExpression(llvm::cast<ClassDefStmt>(stmt)->body, visit, functionBodies);
      break;
    case Stmt::Kind::Return:
      one(llvm::cast<ReturnStmt>(stmt)->value);
      break;
    case Stmt::Kind::Assign:
      all(llvm::cast<AssignStmt>(stmt)->targets);
      one(llvm::cast<AssignStmt>(stmt)->value);
      break;
    case Stmt::Kind::AugAssign:
      one(llvm::cast<AugAssignStmt>(stmt)->target);
      one(llvm::cast<AugAssignStmt>(stmt)->value);
      break;
    case Stmt::Kind::AnnAssign:
      one(llvm::cast<AnnAssignStmt>(stmt)->target);
      one(llvm::cast<AnnAssignStmt>(stmt)->annotation);
      one(llvm::cast<AnnAssignStmt>(stmt)->value);
      break;
    case Stmt::Kind::For:
      one(llvm::cast<ForStmt>(stmt)->target);
      one(llvm::cast<ForStmt>(stmt)->iter);
      break;
    case Stmt::Kind::While:
      one(llvm::cast<WhileStmt>(stmt)->test);
      break;
    case Stmt::Kind::If:
      one(llvm::cast<IfStmt>(stmt)->test);
      break;
    case Stmt::Kind::Raise:
      one(llvm::cast<RaiseStmt>(stmt)->exception);
      one(llvm::cast<RaiseStmt>(stmt)->cause);
      break;
    case Stmt::Kind::Assert:
      one(llvm::cast<AssertStmt>(stmt)->test);
      one(llvm::cast<AssertStmt>(stmt)->message);
      break;
    case Stmt::Kind::Delete:
      all(llvm::cast<DeleteStmt>(stmt)->targets);
      break;
    case Stmt::Kind::ExprStmt:
      one(llvm::cast<ExprStmt>(stmt)->value);
      break;
    default:
      break;
    }
    for (llvm::ArrayRef<Stmt *> nested : nestedBodies(stmt))
      forEachExpression(nested, visit, functionBodies);
  }
}

} // namespace kiln::ast
