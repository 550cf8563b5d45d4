//===- frontend/typing/operators.cpp - Typing of Python operators ---------===//
//
// Numba's templates for operators (numba/cuda/typing/builtins.py), as case
// lists resolved by overload rating. float16 and bfloat16 join +, -, *, /,
// unary + and - and the comparisons through numba-cuda's fp16 and bf16
// bindings, which add (float16, float16) and (bfloat16, bfloat16) cases to
// the same operators.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"

namespace kiln::typing {

using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

namespace {

std::vector<OverloadCase> binaryCases(TypeContext &types, BinaryOp op, bool &allowUnsafe) {
  CaseList cases(types);
  const Type *f16 = types.floating(16);
  const Type *bf16 = types.bfloat16();
  allowUnsafe = true;
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
    cases.integerBinary()
        .sameType({f16, bf16})
        .sameType(cases.realDomain())
        .sameType(cases.complexDomain());
    break;
  case BinaryOp::TrueDiv:
    for (const Type *a : {types.int64(), types.uint64()})
      for (const Type *b : {types.int64(), types.uint64()})
        cases.add(types.float64(), {a, b});
    cases.sameType({f16, bf16}).sameType(cases.realDomain()).sameType(cases.complexDomain());
    break;
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    cases.integerBinary().sameType(cases.realDomain());
    break;
  case BinaryOp::Pow:
    cases.integerBinary();
    for (const Type *real : cases.realDomain())
      for (const Type *exponent : {types.int32(), types.int64(), types.uint64()})
        cases.add(real, {real, exponent});
    cases.sameType(cases.realDomain()).sameType(cases.complexDomain());
    break;
  case BinaryOp::LShift:
  case BinaryOp::RShift:
    // Only the left operand's signedness matters; the result is 64-bit.
    for (const Type *lhs : cases.signedDomain())
      for (const Type *rhs : {types.uint64(), types.int64()})
        cases.add(types.int64(), {lhs, rhs});
    for (const Type *lhs : cases.unsignedDomain())
      for (const Type *rhs : {types.uint64(), types.int64()})
        cases.add(types.uint64(), {lhs, rhs});
    allowUnsafe = false;
    break;
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
    cases.add(types.boolean(), {types.boolean(), types.boolean()});
    cases.integerBinary();
    allowUnsafe = false;
    break;
  case BinaryOp::MatMul:
    break;
  }
  return std::vector<OverloadCase>(cases.list().begin(), cases.list().end());
}

/// `a == b`, `a != b`, `a is b`, `a is not b` between enum members (Numba's
/// EnumCompare and generic `is`): members of one class compare their
/// values; `is` is False across classes. Other comparisons of an Enum
/// member, and `==` across classes, are no overload; IntEnum members not
/// compared by identity are integers (see integerOfIntEnum).
std::optional<Typing> compareEnumMembers(TypeContext &types, CompareOp op, const Type *lhs,
                                         const Type *rhs) {
  const auto *left = llvm::dyn_cast<EnumMemberType>(lhs);
  const auto *right = llvm::dyn_cast<EnumMemberType>(rhs);
  if (!left && !right)
    return std::nullopt;
  bool identity = op == CompareOp::Is || op == CompareOp::IsNot;
  if (identity && lhs != rhs) {
    Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
    resolution.constant = ConstantValue::boolean(op == CompareOp::IsNot);
    return Typing(std::move(resolution));
  }
  if (!identity && ((left && left->isIntEnum()) || (right && right->isIntEnum())))
    return compareOperator(types, op, integerOfIntEnum(lhs), integerOfIntEnum(rhs));
  if (lhs != rhs || !(identity || op == CompareOp::Eq || op == CompareOp::NotEq))
    return Typing::error(DiagID::err_no_binary_overload,
                         {ast::spelling(op).str(), lhs->str(), rhs->str()});
  const Type *value = left->valueType();
  CompareOp byValue = op == CompareOp::Is      ? CompareOp::Eq
                      : op == CompareOp::IsNot ? CompareOp::NotEq
                                               : op;
  Typing typed = compareOperator(types, byValue, value, value);
  if (typed && typed->operandTypes.empty())
    typed->operandTypes = {value, value};
  return typed;
}

} // namespace

const Type *integerOfIntEnum(const Type *type) {
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(type); member && member->isIntEnum())
    return member->valueType();
  return type;
}

Typing binaryOperator(TypeContext &types, BinaryOp op, const Type *lhs, const Type *rhs) {
  if (integerOfIntEnum(lhs) != lhs || integerOfIntEnum(rhs) != rhs)
    return binaryOperator(types, op, integerOfIntEnum(lhs), integerOfIntEnum(rhs));
  if (involvesDateTime(lhs, rhs))
    return dateTimeBinary(types, op, lhs, rhs);
  if (lhs->isScalar() && rhs->isScalar()) {
    bool allowUnsafe;
    std::vector<OverloadCase> cases = binaryCases(types, op, allowUnsafe);
    if (const OverloadCase *chosen = resolveOverload(types, cases, {lhs, rhs}, allowUnsafe)) {
      Resolution resolution = Resolution::make(Resolution::Kind::Operator, chosen->result);
      resolution.operandTypes = chosen->args;
      return resolution;
    }
  }
  // Tuples concatenate, as in Python.
  if (op == BinaryOp::Add) {
    const auto *a = llvm::dyn_cast<TupleType>(lhs);
    const auto *b = llvm::dyn_cast<TupleType>(rhs);
    if (a && b) {
      std::vector<const Type *> elements(a->elementTypes().begin(), a->elementTypes().end());
      elements.insert(elements.end(), b->elementTypes().begin(), b->elementTypes().end());
      Resolution resolution = Resolution::make(Resolution::Kind::Operator, types.tuple(elements));
      resolution.detail = "tuple_concat";
      return resolution;
    }
  }
  return Typing::error(DiagID::err_no_binary_overload,
                       {ast::spelling(op).str(), lhs->str(), rhs->str()});
}

Typing unaryOperator(TypeContext &types, UnaryOp op, const Type *operand) {
  if (integerOfIntEnum(operand) != operand)
    return unaryOperator(types, op, integerOfIntEnum(operand));
  if (involvesDateTime(operand))
    return dateTimeUnary(types, op, operand);
  CaseList cases(types);
  bool allowUnsafe = true;
  switch (op) {
  case UnaryOp::Negate:
  case UnaryOp::Plus:
    for (const Type *t : cases.unsignedDomain())
      cases.add(types.uint64(), {t});
    for (const Type *t : cases.signedDomain())
      cases.add(types.int64(), {t});
    cases.add(types.floating(16), {types.floating(16)});
    cases.add(types.bfloat16(), {types.bfloat16()});
    for (const Type *t : cases.realDomain())
      cases.add(t, {t});
    for (const Type *t : cases.complexDomain())
      cases.add(t, {t});
    cases.add(types.int64(), {types.boolean()});
    break;
  case UnaryOp::Invert:
    cases.add(types.boolean(), {types.boolean()});
    for (const Type *t : cases.unsignedDomain())
      cases.add(types.uint64(), {t});
    for (const Type *t : cases.signedDomain())
      cases.add(types.int64(), {t});
    allowUnsafe = false;
    break;
  case UnaryOp::Not:
    cases.add(types.boolean(), {types.boolean()});
    break;
  }
  if (operand->isScalar())
    if (const OverloadCase *chosen = resolveOverload(types, cases, {operand}, allowUnsafe)) {
      Resolution resolution = Resolution::make(Resolution::Kind::Operator, chosen->result);
      resolution.operandTypes = chosen->args;
      return resolution;
    }
  return Typing::error(DiagID::err_no_unary_overload, {ast::spelling(op).str(), operand->str()});
}

Typing compareOperator(TypeContext &types, CompareOp op, const Type *lhs, const Type *rhs) {
  if (std::optional<Typing> members = compareEnumMembers(types, op, lhs, rhs))
    return std::move(*members);
  if (op != CompareOp::Is && op != CompareOp::IsNot && involvesDateTime(lhs, rhs))
    return dateTimeCompare(types, op, lhs, rhs);
  if (op == CompareOp::Is || op == CompareOp::IsNot) {
    // Identity with None is known at compile time, except of an optional
    // value, which holds whether it is None.
    bool lhsNone = lhs == types.none();
    bool rhsNone = rhs == types.none();
    if ((lhsNone && llvm::isa<OptionalType>(rhs)) || (rhsNone && llvm::isa<OptionalType>(lhs))) {
      Resolution resolution = Resolution::make(Resolution::Kind::Operator, types.boolean());
      resolution.detail = "optional is None";
      return resolution;
    }
    if (lhsNone || rhsNone) {
      Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
      bool same = lhsNone && rhsNone;
      resolution.constant = ConstantValue::boolean(op == CompareOp::Is ? same : !same);
      return resolution;
    }
    // Numba's generic `is` on numbers compares values of one type and is
    // False across types; booleans, literal or not, compare as Python's
    // True and False singletons do.
    auto isBoolean = [](const Type *t) {
      return llvm::isa<BooleanType>(t) || llvm::isa<BooleanLiteralType>(t);
    };
    if (lhs->isScalar() && rhs->isScalar()) {
      bool booleans = isBoolean(lhs) && isBoolean(rhs);
      if (booleans || lhs == rhs) {
        const Type *common = booleans ? types.boolean() : types.unliteral(lhs);
        Resolution resolution = Resolution::make(Resolution::Kind::Operator, types.boolean());
        resolution.operandTypes = {common, common};
        return resolution;
      }
      Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
      resolution.constant = ConstantValue::boolean(op == CompareOp::IsNot);
      return resolution;
    }
    return Typing::error(DiagID::err_no_binary_overload,
                         {ast::spelling(op).str(), lhs->str(), rhs->str()});
  }
  const auto *lhsTuple = llvm::dyn_cast<TupleType>(lhs);
  const auto *rhsTuple = llvm::dyn_cast<TupleType>(rhs);
  if (lhsTuple && rhsTuple) {
    // Element-wise, as Numba's TupleCompare; tuples of different lengths
    // compare as Python does (only == and != are decidable up front).
    size_t n = std::min(lhsTuple->size(), rhsTuple->size());
    for (size_t i = 0; i < n; ++i) {
      Typing element =
          compareOperator(types, op, lhsTuple->elementTypes()[i], rhsTuple->elementTypes()[i]);
      if (!element)
        return element;
    }
    Resolution resolution = Resolution::make(Resolution::Kind::Operator, types.boolean());
    resolution.detail = "tuple_compare";
    return resolution;
  }

  CaseList cases(types);
  cases.add(types.boolean(), {types.boolean(), types.boolean()});
  cases.sameTypeTo(cases.signedDomain(), types.boolean());
  cases.sameTypeTo(cases.unsignedDomain(), types.boolean());
  cases.sameTypeTo({types.floating(16), types.bfloat16()}, types.boolean());
  cases.sameTypeTo(cases.realDomain(), types.boolean());
  bool equality = op == CompareOp::Eq || op == CompareOp::NotEq;
  if (equality)
    cases.sameTypeTo(cases.complexDomain(), types.boolean());
  if (lhs->isScalar() && rhs->isScalar())
    if (const OverloadCase *chosen = resolveOverload(types, cases, {lhs, rhs})) {
      Resolution resolution = Resolution::make(Resolution::Kind::Operator, types.boolean());
      resolution.operandTypes = chosen->args;
      return resolution;
    }
  if (equality && (lhs == types.none() || rhs == types.none() || lhs->isCompileTimeOnly() ||
                   rhs->isCompileTimeOnly())) {
    // Comparing values of unrelated kinds is decided by their types.
    Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
    bool same = lhs == rhs;
    resolution.constant = ConstantValue::boolean(op == CompareOp::Eq ? same : !same);
    return resolution;
  }
  return Typing::error(DiagID::err_no_binary_overload,
                       {ast::spelling(op).str(), lhs->str(), rhs->str()});
}

Typing truth(TypeContext &types, const Type *operand) {
  operand = integerOfIntEnum(operand);
  if (operand->isScalar() || llvm::isa<Fp8Type>(operand))
    return Resolution::make(Resolution::Kind::Truth, types.boolean());
  if (operand == types.none()) {
    Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
    resolution.constant = ConstantValue::boolean(false);
    return resolution;
  }
  if (const auto *tuple = llvm::dyn_cast<TupleType>(operand)) {
    Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
    resolution.constant = ConstantValue::boolean(tuple->size() != 0);
    return resolution;
  }
  return Typing::error(DiagID::err_not_a_condition, {operand->str()});
}

} // namespace kiln::typing
