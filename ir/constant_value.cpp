//===- ir/constant_value.cpp - Python constants ---------------------------===//

#include "ir/constant_value.h"

#include "ir/types.h"

#include <llvm/ADT/APFloat.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <complex>

namespace kiln {

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

ConstantValue ConstantValue::namedTuple(std::vector<ConstantValue> elements, std::string className,
                                        std::vector<std::string> fields) {
  ConstantValue c = tuple(std::move(elements));
  c.className = std::move(className);
  c.fields = std::move(fields);
  return c;
}

ConstantValue ConstantValue::enumMember(ConstantValue value, std::string className,
                                        std::string memberName, bool isInt) {
  value.enumClassName = std::move(className);
  value.enumMemberName = std::move(memberName);
  value.intEnum = isInt;
  return value;
}

ConstantValue ConstantValue::memberValue() const {
  ConstantValue value = *this;
  value.enumClassName.clear();
  value.enumMemberName.clear();
  value.intEnum = false;
  return value;
}

ConstantValue ConstantValue::bytes(std::string value) {
  ConstantValue c(Kind::Bytes);
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
  UInt128 mask = bits == 64 ? ~static_cast<uint64_t>(0) : ((static_cast<uint64_t>(1) << bits) - 1);
  UInt128 raw = static_cast<UInt128>(value) & mask;
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

/// `value` rounded to the nearest bfloat16, ties to even, as
/// __double2bfloat16 rounds.
double roundToBFloat16(double value) {
  llvm::APFloat rounded(value);
  bool losesInfo = false;
  rounded.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  rounded.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return rounded.convertToDouble();
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
    else if (floatType->isBFloat16())
      d = roundToBFloat16(d);
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
  case Kind::Bytes:
    return !text.empty();
  case Kind::Tuple:
    return !items.empty();
  }
  return false;
}

const Type *ConstantValue::literalType(TypeContext &types) const {
  if (dtype || !enumClassName.empty())
    return nullptr; // NumPy scalars and enum members are never literals
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
  case Kind::Bytes:
    return types.bytesLiteral(text);
  default:
    return nullptr;
  }
}

const Type *ConstantValue::plainType(TypeContext &types) const {
  if (dtype)
    return dtype;
  if (!enumClassName.empty()) {
    const Type *valueType = memberValue().plainType(types);
    return valueType ? types.enumMember(enumClassName, valueType, intEnum) : nullptr;
  }
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
  case Kind::Bytes:
    return types.bytesLiteral(text);
  case Kind::Tuple: {
    std::vector<const Type *> elements;
    for (const ConstantValue &item : items) {
      const Type *elementType = item.plainType(types);
      if (!elementType)
        return nullptr;
      elements.push_back(elementType);
    }
    if (!className.empty())
      return types.namedTuple(elements, className, fields);
    return types.tuple(elements);
  }
  }
  return nullptr;
}

const Type *ConstantValue::type(TypeContext &types, ConstantRole role) const {
  if (!enumClassName.empty())
    return plainType(types);
  if (valueKind == Kind::Tuple && !className.empty())
    return plainType(types);
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
  UInt128 magnitude = negative ? -static_cast<UInt128>(value) : static_cast<UInt128>(value);
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

namespace {

/// Python's repr() of a str (`bytes` false) or of a bytes value, which
/// escapes every byte outside ASCII as well.
std::string quoted(llvm::StringRef text, bool bytes) {
  std::string result = bytes ? "b'" : "'";
  for (char c : text) {
    switch (c) {
    case '\\':
    case '\'':
      result += '\\';
      result += c;
      break;
    case '\n':
      result += "\\n";
      break;
    case '\r':
      result += "\\r";
      break;
    case '\t':
      result += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f ||
          (bytes && static_cast<unsigned char>(c) >= 0x80))
        result += llvm::formatv("\\x{0:x-2}", static_cast<unsigned char>(c)).str();
      else
        result += c;
    }
  }
  return result + "'";
}

} // namespace

std::string quotedString(llvm::StringRef text) {
  return quoted(text, false);
}

std::string ConstantValue::repr() const {
  if (!enumClassName.empty())
    return enumClassName + "." + enumMemberName;
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
    return quotedString(text);
  case Kind::Bytes:
    return quoted(text, true);
  case Kind::Tuple: {
    if (!className.empty()) { // Point(x=1, y=2.5)
      body = className + "(";
      for (size_t i = 0; i < items.size(); ++i)
        body += (i ? ", " : "") + (i < fields.size() ? fields[i] + "=" : "") + items[i].repr();
      return body + ")";
    }
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
         text == other.text && items == other.items && className == other.className &&
         fields == other.fields && enumClassName == other.enumClassName &&
         enumMemberName == other.enumMemberName && intEnum == other.intEnum;
}

} // namespace kiln
