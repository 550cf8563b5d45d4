//===- frontend/constant_value.cpp - Python constant semantics ------------===//

#include "frontend/constant_value.h"

#include "frontend/types.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <complex>

namespace kiln {

using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

ConstantValue ConstantValue::boolean(bool value) {
  ConstantValue c(Kind::Bool);
  c.intValue = value ? 1 : 0;
  return c;
}

ConstantValue ConstantValue::integer(Int128 value) {
  ConstantValue c(Kind::Int);
  c.intValue = value;
  return c;
}

ConstantValue ConstantValue::floating(double value) {
  ConstantValue c(Kind::Float);
  c.real = value;
  return c;
}

ConstantValue ConstantValue::complex(double realPart, double imagPart) {
  ConstantValue c(Kind::Complex);
  c.real = realPart;
  c.imag = imagPart;
  return c;
}

ConstantValue ConstantValue::string(std::string value) {
  ConstantValue c(Kind::String);
  c.text = std::move(value);
  return c;
}

ConstantValue ConstantValue::tuple(std::vector<ConstantValue> elements) {
  ConstantValue c(Kind::Tuple);
  c.items = std::move(elements);
  return c;
}

namespace {

/// Wraps an integer to `bits` with the given signedness, as NumPy's
/// conversions do.
Int128 wrapInteger(Int128 value, const IntegerType *type) {
  unsigned bits = type->bitwidth();
  unsigned __int128 mask =
      bits == 64 ? ~static_cast<uint64_t>(0) : ((static_cast<uint64_t>(1) << bits) - 1);
  unsigned __int128 raw = static_cast<unsigned __int128>(value) & mask;
  if (type->signedness() && (raw >> (bits - 1)) & 1)
    return static_cast<Int128>(raw) - (static_cast<Int128>(1) << bits);
  return static_cast<Int128>(raw);
}

/// The value of a float converted to an integer type, truncating toward
/// zero; out-of-range values wrap like C casts through int64 do.
Int128 truncateToInteger(double value) {
  if (std::isnan(value) || std::isinf(value))
    return 0;
  double truncated = std::trunc(value);
  if (std::fabs(truncated) >= 1.7e38)
    return 0;
  return static_cast<Int128>(truncated);
}

} // namespace

ConstantValue ConstantValue::numpyScalar(const ConstantValue &value, const Type *scalarType) {
  ConstantValue c(Kind::None);
  c.dtype = scalarType;
  if (llvm::isa<BooleanType>(scalarType)) {
    c.valueKind = Kind::Bool;
    c.intValue = value.truthy() ? 1 : 0;
  } else if (const auto *intType = llvm::dyn_cast<IntegerType>(scalarType)) {
    c.valueKind = Kind::Int;
    Int128 raw = value.kind() == Kind::Float || value.kind() == Kind::Complex
                     ? truncateToInteger(value.real)
                     : value.intValue;
    c.intValue = wrapInteger(raw, intType);
  } else if (const auto *floatType = llvm::dyn_cast<FloatType>(scalarType)) {
    c.valueKind = Kind::Float;
    double d = value.kind() == Kind::Complex ? value.real : value.asDouble();
    if (floatType->bitwidth() == 32)
      d = static_cast<double>(static_cast<float>(d));
    else if (floatType->bitwidth() == 16)
      d = static_cast<double>(static_cast<_Float16>(d));
    c.real = d;
  } else {
    const auto *complexType = llvm::cast<ComplexType>(scalarType);
    c.valueKind = Kind::Complex;
    double re = value.kind() == Kind::Complex ? value.real : value.asDouble();
    double im = value.kind() == Kind::Complex ? value.imag : 0.0;
    if (complexType->bitwidth() == 64) {
      re = static_cast<double>(static_cast<float>(re));
      im = static_cast<double>(static_cast<float>(im));
    }
    c.real = re;
    c.imag = im;
  }
  return c;
}

double ConstantValue::asDouble() const {
  switch (valueKind) {
  case Kind::Bool:
  case Kind::Int:
    return static_cast<double>(intValue);
  case Kind::Float:
  case Kind::Complex:
    return real;
  default:
    return 0;
  }
}

bool ConstantValue::truthy() const {
  switch (valueKind) {
  case Kind::None:
    return false;
  case Kind::Bool:
  case Kind::Int:
    return intValue != 0;
  case Kind::Float:
    return real != 0;
  case Kind::Complex:
    return real != 0 || imag != 0;
  case Kind::String:
    return !text.empty();
  case Kind::Tuple:
    return !items.empty();
  }
  return false;
}

const Type *ConstantValue::literalType(TypeContext &types) const {
  if (dtype)
    return nullptr; // NumPy scalars are never literals
  switch (valueKind) {
  case Kind::Bool:
    return types.booleanLiteral(intValue != 0);
  case Kind::Int:
    if (intValue >= INT64_MIN && intValue <= INT64_MAX)
      return types.integerLiteral(static_cast<int64_t>(intValue));
    if (intValue > 0 && intValue <= static_cast<Int128>(UINT64_MAX))
      return types.unsignedIntegerLiteral(static_cast<uint64_t>(intValue));
    return nullptr;
  case Kind::String:
    return types.stringLiteral(text);
  default:
    return nullptr;
  }
}

const Type *ConstantValue::plainType(TypeContext &types) const {
  if (dtype)
    return dtype;
  switch (valueKind) {
  case Kind::None:
    return types.none();
  case Kind::Bool:
    return types.boolean();
  case Kind::Int:
    // Numba's _typeof_int: int64, or uint64 for values of exactly 64 bits.
    if (intValue >= INT64_MIN && intValue <= INT64_MAX)
      return types.int64();
    if (intValue > 0 && intValue <= static_cast<Int128>(UINT64_MAX))
      return types.uint64();
    return nullptr;
  case Kind::Float:
    return types.float64();
  case Kind::Complex:
    return types.complex(128);
  case Kind::String:
    // Numba's unicode_type; Kiln has only constant strings.
    return types.stringLiteral(text);
  case Kind::Tuple: {
    std::vector<const Type *> elements;
    for (const ConstantValue &item : items) {
      const Type *elementType = item.plainType(types);
      if (!elementType)
        return nullptr;
      elements.push_back(elementType);
    }
    return types.tuple(elements);
  }
  }
  return nullptr;
}

const Type *ConstantValue::type(TypeContext &types, ConstantRole role) const {
  if (valueKind == Kind::Tuple && !dtype) {
    std::vector<const Type *> elements;
    switch (role) {
    case ConstantRole::Literal:
      // Numba turns a constant tuple into a tuple built from constants.
      for (const ConstantValue &item : items) {
        const Type *elementType = item.type(types, ConstantRole::Value);
        if (!elementType)
          return nullptr;
        elements.push_back(elementType);
      }
      return types.tuple(elements);
    case ConstantRole::Global:
      for (const ConstantValue &item : items) {
        const Type *elementType = item.literalType(types);
        if (!elementType)
          return plainType(types);
        elements.push_back(elementType);
      }
      return types.tuple(elements);
    case ConstantRole::Value:
      return plainType(types);
    }
  }
  if (const Type *literal = literalType(types))
    return literal;
  return plainType(types);
}

namespace {

std::string int128ToString(Int128 value) {
  if (value == 0)
    return "0";
  bool negative = value < 0;
  unsigned __int128 magnitude =
      negative ? -static_cast<unsigned __int128>(value) : static_cast<unsigned __int128>(value);
  std::string digits;
  while (magnitude) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  }
  if (negative)
    digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

/// Python's repr() of a float: the shortest string that round-trips.
std::string floatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  for (int precision = 1; precision <= 17; ++precision) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.*g", precision, value);
    if (std::strtod(text.c_str(), nullptr) == value) {
      if (text.find_first_of(".einn") == std::string::npos)
        text += ".0";
      return text;
    }
  }
  return std::to_string(value);
}

} // namespace

std::string ConstantValue::repr() const {
  std::string body;
  switch (valueKind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    body = intValue ? "True" : "False";
    break;
  case Kind::Int:
    body = int128ToString(intValue);
    break;
  case Kind::Float:
    body = floatRepr(real);
    break;
  case Kind::Complex: {
    // Python writes the parts of a complex without a trailing ".0": 1j, (2+0j).
    auto part = [](double x) {
      std::string text = floatRepr(x);
      if (llvm::StringRef(text).ends_with(".0"))
        text.resize(text.size() - 2);
      return text;
    };
    body = real == 0 && !std::signbit(real)
               ? part(imag) + "j"
               : "(" + part(real) + (imag < 0 || (imag == 0 && std::signbit(imag)) ? "-" : "+") +
                     part(std::fabs(imag)) + "j)";
    break;
  }
  case Kind::String:
    return "'" + text + "'";
  case Kind::Tuple: {
    body = "(";
    for (size_t i = 0; i < items.size(); ++i)
      body += (i ? ", " : "") + items[i].repr();
    if (items.size() == 1)
      body += ",";
    return body + ")";
  }
  }
  if (dtype)
    return "np." + dtype->str() + "(" + body + ")";
  return body;
}

bool ConstantValue::operator==(const ConstantValue &other) const {
  return valueKind == other.valueKind && dtype == other.dtype && intValue == other.intValue &&
         (real == other.real || (std::isnan(real) && std::isnan(other.real))) &&
         (imag == other.imag || (std::isnan(imag) && std::isnan(other.imag))) &&
         text == other.text && items == other.items;
}

//===----------------------------------------------------------------------===//
// Folding
//===----------------------------------------------------------------------===//

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

FoldResult foldCompare(CompareOp op, const ConstantValue &lhs, const ConstantValue &rhs) {
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
