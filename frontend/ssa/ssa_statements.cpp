//===- frontend/ssa/ssa_statements.cpp - Statements -----------------------===//
//
// Statements other than the ones that branch or loop: assignments (to
// names, subscripts, attributes and tuples of them), `del`, `assert`,
// `return`, `raise`, `break` and `continue`, and the statements kernels
// cannot contain, which are reported.
//
//===----------------------------------------------------------------------===//

#include "frontend/ssa/ssa_builder.h"

namespace kiln::ssa {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

void SSABuilder::buildBody(llvm::ArrayRef<Stmt *> body) {
  for (const Stmt *stmt : body) {
    if (diags.errorLimitReached()) {
      diags.stopAtErrorLimit(); // the rest of the body is not checked
      failed = true;
      return;
    }
    buildStmt(stmt);
  }
}

void SSABuilder::buildStmt(const Stmt *stmt) {
  switch (stmt->kind()) {
  case Stmt::Kind::Assign: {
    const auto *assign = cast<AssignStmt>(stmt);
    // A variable that names a function (functionAliases) only records that
    // it is assigned: its reads make the function.
    if (const auto *target = dyn_cast<NameExpr>(assign->targets.front());
        target && functionAliases.count(target->id)) {
      assignVariable(target->id, emitConstant(ConstantValue::none(), stmt->range(), false),
                     target->range());
      return;
    }
    Instr *value = buildExpr(assign->value);
    if (!value)
      return;
    for (const Expr *target : assign->targets)
      buildAssignTarget(target, value, stmt->range());
    return;
  }
  case Stmt::Kind::AnnAssign: {
    const auto *assign = cast<AnnAssignStmt>(stmt);
    if (!assign->value)
      return; // a bare annotation declares nothing at run time
    if (Instr *value = buildExpr(assign->value))
      buildAssignTarget(assign->target, value, stmt->range());
    return;
  }
  case Stmt::Kind::AugAssign:
    return buildAugAssign(cast<AugAssignStmt>(stmt));
  case Stmt::Kind::If:
    return buildIf(cast<IfStmt>(stmt));
  case Stmt::Kind::While:
    return buildWhile(cast<WhileStmt>(stmt));
  case Stmt::Kind::For:
    return buildFor(cast<ForStmt>(stmt));
  case Stmt::Kind::Return:
    return buildReturn(cast<ReturnStmt>(stmt));
  case Stmt::Kind::Raise:
    return buildRaise(cast<RaiseStmt>(stmt));
  case Stmt::Kind::Break:
    if (loops.empty()) {
      unsupported(DiagID::err_break_outside_loop, stmt->range());
      return;
    }
    jump(loops.back().breakTarget, stmt->range());
    return;
  case Stmt::Kind::Continue:
    if (loops.empty()) {
      unsupported(DiagID::err_continue_outside_loop, stmt->range());
      return;
    }
    jump(loops.back().continueTarget, stmt->range());
    return;
  case Stmt::Kind::Pass:
    return;
  case Stmt::Kind::ExprStmt: {
    const Expr *value = cast<ExprStmt>(stmt)->value;
    if (const auto *literal = dyn_cast<StringLiteralExpr>(value); literal && !literal->isFormatted)
      return; // a string statement is a comment
    buildExpr(value);
    return;
  }
  case Stmt::Kind::Assert: {
    const auto *assertion = cast<AssertStmt>(stmt);
    Instr *test = buildExpr(assertion->test);
    Instr *message = assertion->message ? buildExpr(assertion->message) : nullptr;
    if (!test || (assertion->message && !message))
      return;
    Instr *instr = emit(Op::Assert, stmt->range(), {test});
    if (message)
      instr->operands.push_back(message);
    return;
  }
  case Stmt::Kind::Delete:
    for (const Expr *target : cast<DeleteStmt>(stmt)->targets) {
      const auto *name = dyn_cast<NameExpr>(target);
      if (!name) {
        unsupported(DiagID::err_unsupported_del, target->range());
        continue;
      }
      ensureOpenBlock();
      Instr *unbound = undefined(name->id, target->range());
      unbound->deleted = true;
      bindVariable(name->id, current, unbound);
    }
    return;
  case Stmt::Kind::FunctionDef:
    // Declared with the module (nested_functions.h); its name makes a
    // closure wherever it is read.
    return;
  case Stmt::Kind::ClassDef:
    unsupported(DiagID::err_unsupported_statement, cast<ClassDefStmt>(stmt)->nameRange,
                {"class definitions"});
    return;
  case Stmt::Kind::With:
    unsupported(DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
                {"'with' statements"});
    return;
  case Stmt::Kind::Try:
    unsupported(DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
                {"'try' statements"});
    return;
  case Stmt::Kind::Global:
  case Stmt::Kind::Nonlocal:
    unsupported(
        DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
        {stmt->kind() == Stmt::Kind::Global ? "'global' declarations" : "'nonlocal' declarations"});
    return;
  case Stmt::Kind::Import:
  case Stmt::Kind::ImportFrom:
    unsupported(DiagID::err_import_in_function, stmt->range());
    return;
  }
}

void SSABuilder::buildAssignTarget(const Expr *target, Instr *value, SourceRange range) {
  switch (target->kind()) {
  case Expr::Kind::Name:
    assignVariable(cast<NameExpr>(target)->id, value, target->range());
    return;
  case Expr::Kind::Subscript: {
    const auto *sub = cast<SubscriptExpr>(target);
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    if (!index)
      return;
    emit(Op::SetItem, target->range(), {object, index, value});
    return;
  }
  case Expr::Kind::Attribute: {
    const auto *attr = cast<AttributeExpr>(target);
    Instr *object = buildExpr(attr->value);
    if (!object)
      return;
    Instr *set = emit(Op::SetAttr, target->range(), {object, value});
    set->name = attr->attr.str();
    return;
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto *tuple = cast<SequenceExpr>(target);
    for (size_t i = 0; i < tuple->elements.size(); ++i) {
      if (isa<StarredExpr>(tuple->elements[i])) {
        unsupported(DiagID::err_starred_assignment, tuple->elements[i]->range());
        return;
      }
      // The whole target: a wrong count is one error, not one per name.
      Instr *element = emit(Op::TupleGet, tuple->range(), {value});
      element->index = static_cast<unsigned>(i);
      element->name = std::to_string(tuple->elements.size()); // expected length
      buildAssignTarget(tuple->elements[i], element, range);
    }
    return;
  }
  default:
    unsupported(DiagID::err_cannot_assign_to, target->range(), {"expression"});
    return;
  }
}

void SSABuilder::buildAugAssign(const AugAssignStmt *stmt) {
  if (stmt->op == BinaryOp::MatMul) {
    unsupported(DiagID::err_unsupported_operator, stmt->opRange, {"@="});
    return;
  }
  if (const auto *sub = dyn_cast<SubscriptExpr>(stmt->target)) {
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    Instr *rhs = index ? buildExpr(stmt->value) : nullptr;
    if (!rhs)
      return;
    Instr *old = emit(Op::GetItem, sub->range(), {object, index});
    Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
    result->binaryOp = stmt->op;
    emit(Op::SetItem, sub->range(), {object, index, result});
    return;
  }
  if (const auto *attr = dyn_cast<AttributeExpr>(stmt->target)) {
    Instr *object = buildExpr(attr->value);
    Instr *rhs = object ? buildExpr(stmt->value) : nullptr;
    if (!rhs)
      return;
    Instr *old = emit(Op::GetAttr, attr->range(), {object});
    old->name = attr->attr.str();
    Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
    result->binaryOp = stmt->op;
    Instr *set = emit(Op::SetAttr, attr->range(), {object, result});
    set->name = attr->attr.str();
    return;
  }
  const auto *name = cast<NameExpr>(stmt->target);
  Instr *old = buildName(name);
  Instr *rhs = old ? buildExpr(stmt->value) : nullptr;
  if (!rhs)
    return;
  Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
  result->binaryOp = stmt->op;
  assignVariable(name->id, result, stmt->target->range());
}

void SSABuilder::buildReturn(const ReturnStmt *stmt) {
  Instr *value = stmt->value ? buildExpr(stmt->value)
                             : emitConstant(ConstantValue::none(), stmt->range(), true);
  if (!value)
    return;
  ensureOpenBlock();
  current->terminator = {Terminator::Kind::Return, value, nullptr, nullptr, stmt->range()};
}

void SSABuilder::buildRaise(const RaiseStmt *stmt) {
  if (!stmt->exception) {
    unsupported(DiagID::err_bare_raise, stmt->range());
    return;
  }
  if (stmt->cause) {
    unsupported(DiagID::err_raise_from, stmt->cause->range());
    return;
  }
  Instr *exception = buildExpr(stmt->exception);
  if (!exception)
    return;
  ensureOpenBlock();
  current->terminator = {Terminator::Kind::Raise, exception, nullptr, nullptr, stmt->range()};
}

} // namespace kiln::ssa
