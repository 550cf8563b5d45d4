//===- frontend/ssa/ssa_control_flow.cpp - Conditions, branches and loops -===//
//
// Conditions, built as jumps as CPython compiles them, `if` statements and
// `while` and `for` loops. A `for` loop runs a hidden counter over what its
// iterable counts; enumerate() and zip() count with their iterables'.
//
//===----------------------------------------------------------------------===//

#include "frontend/ssa/ssa_builder.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln::ssa {

using namespace ast;
using llvm::dyn_cast;
using llvm::isa;

/// Ends the current block with jumps to `ifTrue` or `ifFalse` on `test`, as
/// CPython compiles a condition (compiler_jump_if): `not` swaps the
/// targets, `and`/`or` and conditional expressions become jumps rather than
/// values, and a constant jumps straight to one target, so that the code on
/// the other side is never compiled (Numba never sees it, so it is never
/// typed).
void SSABuilder::buildCondition(const Expr *test, Block *ifTrue, Block *ifFalse) {
  if (const auto *unary = dyn_cast<UnaryExpr>(test); unary && unary->op == UnaryOp::Not) {
    buildCondition(unary->operand, ifFalse, ifTrue);
    return;
  }
  if (const auto *boolOp = dyn_cast<BoolOpExpr>(test)) {
    bool isAnd = boolOp->op == BoolOpKind::And;
    for (size_t i = 0; i + 1 < boolOp->values.size(); ++i) {
      Block *next = newBlock();
      buildCondition(boolOp->values[i], isAnd ? next : ifTrue, isAnd ? ifFalse : next);
      sealBlock(next);
      current = next;
    }
    buildCondition(boolOp->values.back(), ifTrue, ifFalse);
    return;
  }
  if (const auto *ifExp = dyn_cast<IfExpExpr>(test)) {
    Block *thenBlock = newBlock();
    Block *elseBlock = newBlock();
    buildCondition(ifExp->test, thenBlock, elseBlock);
    sealBlock(thenBlock);
    sealBlock(elseBlock);
    current = thenBlock;
    buildCondition(ifExp->body, ifTrue, ifFalse);
    current = elseBlock;
    buildCondition(ifExp->orelse, ifTrue, ifFalse);
    return;
  }
  const auto *compare = dyn_cast<CompareExpr>(test);
  if (compare && compare->ops.size() > 1 && llvm::none_of(compare->ops, [](CompareOp op) {
        return op == CompareOp::In || op == CompareOp::NotIn; // buildCompare reports these
      })) {
    // a < b < c jumps to ifFalse as soon as one comparison fails.
    Instr *left = buildExpr(compare->left);
    for (size_t i = 0; left && i < compare->ops.size(); ++i) {
      Instr *right = buildExpr(compare->comparators[i]);
      if (!right)
        break;
      Instr *comparison = emitCompare(left, right, compare->ops[i], compare->range());
      if (i + 1 == compare->ops.size()) {
        branch(comparison, ifTrue, ifFalse, test->range());
        return;
      }
      Block *next = newBlock();
      branch(comparison, next, ifFalse, test->range());
      sealBlock(next);
      current = next;
      left = right;
    }
    jump(ifFalse, test->range()); // the error is reported; the function will not be typed
    return;
  }
  Instr *value = buildExpr(test);
  if (!value) {
    jump(ifFalse, test->range()); // the error is reported; the function will not be typed
    return;
  }
  if (isLiteral(value, test)) {
    jump(value->constant->truthy() ? ifTrue : ifFalse, test->range());
    return;
  }
  // A branch on another constant (a module constant, a local whose
  // reaching assignment is one) is decided by type inference, as Numba's
  // dead-branch pruning decides it.
  branch(truth(value, test->range()), ifTrue, ifFalse, test->range());
}

void SSABuilder::buildIf(const IfStmt *stmt) {
  Block *thenBlock = newBlock();
  Block *elseBlock = newBlock();
  Block *join = newBlock();
  buildCondition(stmt->test, thenBlock, stmt->orelse.empty() ? join : elseBlock);
  sealBlock(thenBlock);
  current = thenBlock;
  buildBody(stmt->body);
  jump(join, stmt->range());
  if (!stmt->orelse.empty()) {
    sealBlock(elseBlock);
    current = elseBlock;
    buildBody(stmt->orelse);
    jump(join, stmt->range());
  } else {
    sealBlock(elseBlock); // unreachable, dropped later
  }
  sealBlock(join);
  current = join;
}

/// As CPython compiles a `while` loop, and Numba types it from the
/// bytecode: the condition is tested before the first iteration (where
/// `continue` goes too) and again at the end of each. A first test that
/// constants decide (`c = 0; while c < 5:`) then leaves no path around the
/// body, and what the body assigns reaches the code after the loop with the
/// body's types alone.
void SSABuilder::buildWhile(const WhileStmt *stmt) {
  Block *header = newBlock();
  Block *body = newBlock();
  Block *orelse = newBlock();
  Block *exit = newBlock();
  jump(header, stmt->range());
  current = header;
  buildCondition(stmt->test, body, orelse);
  current = body;
  loops.push_back({header, exit});
  buildBody(stmt->body);
  loops.pop_back();
  if (!current->isTerminated())
    buildCondition(stmt->test, body, orelse);
  sealBlock(body);
  sealBlock(header);
  sealBlock(orelse);
  current = orelse;
  buildBody(stmt->orelse);
  jump(exit, stmt->range());
  sealBlock(exit);
  current = exit;
}

void SSABuilder::buildFor(const ForStmt *stmt) {
  if (stmt->isAsync) {
    unsupported(DiagID::err_unsupported_statement, stmt->range(), {"'async for' loops"});
    return;
  }
  std::optional<IterationPlan> plan = planIteration(stmt->iter);
  if (!plan)
    return;
  SourceRange iterRange = stmt->iter->range();
  Instr *count = plan->count;
  Instr *start = emit(Op::LoopStart, iterRange, {count});
  // The iteration counter is a hidden variable, so that SSA construction
  // gives it its loop-header phi like any other.
  std::string counter = "$counter" + std::to_string(hiddenCounter++);
  bindVariable(counter, current, start);

  Block *header = newBlock();
  Block *body = newBlock();
  Block *latch = newBlock();
  Block *orelse = newBlock();
  Block *exit = newBlock();
  jump(header, stmt->range());
  current = header;
  Instr *index = readVariable(counter, header, iterRange);
  Instr *more = emit(Op::LoopTest, iterRange, {index, count});
  branch(more, body, orelse, iterRange);

  sealBlock(body);
  current = body;
  Instr *item = plan->item(index);
  if (!item)
    return;
  buildAssignTarget(stmt->target, item, stmt->target->range());
  loops.push_back({latch, exit});
  buildBody(stmt->body);
  loops.pop_back();
  jump(latch, stmt->range());

  sealBlock(latch);
  current = latch;
  Instr *next = emit(Op::LoopNext, iterRange, {readVariable(counter, latch, iterRange)});
  bindVariable(counter, latch, next);
  jump(header, stmt->range());
  sealBlock(header);

  sealBlock(orelse);
  current = orelse;
  buildBody(stmt->orelse);
  jump(exit, stmt->range());
  sealBlock(exit);
  current = exit;
}

const CallExpr *SSABuilder::builtinCall(const Expr *expr, llvm::StringRef name,
                                        llvm::StringRef keyword) {
  const auto *call = dyn_cast<CallExpr>(expr);
  const auto *callee = call ? dyn_cast<NameExpr>(call->callee) : nullptr;
  if (!callee || callee->id != name || locals.contains(name) || scope.lookup(name))
    return nullptr;
  for (const Expr *arg : call->args)
    if (isa<StarredExpr>(arg))
      return nullptr;
  for (const Keyword &given : call->keywords)
    if (given.name != keyword || keyword.empty())
      return nullptr;
  return call;
}

Instr *SSABuilder::smallerCount(Instr *a, Instr *b, SourceRange range) {
  std::string result = "$count" + std::to_string(hiddenCounter++);
  Block *takeB = newBlock();
  Block *takeA = newBlock();
  Block *join = newBlock();
  branch(emitCompare(b, a, CompareOp::Lt, range), takeB, takeA, range);
  sealBlock(takeB);
  sealBlock(takeA);
  current = takeB;
  bindVariable(result, current, b);
  jump(join, range);
  current = takeA;
  bindVariable(result, current, a);
  jump(join, range);
  sealBlock(join);
  current = join;
  return readVariable(result, join, range);
}

std::optional<SSABuilder::IterationPlan> SSABuilder::planIteration(const Expr *iter) {
  SourceRange range = iter->range();
  if (const CallExpr *call = builtinCall(iter, "enumerate", "start");
      call && call->args.size() + call->keywords.size() >= 1 &&
      call->args.size() + call->keywords.size() <= 2 && !call->args.empty()) {
    std::optional<IterationPlan> inner = planIteration(call->args[0]);
    if (!inner)
      return std::nullopt;
    const Expr *startExpr = call->args.size() == 2   ? call->args[1]
                            : call->keywords.empty() ? nullptr
                                                     : call->keywords[0].value;
    // enumerate counts in intp, as Numba's does, from 0 unless told.
    Instr *start =
        startExpr ? buildExpr(startExpr) : emitConstant(ConstantValue::integer(0), range, true);
    if (!start)
      return std::nullopt;
    auto item = inner->item;
    return IterationPlan{inner->count, [this, start, item, range](Instr *counter) -> Instr * {
                           Instr *position = emit(Op::Binary, range, {counter, start});
                           position->binaryOp = BinaryOp::Add;
                           Instr *element = item(counter);
                           return element ? emit(Op::BuildTuple, range, {position, element})
                                          : nullptr;
                         }};
  }
  if (const CallExpr *call = builtinCall(iter, "zip", ""); call && !call->args.empty()) {
    std::vector<IterationPlan> parts;
    for (const Expr *arg : call->args) {
      std::optional<IterationPlan> part = planIteration(arg);
      if (!part)
        return std::nullopt;
      parts.push_back(std::move(*part));
    }
    // As long as the shortest, as Python's zip.
    Instr *count = parts.front().count;
    for (size_t i = 1; i < parts.size(); ++i)
      count = smallerCount(count, parts[i].count, range);
    return IterationPlan{count, [this, parts, range](Instr *counter) -> Instr * {
                           llvm::SmallVector<Instr *, 4> elements;
                           for (const IterationPlan &part : parts) {
                             Instr *element = part.item(counter);
                             if (!element)
                               return nullptr;
                             elements.push_back(element);
                           }
                           return emit(Op::BuildTuple, range, elements);
                         }};
  }
  Instr *iterable = buildExpr(iter);
  if (!iterable)
    return std::nullopt;
  Instr *count = emit(Op::IterCount, range, {iterable});
  return IterationPlan{count, [this, iterable, range](Instr *counter) {
                         return emit(Op::IterItem, range, {iterable, counter});
                       }};
}

} // namespace kiln::ssa
