//===- frontend/ssa/ssa_expressions.cpp - Expressions ---------------------===//
//
// Expressions as generic operations. Like CPython's compiler (whose
// bytecode Numba reads), the builder folds operators applied to literals:
// `2 + 3` is the constant 5, typed Literal[int](5), while `TILE + 1` stays
// an addition. `and`, `or`, conditional expressions and chained
// comparisons branch, and their values merge in a hidden variable's phi.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/constant_folding.h"
#include "frontend/ssa/ssa_builder.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln::ssa {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

Instr *SSABuilder::buildExpr(const Expr *expr) {
  switch (expr->kind()) {
  case Expr::Kind::Name:
    return buildName(cast<NameExpr>(expr));
  case Expr::Kind::IntLiteral: {
    const auto *literal = cast<IntLiteralExpr>(expr);
    if (literal->tooLarge)
      return unsupported(DiagID::err_integer_literal_too_large, expr->range(),
                         {diags.sourceManager().textOf(expr->range())});
    return emitConstant(ConstantValue::integer(literal->value), expr->range(), true);
  }
  case Expr::Kind::FloatLiteral:
    return emitConstant(ConstantValue::floating(cast<FloatLiteralExpr>(expr)->value), expr->range(),
                        true);
  case Expr::Kind::ImaginaryLiteral:
    return emitConstant(ConstantValue::complex(0.0, cast<ImaginaryLiteralExpr>(expr)->imag),
                        expr->range(), true);
  case Expr::Kind::BoolLiteral:
    return emitConstant(ConstantValue::boolean(cast<BoolLiteralExpr>(expr)->value), expr->range(),
                        true);
  case Expr::Kind::NoneLiteral:
    return emitConstant(ConstantValue::none(), expr->range(), true);
  case Expr::Kind::StringLiteral: {
    const auto *literal = cast<StringLiteralExpr>(expr);
    if (literal->isFormatted)
      return unsupported(DiagID::err_unsupported_expression, expr->range(), {"f-strings"});
    if (literal->isBytes)
      return emitConstant(ConstantValue::bytes(literal->value.str()), expr->range(), true);
    return emitConstant(ConstantValue::string(literal->value.str()), expr->range(), true);
  }
  case Expr::Kind::EllipsisLiteral:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {"Ellipsis literals ('...')"});
  case Expr::Kind::Tuple:
    return buildTuple(cast<SequenceExpr>(expr));
  case Expr::Kind::List:
    return unsupported(DiagID::err_unsupported_list, expr->range());
  case Expr::Kind::Set:
  case Expr::Kind::Dict:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {expr->kind() == Expr::Kind::Set ? "sets" : "dictionaries"});
  case Expr::Kind::Attribute: {
    const auto *attr = cast<AttributeExpr>(expr);
    if (std::optional<EnumMemberRef> member = enumMemberRef(expr))
      return buildEnumMember(*member, expr->range(), /*valueOnly=*/false);
    if (attr->attr == "value")
      if (std::optional<EnumMemberRef> member = enumMemberRef(attr->value))
        return buildEnumMember(*member, expr->range(), /*valueOnly=*/true);
    // `config.THRESHOLD`, `core.clamp`: an attribute of a source module is
    // what that module binds, as a global of this one would be.
    if (std::string base = modulePath(attr->value); !base.empty())
      if (const ModuleValue *module = scope.lookupPath(base);
          module && module->kind() == ModuleValue::Kind::Module) {
        const ModuleValue *member = module->member(attr->attr);
        if (!member)
          return unsupported(DiagID::err_unknown_module_member, attr->attrRange,
                             {module->moduleName(), attr->attr});
        return buildGlobal(member, base + "." + attr->attr.str(), expr->range());
      }
    Instr *object = buildExpr(attr->value);
    if (!object)
      return nullptr;
    Instr *get = emit(Op::GetAttr, expr->range(), {object});
    get->name = attr->attr.str();
    return get;
  }
  case Expr::Kind::Subscript: {
    const auto *sub = cast<SubscriptExpr>(expr);
    // Color["RED"]: a member by its name.
    if (std::optional<EnumMemberRef> member = enumMemberRef(expr))
      return buildEnumMember(*member, expr->range(), /*valueOnly=*/false);
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    if (!index)
      return nullptr;
    // CPython folds an item of a literal tuple: `(-5, 0.5)[0]` is -5.
    if (isLiteral(object, sub->value) && isLiteral(index, sub->index)) {
      FoldResult folded = foldSubscript(*object->constant, *index->constant);
      if (folded.value)
        return emitConstant(std::move(*folded.value), expr->range(), true);
    }
    return emit(Op::GetItem, expr->range(), {object, index});
  }
  case Expr::Kind::Slice:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {"slices outside subscripts"});
  case Expr::Kind::Call:
    return buildCall(cast<CallExpr>(expr));
  case Expr::Kind::Unary:
    return buildUnary(cast<UnaryExpr>(expr));
  case Expr::Kind::Binary:
    return buildBinary(cast<BinaryExpr>(expr));
  case Expr::Kind::BoolOp:
    return buildBoolOp(cast<BoolOpExpr>(expr));
  case Expr::Kind::Compare:
    return buildCompare(cast<CompareExpr>(expr));
  case Expr::Kind::IfExp:
    return buildIfExp(cast<IfExpExpr>(expr));
  case Expr::Kind::NamedExpr: {
    const auto *named = cast<NamedExpr>(expr);
    Instr *value = buildExpr(named->value);
    if (!value)
      return nullptr;
    assignVariable(named->target->id, value, named->target->range());
    return value;
  }
  case Expr::Kind::Starred:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"starred expressions"});
  case Expr::Kind::Lambda: {
    const FunctionDecl *function = functionsByDefinition.lookup(cast<LambdaExpr>(expr)->function);
    if (!function) {
      failed = true; // its declaration was reported
      return nullptr;
    }
    return buildClosure(*function, expr->range());
  }
  case Expr::Kind::Comprehension: {
    static const char *forms[] = {"list comprehensions", "set comprehensions",
                                  "dict comprehensions", "generator expressions"};
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {forms[static_cast<unsigned>(cast<ComprehensionExpr>(expr)->form)]});
  }
  case Expr::Kind::Yield:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"generators ('yield')"});
  case Expr::Kind::Await:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"'await' expressions"});
  }
  return nullptr;
}

Instr *SSABuilder::buildTuple(const SequenceExpr *tuple) {
  llvm::SmallVector<Instr *, 4> elements;
  bool allLiterals = true;
  for (const Expr *element : tuple->elements) {
    if (isa<StarredExpr>(element))
      return unsupported(DiagID::err_unsupported_expression, element->range(),
                         {"starred expressions"});
    Instr *value = buildExpr(element);
    if (!value)
      return nullptr;
    // Names count too: a tuple of constants is one constant value (its
    // elements may have no run-time value, such as None).
    allLiterals &= value->op == Op::Constant && value->fromLiteral;
    elements.push_back(value);
  }
  if (allLiterals) {
    // CPython stores a tuple of literals as one constant.
    std::vector<ConstantValue> values;
    for (Instr *element : elements)
      values.push_back(*element->constant);
    return emitConstant(ConstantValue::tuple(std::move(values)), tuple->range(), true);
  }
  return emit(Op::BuildTuple, tuple->range(), elements);
}

Instr *SSABuilder::buildSubscriptIndex(const Expr *index) {
  auto buildItem = [&](const Expr *item) -> Instr * {
    const auto *slice = dyn_cast<SliceExpr>(item);
    if (!slice)
      return buildExpr(item);
    llvm::SmallVector<Instr *, 3> parts;
    for (const Expr *part : {slice->lower, slice->upper, slice->step}) {
      Instr *value =
          part ? buildExpr(part) : emitConstant(ConstantValue::none(), item->range(), true);
      if (!value)
        return nullptr;
      parts.push_back(value);
    }
    return emit(Op::BuildSlice, item->range(), parts);
  };
  if (const auto *tuple = dyn_cast<SequenceExpr>(index);
      tuple && tuple->kind() == Expr::Kind::Tuple &&
      llvm::any_of(tuple->elements, [](const Expr *e) { return isa<SliceExpr>(e); })) {
    llvm::SmallVector<Instr *, 4> items;
    for (const Expr *element : tuple->elements) {
      Instr *value = buildItem(element);
      if (!value)
        return nullptr;
      items.push_back(value);
    }
    return emit(Op::BuildTuple, index->range(), items);
  }
  return buildItem(index);
}

Instr *SSABuilder::buildBinary(const BinaryExpr *binary) {
  if (binary->op == BinaryOp::MatMul)
    return unsupported(DiagID::err_unsupported_operator, binary->opRange, {"@"});
  Instr *lhs = buildExpr(binary->lhs);
  Instr *rhs = lhs ? buildExpr(binary->rhs) : nullptr;
  if (!rhs)
    return nullptr;
  // Only literals fold, as in CPython: `x + 1` stays an addition even where
  // x holds a literal.
  if (isLiteral(lhs, binary->lhs) && isLiteral(rhs, binary->rhs)) {
    FoldResult folded = foldBinary(binary->op, *lhs->constant, *rhs->constant, types);
    if (folded.value)
      return emitConstant(std::move(*folded.value), binary->range(), true);
  }
  Instr *instr = emit(Op::Binary, binary->range(), {lhs, rhs});
  instr->binaryOp = binary->op;
  return instr;
}

Instr *SSABuilder::buildUnary(const UnaryExpr *unary) {
  Instr *operand = buildExpr(unary->operand);
  if (!operand)
    return nullptr;
  if (isLiteral(operand, unary->operand)) {
    FoldResult folded = foldUnary(unary->op, *operand->constant, types);
    if (folded.value)
      return emitConstant(std::move(*folded.value), unary->range(), true);
  }
  if (unary->op == UnaryOp::Not) {
    // `not x` is a truth test, then a negation of the bool.
    Instr *instr = emit(Op::Unary, unary->range(), {truth(operand, unary->operand->range())});
    instr->unaryOp = UnaryOp::Not;
    return instr;
  }
  Instr *instr = emit(Op::Unary, unary->range(), {operand});
  instr->unaryOp = unary->op;
  return instr;
}

Instr *SSABuilder::buildCompare(const CompareExpr *compare) {
  for (size_t i = 0; i < compare->ops.size(); ++i)
    if (compare->ops[i] == CompareOp::In || compare->ops[i] == CompareOp::NotIn)
      return unsupported(DiagID::err_unsupported_operator, compare->opRanges[i],
                         {spelling(compare->ops[i])});
  Instr *left = buildExpr(compare->left);
  if (!left)
    return nullptr;
  if (compare->ops.size() == 1) {
    Instr *right = buildExpr(compare->comparators[0]);
    if (!right)
      return nullptr;
    return emitCompare(left, right, compare->ops[0], compare->range());
  }
  // a < b < c: b is evaluated once and c only if a < b.
  std::string result = "$compare" + std::to_string(hiddenCounter++);
  Block *join = newBlock();
  for (size_t i = 0; i < compare->ops.size(); ++i) {
    Instr *right = buildExpr(compare->comparators[i]);
    if (!right)
      return nullptr;
    Instr *test = emitCompare(left, right, compare->ops[i], compare->range());
    bindVariable(result, current, test);
    if (i + 1 == compare->ops.size()) {
      jump(join, compare->range());
      break;
    }
    Block *next = newBlock();
    branch(test, next, join, compare->range());
    sealBlock(next);
    current = next;
    left = right;
  }
  sealBlock(join);
  current = join;
  return readVariable(result, join, compare->range());
}

Instr *SSABuilder::buildBoolOp(const BoolOpExpr *boolOp) {
  // `a and b` is a if a is false, else b; `a or b` the reverse. The result
  // merges the operands' values, so its type unifies theirs.
  // Hidden variables are named after their expression, for diagnostics.
  std::string result =
      (boolOp->op == BoolOpKind::And ? "$and" : "$or") + std::to_string(hiddenCounter++);
  Block *join = newBlock();
  bool isAnd = boolOp->op == BoolOpKind::And;
  bool shortCircuits = false;
  for (size_t i = 0; i < boolOp->values.size(); ++i) {
    const Expr *operand = boolOp->values[i];
    Instr *value = buildExpr(operand);
    if (!value)
      return nullptr;
    bool last = i + 1 == boolOp->values.size();
    // CPython's peephole optimizer decides a literal operand: `False and
    // y` is False and `y` is never compiled; `True and y` is `y`. (Other
    // constants are decided by type inference, below.)
    bool constant = isLiteral(value, operand);
    if (constant && !last && value->constant->truthy() == isAnd)
      continue;
    // It also threads the jumps of an operand of the same kind that always
    // short-circuits, `(x and False)` in `a and (x and False) and y`, to
    // the end: `y` is never compiled either.
    const auto *nested = dyn_cast<BoolOpExpr>(operand);
    shortCircuits = constant ? value->constant->truthy() != isAnd
                             : nested && nested->op == boolOp->op && lastBoolOpShortCircuits;
    bindVariable(result, current, value);
    if (last || constant || shortCircuits) {
      jump(join, boolOp->range());
      break;
    }
    Block *next = newBlock();
    Instr *test = truth(value, boolOp->values[i]->range());
    if (isAnd)
      branch(test, next, join, boolOp->range());
    else
      branch(test, join, next, boolOp->range());
    sealBlock(next);
    current = next;
  }
  sealBlock(join);
  current = join;
  lastBoolOpShortCircuits = shortCircuits;
  return readVariable(result, join, boolOp->range());
}

Instr *SSABuilder::buildIfExp(const IfExpExpr *ifExp) {
  std::string result = "$ifexp" + std::to_string(hiddenCounter++);
  Block *thenBlock = newBlock();
  Block *elseBlock = newBlock();
  Block *join = newBlock();
  buildCondition(ifExp->test, thenBlock, elseBlock);
  sealBlock(thenBlock);
  sealBlock(elseBlock);
  current = thenBlock;
  Instr *body = buildExpr(ifExp->body);
  if (!body)
    return nullptr;
  bindVariable(result, current, body);
  jump(join, ifExp->range());
  current = elseBlock;
  Instr *orelse = buildExpr(ifExp->orelse);
  if (!orelse)
    return nullptr;
  bindVariable(result, current, orelse);
  jump(join, ifExp->range());
  sealBlock(join);
  current = join;
  return readVariable(result, join, ifExp->range());
}

Instr *SSABuilder::buildCall(const CallExpr *call) {
  Instr *callee = buildExpr(call->callee);
  if (!callee)
    return nullptr;
  llvm::SmallVector<Instr *, 4> operands{callee};
  llvm::SmallVector<unsigned, 1> starred;
  for (const Expr *arg : call->args) {
    // `f(*t)`: t's items are arguments, as many as its type says.
    const auto *star = dyn_cast<StarredExpr>(arg);
    if (star)
      starred.push_back(operands.size());
    Instr *value = buildExpr(star ? star->value : arg);
    if (!value)
      return nullptr;
    operands.push_back(value);
  }
  std::vector<std::string> keywordNames;
  for (const Keyword &keyword : call->keywords) {
    if (keyword.name.empty())
      return unsupported(DiagID::err_unsupported_expression_singular, keyword.nameRange,
                         {"keyword argument unpacking with '**'"});
    Instr *value = buildExpr(keyword.value);
    if (!value)
      return nullptr;
    operands.push_back(value);
    keywordNames.push_back(keyword.name.str());
  }
  Instr *instr = emit(Op::Call, call->range(), operands);
  instr->keywordNames = std::move(keywordNames);
  instr->starred = std::move(starred);
  instr->operandRanges.push_back(call->callee->range());
  for (const Expr *arg : call->args)
    instr->operandRanges.push_back(arg->range());
  for (const Keyword &keyword : call->keywords)
    instr->operandRanges.push_back(keyword.value->range());
  return instr;
}

} // namespace kiln::ssa
