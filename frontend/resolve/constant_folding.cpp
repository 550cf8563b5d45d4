//===- frontend/resolve/constant_folding.cpp - Operators on constants -----===//

#include "frontend/resolve/constant_folding.h"

#include "ir/types.h"

#include <cmath>
#include <complex>

namespace kiln {

using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

namespace {

FoldResult ok(ConstantValue value) {
  return FoldResult{std::move(value), FoldError::None};
}
FoldResult fail(FoldError error) {
  return FoldResult{std::nullopt, error};
}

bool isIntLike(const ConstantValue &v) {
  return v.kind() == ConstantValue::Kind::Int || v.kind() == ConstantValue::Kind::Bool;
}

/// Python's float floor division and modulo (Objects/floatobject.c).
void floatDivMod(double vx, double wx, double &floorDiv, double &mod) {
  mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0) {
    floorDiv = std::floor(div);
    if (div - floorDiv > 0.5)
      floorDiv += 1.0;
  } else {
    floorDiv = std::copysign(0.0, vx / wx);
  }
}

FoldResult foldIntegers(BinaryOp op, Int128 a, Int128 b, bool bothBool) {
  Int128 result = 0;
  switch (op) {
  case BinaryOp::Add:
    if (__builtin_add_overflow(a, b, &result))
      return fail(FoldError::Overflow);
    return ok(ConstantValue::integer(result));
  case BinaryOp::Sub:
    if (__builtin_sub_overflow(a, b, &result))
      return fail(FoldError::Overflow);
    return ok(ConstantValue::integer(result));
  case BinaryOp::Mul:
    if (__builtin_mul_overflow(a, b, &result))
      return fail(FoldError::Overflow);
    return ok(ConstantValue::integer(result));
  case BinaryOp::TrueDiv:
    if (b == 0)
      return fail(FoldError::DivisionByZero);
    return ok(ConstantValue::floating(static_cast<double>(a) / static_cast<double>(b)));
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod: {
    if (b == 0)
      return fail(FoldError::DivisionByZero);
    if (a == std::numeric_limits<Int128>::min() && b == -1)
      return fail(FoldError::Overflow);
    Int128 quotient = a / b;
    Int128 remainder = a % b;
    if (remainder != 0 && ((remainder < 0) != (b < 0))) {
      quotient -= 1;
      remainder += b;
    }
    return ok(ConstantValue::integer(op == BinaryOp::FloorDiv ? quotient : remainder));
  }
  case BinaryOp::Pow: {
    if (b < 0) {
      if (a == 0)
        return fail(FoldError::DivisionByZero);
      return ok(ConstantValue::floating(std::pow(static_cast<double>(a), static_cast<double>(b))));
    }
    Int128 base = a;
    Int128 power = 1;
    for (Int128 exponent = b; exponent > 0; exponent >>= 1) {
      if (exponent & 1)
        if (__builtin_mul_overflow(power, base, &power))
          return fail(FoldError::Overflow);
      if (exponent > 1 && __builtin_mul_overflow(base, base, &base))
        return fail(FoldError::Overflow);
    }
    return ok(ConstantValue::integer(power));
  }
  case BinaryOp::LShift:
    if (b < 0)
      return fail(FoldError::Unsupported);
    if (a == 0)
      return ok(ConstantValue::integer(0));
    if (b >= 126)
      return fail(FoldError::Overflow);
    result = a * (static_cast<Int128>(1) << static_cast<int>(b));
    if ((result >> static_cast<int>(b)) != a)
      return fail(FoldError::Overflow);
    return ok(ConstantValue::integer(result));
  case BinaryOp::RShift:
    if (b < 0)
      return fail(FoldError::Unsupported);
    return ok(ConstantValue::integer(b >= 127 ? (a < 0 ? -1 : 0) : (a >> static_cast<int>(b))));
  case BinaryOp::BitAnd:
    return ok(bothBool ? ConstantValue::boolean((a & b) != 0) : ConstantValue::integer(a & b));
  case BinaryOp::BitOr:
    return ok(bothBool ? ConstantValue::boolean((a | b) != 0) : ConstantValue::integer(a | b));
  case BinaryOp::BitXor:
    return ok(bothBool ? ConstantValue::boolean((a ^ b) != 0) : ConstantValue::integer(a ^ b));
  case BinaryOp::MatMul:
    return fail(FoldError::Unsupported);
  }
  return fail(FoldError::Unsupported);
}

FoldResult foldFloats(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add:
    return ok(ConstantValue::floating(a + b));
  case BinaryOp::Sub:
    return ok(ConstantValue::floating(a - b));
  case BinaryOp::Mul:
    return ok(ConstantValue::floating(a * b));
  case BinaryOp::TrueDiv:
    if (b == 0)
      return fail(FoldError::DivisionByZero);
    return ok(ConstantValue::floating(a / b));
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod: {
    if (b == 0)
      return fail(FoldError::DivisionByZero);
    double floorDiv;
    double mod;
    floatDivMod(a, b, floorDiv, mod);
    return ok(ConstantValue::floating(op == BinaryOp::FloorDiv ? floorDiv : mod));
  }
  case BinaryOp::Pow:
    if (a == 0 && b < 0)
      return fail(FoldError::DivisionByZero);
    if (a < 0 && std::floor(b) != b)
      return fail(FoldError::Unsupported); // Python's result would be complex
    return ok(ConstantValue::floating(std::pow(a, b)));
  default:
    return fail(FoldError::Unsupported);
  }
}

FoldResult foldComplex(BinaryOp op, std::complex<double> a, std::complex<double> b) {
  switch (op) {
  case BinaryOp::Add:
    a += b;
    break;
  case BinaryOp::Sub:
    a -= b;
    break;
  case BinaryOp::Mul:
    a *= b;
    break;
  case BinaryOp::TrueDiv:
    if (b == 0.0)
      return fail(FoldError::DivisionByZero);
    a /= b;
    break;
  case BinaryOp::Pow:
    if (a == 0.0 && (b.real() < 0 || b.imag() != 0))
      return fail(FoldError::DivisionByZero);
    a = b == 0.0 ? std::complex<double>(1.0) : std::pow(a, b);
    break;
  default:
    return fail(FoldError::Unsupported);
  }
  return ok(ConstantValue::complex(a.real(), a.imag()));
}

/// The dtype NumPy gives an operation on NumPy scalars, with Python scalars
/// taking the NumPy operand's kind where they fit (NEP 50).
const Type *numpyResultType(const ConstantValue &lhs, const ConstantValue &rhs,
                            TypeContext &types) {
  const Type *a = lhs.numpyType();
  const Type *b = rhs.numpyType();
  if (a && b)
    return types.unify(a, b);
  const Type *typed = a ? a : b;
  const ConstantValue &python = a ? rhs : lhs;
  auto kindRank = [](const Type *t) {
    return llvm::isa<BooleanType>(t)   ? 0
           : llvm::isa<IntegerType>(t) ? 1
           : llvm::isa<FloatType>(t)   ? 2
                                       : 3;
  };
  int pythonRank = python.kind() == ConstantValue::Kind::Bool    ? 0
                   : python.kind() == ConstantValue::Kind::Int   ? 1
                   : python.kind() == ConstantValue::Kind::Float ? 2
                                                                 : 3;
  if (pythonRank <= kindRank(typed))
    return typed;
  if (pythonRank == 1)
    return types.int64();
  if (pythonRank == 2)
    return types.float64();
  if (const auto *floatType = llvm::dyn_cast<FloatType>(typed))
    return types.complex(floatType->bitwidth() <= 32 ? 64 : 128);
  return types.complex(128);
}

ConstantValue asPlain(const ConstantValue &value) {
  switch (value.kind()) {
  case ConstantValue::Kind::Bool:
    return ConstantValue::boolean(value.boolValue());
  case ConstantValue::Kind::Int:
    return ConstantValue::integer(value.intValue128());
  case ConstantValue::Kind::Float:
    return ConstantValue::floating(value.floatValue());
  case ConstantValue::Kind::Complex:
    return ConstantValue::complex(value.realPart(), value.imagPart());
  default:
    return value;
  }
}

} // namespace

FoldResult foldBinary(BinaryOp op, const ConstantValue &lhs, const ConstantValue &rhs,
                      TypeContext &types) {
  using Kind = ConstantValue::Kind;
  if (lhs.numpyType() || rhs.numpyType()) {
    if (!lhs.isNumber() || !rhs.isNumber())
      return fail(FoldError::Unsupported);
    const Type *resultType = numpyResultType(lhs, rhs, types);
    FoldResult plain = foldBinary(op, asPlain(lhs), asPlain(rhs), types);
    if (!plain.value)
      return plain;
    // Integer NumPy scalars divide to float64; everything else keeps the
    // operands' dtype.
    if (op == BinaryOp::TrueDiv && llvm::isa<IntegerType>(resultType))
      resultType = types.float64();
    return ok(ConstantValue::numpyScalar(*plain.value, resultType));
  }
  if (lhs.kind() == Kind::String && rhs.kind() == Kind::String && op == BinaryOp::Add)
    return ok(ConstantValue::string(lhs.stringValue() + rhs.stringValue()));
  if (lhs.kind() == Kind::Tuple && rhs.kind() == Kind::Tuple && op == BinaryOp::Add) {
    std::vector<ConstantValue> joined = lhs.elements();
    joined.insert(joined.end(), rhs.elements().begin(), rhs.elements().end());
    return ok(ConstantValue::tuple(std::move(joined)));
  }
  if (!lhs.isNumber() || !rhs.isNumber())
    return fail(FoldError::Unsupported);
  if (isIntLike(lhs) && isIntLike(rhs))
    return foldIntegers(op, lhs.intValue128(), rhs.intValue128(),
                        lhs.kind() == Kind::Bool && rhs.kind() == Kind::Bool);
  if (lhs.kind() == Kind::Complex || rhs.kind() == Kind::Complex) {
    std::complex<double> a(lhs.asDouble(), lhs.kind() == Kind::Complex ? lhs.imagPart() : 0.0);
    std::complex<double> b(rhs.asDouble(), rhs.kind() == Kind::Complex ? rhs.imagPart() : 0.0);
    return foldComplex(op, a, b);
  }
  return foldFloats(op, lhs.asDouble(), rhs.asDouble());
}

FoldResult foldUnary(UnaryOp op, const ConstantValue &operand, TypeContext &types) {
  using Kind = ConstantValue::Kind;
  if (op == UnaryOp::Not)
    return ok(ConstantValue::boolean(!operand.truthy()));
  if (!operand.isNumber())
    return fail(FoldError::Unsupported);
  if (operand.numpyType()) {
    FoldResult plain = foldUnary(op, asPlain(operand), types);
    if (!plain.value)
      return plain;
    return ok(ConstantValue::numpyScalar(*plain.value, operand.numpyType()));
  }
  switch (operand.kind()) {
  case Kind::Bool:
  case Kind::Int: {
    Int128 value = operand.intValue128();
    if (op == UnaryOp::Negate)
      return ok(ConstantValue::integer(-value));
    if (op == UnaryOp::Invert)
      return ok(ConstantValue::integer(~value));
    return ok(ConstantValue::integer(value));
  }
  case Kind::Float:
    if (op == UnaryOp::Invert)
      return fail(FoldError::Unsupported);
    return ok(ConstantValue::floating(op == UnaryOp::Negate ? -operand.floatValue()
                                                            : operand.floatValue()));
  case Kind::Complex:
    if (op == UnaryOp::Invert)
      return fail(FoldError::Unsupported);
    if (op == UnaryOp::Negate)
      return ok(ConstantValue::complex(-operand.realPart(), -operand.imagPart()));
    return ok(operand);
  default:
    return fail(FoldError::Unsupported);
  }
}

FoldResult foldSubscript(const ConstantValue &tuple, const ConstantValue &index) {
  using Kind = ConstantValue::Kind;
  bool plainTuple = tuple.kind() == Kind::Tuple && tuple.tupleClass().empty();
  bool integerIndex = (index.kind() == Kind::Int || index.kind() == Kind::Bool) &&
                      !index.numpyType() && index.enumClass().empty();
  if (!plainTuple || !integerIndex)
    return fail(FoldError::Unsupported);
  const std::vector<ConstantValue> &items = tuple.elements();
  Int128 position = index.intValue128();
  if (position < 0)
    position += static_cast<Int128>(items.size());
  if (position < 0 || position >= static_cast<Int128>(items.size()))
    return fail(FoldError::Unsupported);
  return ok(items[static_cast<size_t>(position)]);
}

FoldResult foldCompare(CompareOp op, const ConstantValue &lhs, const ConstantValue &rhs) {
  // Identity is decidable for Python's singletons, True, False and None
  // (`if IS_TUPLE is True:`, the branch then pruned as Numba prunes it).
  if (op == CompareOp::Is || op == CompareOp::IsNot) {
    auto singleton = [](const ConstantValue &value) {
      return (value.kind() == ConstantValue::Kind::Bool ||
              value.kind() == ConstantValue::Kind::None) &&
             !value.numpyType() && value.enumClass().empty();
    };
    if (!singleton(lhs) || !singleton(rhs))
      return fail(FoldError::Unsupported);
    bool same = lhs.kind() == rhs.kind() && lhs.boolValue() == rhs.boolValue();
    return ok(ConstantValue::boolean(op == CompareOp::Is ? same : !same));
  }
  if (op == CompareOp::Eq || op == CompareOp::NotEq) {
    bool equal;
    if (lhs.isNumber() && rhs.isNumber())
      equal = lhs.asDouble() == rhs.asDouble() &&
              (lhs.kind() == ConstantValue::Kind::Complex ? lhs.imagPart() : 0.0) ==
                  (rhs.kind() == ConstantValue::Kind::Complex ? rhs.imagPart() : 0.0) &&
              (!isIntLike(lhs) || !isIntLike(rhs) || lhs.intValue128() == rhs.intValue128());
    else
      equal = asPlain(lhs) == asPlain(rhs);
    return ok(ConstantValue::boolean(op == CompareOp::Eq ? equal : !equal));
  }
  bool ordered =
      op == CompareOp::Lt || op == CompareOp::LtE || op == CompareOp::Gt || op == CompareOp::GtE;
  if (!ordered || !lhs.isNumber() || !rhs.isNumber() ||
      lhs.kind() == ConstantValue::Kind::Complex || rhs.kind() == ConstantValue::Kind::Complex)
    return fail(FoldError::Unsupported);
  bool result;
  if (isIntLike(lhs) && isIntLike(rhs)) {
    Int128 a = lhs.intValue128();
    Int128 b = rhs.intValue128();
    result = op == CompareOp::Lt    ? a < b
             : op == CompareOp::LtE ? a <= b
             : op == CompareOp::Gt  ? a > b
                                    : a >= b;
  } else {
    double a = lhs.asDouble();
    double b = rhs.asDouble();
    switch (op) {
    case CompareOp::Lt:
      result = a < b;
      break;
    case CompareOp::LtE:
      result = a <= b;
      break;
    case CompareOp::Gt:
      result = a > b;
      break;
    case CompareOp::GtE:
      result = a >= b;
      break;
    default:
      return fail(FoldError::Unsupported);
    }
  }
  return ok(ConstantValue::boolean(result));
}

} // namespace kiln
