//===- ir/constant_value.h - Python constants -------------------*- C++ -*-===//
//
// The value of a module-level constant or of a literal expression in a
// kernel: None, a bool, an int, a float, a complex, a str, a bytes or a tuple of
// these, optionally a NumPy scalar of a fixed dtype (np.float32(0.5)).
// The front end folds operators on them (frontend/resolve/constant_folding.h); the
// typed IR carries them as the values of its constants.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class Type;
class TypeContext;

/// Where a kernel reads a constant, which decides its Numba type (Numba's
/// typeinfer.typeof_const, typeof_global and resolve_value_type_prefer_literal).
enum class ConstantRole : uint8_t {
  /// Written in the kernel (LOAD_CONST): Literal[int], Literal[bool] and
  /// Literal[str] for those values; a tuple is built from its elements (Numba
  /// expands a constant tuple into its items), which are typed as values.
  Literal,
  /// A module-level global: a tuple is a tuple of literals if every element
  /// can be one, else typed as a plain value (ints become int64).
  Global,
  /// A value with no source of its own, such as an omitted argument's
  /// default: a literal if the value can be one, else its plain type.
  Value,
};

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

/// Python's repr() of a str: single-quoted, with backslashes, quotes and
/// control characters escaped ('it\\'s').
std::string quotedString(llvm::StringRef text);

class ConstantValue {
public:
  enum class Kind : uint8_t { None, Bool, Int, Float, Complex, String, Bytes, Tuple };

  static ConstantValue none() { return ConstantValue(Kind::None); }
  static ConstantValue boolean(bool value);
  static ConstantValue integer(Int128 value);
  static ConstantValue floating(double value);
  static ConstantValue complex(double real, double imag);
  static ConstantValue string(std::string value);
  /// A bytes constant; stringValue() holds its raw bytes.
  static ConstantValue bytes(std::string value);
  static ConstantValue tuple(std::vector<ConstantValue> elements);
  /// An instance of the named tuple class `className` (collections.namedtuple,
  /// typing.NamedTuple) with these fields: its type is the class's, its
  /// elements typed as values, as Numba's typeof does.
  static ConstantValue namedTuple(std::vector<ConstantValue> elements, std::string className,
                                  std::vector<std::string> fields);
  /// The member `memberName` of the enum class `className` (an IntEnum's if
  /// `isInt`), whose value is `value`: typed as the class's members are
  /// (Numba's EnumMember, IntEnumMember), never as a literal.
  static ConstantValue enumMember(ConstantValue value, std::string className,
                                  std::string memberName, bool isInt);
  /// A NumPy scalar: `value` converted to `scalarType` (np.float32(x) rounds
  /// to single precision, np.int8(300) wraps).
  static ConstantValue numpyScalar(const ConstantValue &value, const Type *scalarType);

  Kind kind() const { return valueKind; }
  bool isNumber() const {
    return valueKind == Kind::Bool || valueKind == Kind::Int || valueKind == Kind::Float ||
           valueKind == Kind::Complex;
  }
  /// The dtype of a NumPy scalar; null for plain Python values.
  const Type *numpyType() const { return dtype; }

  bool boolValue() const { return intValue != 0; }
  Int128 intValue128() const { return intValue; }
  double floatValue() const { return real; }
  double realPart() const { return real; }
  double imagPart() const { return imag; }
  const std::string &stringValue() const { return text; }
  const std::vector<ConstantValue> &elements() const { return items; }
  /// A named tuple's class; empty for plain tuples.
  const std::string &tupleClass() const { return className; }
  /// An enum member's class; empty for other values.
  const std::string &enumClass() const { return enumClassName; }
  /// An enum member's value (any other value itself), as a plain constant.
  ConstantValue memberValue() const;

  /// The value as a double, for Bool, Int and Float.
  double asDouble() const;
  /// Python truthiness.
  bool truthy() const;

  /// The Numba type of this value when a kernel reads it in `role`:
  /// Literal[int](v) for Python ints, Literal[bool] for bools, float64,
  /// complex128, the dtype of a NumPy scalar, and tuples of those (whose
  /// elements are literals or not as `role` says). Returns null for a Python
  /// int outside [-2**63, 2**64 - 1], which Numba cannot type either.
  const Type *type(TypeContext &types, ConstantRole role = ConstantRole::Literal) const;
  /// Numba's typeof(value): the plain type, with no literals at any depth.
  const Type *plainType(TypeContext &types) const;
  /// Numba's maybe_literal(value): a literal type for Python ints, bools and
  /// strings; null for everything else.
  const Type *literalType(TypeContext &types) const;

  /// Python's repr(): "3", "0.5", "(1, 2)", "'text'", "np.float32(0.5)".
  std::string repr() const;

  bool operator==(const ConstantValue &other) const;

private:
  explicit ConstantValue(Kind kind) : valueKind(kind) {}

  Kind valueKind;
  const Type *dtype = nullptr;
  Int128 intValue = 0; // also Bool
  double real = 0;
  double imag = 0;
  std::string text;
  std::vector<ConstantValue> items;
  std::string className;           // named tuples
  std::vector<std::string> fields; // named tuples
  std::string enumClassName;       // enum members: the class, the member,
  std::string enumMemberName;      // and whether the class is an IntEnum
  bool intEnum = false;
};

} // namespace kiln
