//===- ir/types.h - Numba's type system -------------------*- C++ -*-===//
//
// [Note: types]
// Kiln types kernels exactly as Numba does, so its type system mirrors
// Numba's: scalar types with NumPy's names, literal types for integer and
// boolean constants (Literal[int](3)), arrays with a dtype, a number of
// dimensions and a layout (C, F or A), tuples (printed as UniTuple when
// homogeneous), records, and a few types that exist only at compile time
// (modules, functions, dtype classes such as `float32` used as a cast).
//
// Types are interned in a TypeContext: two types are equal exactly when
// their pointers are equal. Every Type is immutable and lives as long as its
// context.
//
// Conversions between types follow Numba's casting graph (exact < promote <
// safe < unsafe), and unification follows Numba's unify_pairs: NumPy's type
// promotion for numbers, layout "A" for arrays that differ only in layout,
// element-wise for tuples.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/datetime_units.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Casting.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class TypeContext;

class Type {
public:
  enum class Kind : uint8_t {
    None,
    Boolean,
    Integer,
    Float,
    Complex,
    IntegerLiteral,
    BooleanLiteral,
    StringLiteral,
    Array,
    Tuple,
    Record,
    Range,
    NumberClass,
    Entity,
    Slice,
    Vector,
    CharSequence,
    DateTime,
    Pointer,
    EnumMember,
    Fp8,
    Optional,
  };

  Kind kind() const { return typeKind; }
  /// Numba's name for the type: "float32", "array(int32, 2d, C)",
  /// "UniTuple(int64 x 2)", "Literal[int](3)".
  const std::string &str() const { return name; }

  bool isNumber() const {
    return typeKind == Kind::Integer || typeKind == Kind::Float || typeKind == Kind::Complex ||
           typeKind == Kind::IntegerLiteral;
  }
  /// Booleans, numbers and their literals: what arrays can hold.
  bool isScalar() const {
    return isNumber() || typeKind == Kind::Boolean || typeKind == Kind::BooleanLiteral;
  }
  bool isLiteral() const {
    return typeKind == Kind::IntegerLiteral || typeKind == Kind::BooleanLiteral ||
           typeKind == Kind::StringLiteral;
  }
  /// Values of compile-time-only types (modules, functions, dtype classes,
  /// strings) have no run-time representation.
  bool isCompileTimeOnly() const;

  virtual ~Type() = default;

protected:
  Type(Kind kind, std::string name) : typeKind(kind), name(std::move(name)) {}

private:
  Kind typeKind;
  std::string name;
};

class NoneType : public Type {
public:
  NoneType() : Type(Kind::None, "none") {}
  static bool classof(const Type *t) { return t->kind() == Kind::None; }
};

class BooleanType : public Type {
public:
  BooleanType() : Type(Kind::Boolean, "bool") {}
  static bool classof(const Type *t) { return t->kind() == Kind::Boolean; }
};

class IntegerType : public Type {
public:
  IntegerType(unsigned bits, bool isSigned)
      : Type(Kind::Integer, (isSigned ? "int" : "uint") + std::to_string(bits)), bits(bits),
        isSigned(isSigned) {}
  unsigned bitwidth() const { return bits; }
  bool signedness() const { return isSigned; }
  static bool classof(const Type *t) { return t->kind() == Kind::Integer; }

private:
  unsigned bits;
  bool isSigned;
};

/// IEEE binary16/32/64, and bfloat16: float32's range in 16 bits (8
/// exponent bits, 7 significand bits), which numba-cuda types as a number
/// of its own with its own conversions (see TypeContext's casting graph).
class FloatType : public Type {
public:
  explicit FloatType(unsigned bits)
      : Type(Kind::Float, "float" + std::to_string(bits)), bits(bits), brain(false) {}
  struct BFloat16Tag {};
  explicit FloatType(BFloat16Tag) : Type(Kind::Float, "bfloat16"), bits(16), brain(true) {}
  unsigned bitwidth() const { return bits; }
  /// bfloat16 rather than IEEE's binary16 (float16).
  bool isBFloat16() const { return brain; }
  static bool classof(const Type *t) { return t->kind() == Kind::Float; }

private:
  unsigned bits;
  bool brain;
};

/// Whether `type` is bfloat16.
inline bool isBFloat16(const Type *type) {
  const auto *real = llvm::dyn_cast<FloatType>(type);
  return real && real->isBFloat16();
}

/// One of numba-cuda's 8-bit floating-point storage types (cuda_fp8.h):
/// fp8_e4m3 (4 exponent bits, 3 significand bits, no infinity, one NaN),
/// fp8_e5m2 (IEEE-like, with infinities and NaNs) and fp8_e8m0 (a power of
/// two, 2^-127 to 2^127, and NaN). They have no arithmetic: kernels make
/// them from numbers and convert them back, explicitly.
class Fp8Type : public Type {
public:
  enum class Format : uint8_t { E4M3, E5M2, E8M0 };
  explicit Fp8Type(Format format) : Type(Kind::Fp8, formatName(format)), fp8Format(format) {}
  Format format() const { return fp8Format; }
  static std::string formatName(Format format);
  static bool classof(const Type *t) { return t->kind() == Kind::Fp8; }

private:
  Format fp8Format;
};

/// A value of `valueType` or None (Numba's Optional, "OptionalType(int64)"):
/// what a variable or a function's result is where some paths give None
/// and others a value. Held as the value and whether there is one.
class OptionalType : public Type {
public:
  explicit OptionalType(const Type *value)
      : Type(Kind::Optional, "OptionalType(" + value->str() + ")"), value(value) {}
  const Type *valueType() const { return value; }
  static bool classof(const Type *t) { return t->kind() == Kind::Optional; }

private:
  const Type *value;
};

/// complex64 holds two float32s, complex128 two float64s.
class ComplexType : public Type {
public:
  ComplexType(unsigned bits, const FloatType *element)
      : Type(Kind::Complex, "complex" + std::to_string(bits)), bits(bits), element(element) {}
  unsigned bitwidth() const { return bits; }
  const FloatType *elementType() const { return element; }
  static bool classof(const Type *t) { return t->kind() == Kind::Complex; }

private:
  unsigned bits;
  const FloatType *element;
};

/// The type of an integer constant, e.g. Literal[int](32). It behaves as its
/// literal type (int64, or uint64 above 2**63 - 1) except that converting it
/// anywhere costs at least a promotion, as in Numba.
class IntegerLiteralType : public Type {
public:
  IntegerLiteralType(int64_t value, bool isUnsigned, const IntegerType *literalType)
      : Type(Kind::IntegerLiteral, "Literal[int](" +
                                       (isUnsigned ? std::to_string(static_cast<uint64_t>(value))
                                                   : std::to_string(value)) +
                                       ")"),
        value(value), literal(literalType) {}
  /// The value's bits; reinterpret as uint64 when the literal type is uint64.
  int64_t bits() const { return value; }
  bool isUnsigned() const { return !literal->signedness(); }
  const IntegerType *literalType() const { return literal; }
  static bool classof(const Type *t) { return t->kind() == Kind::IntegerLiteral; }

private:
  int64_t value;
  const IntegerType *literal;
};

class BooleanLiteralType : public Type {
public:
  explicit BooleanLiteralType(bool value)
      : Type(Kind::BooleanLiteral, value ? "Literal[bool](True)" : "Literal[bool](False)"),
        value(value) {}
  bool boolValue() const { return value; }
  static bool classof(const Type *t) { return t->kind() == Kind::BooleanLiteral; }

private:
  bool value;
};

/// The type of a str constant, or of a bytes constant (`isBytes()`, whose
/// value holds the raw bytes).
class StringLiteralType : public Type {
public:
  StringLiteralType(std::string value, bool bytes)
      : Type(Kind::StringLiteral, (bytes ? "Literal[bytes](" : "Literal[str](") + value + ")"),
        value(std::move(value)), bytes(bytes) {}
  const std::string &stringValue() const { return value; }
  bool isBytes() const { return bytes; }
  static bool classof(const Type *t) { return t->kind() == Kind::StringLiteral; }

private:
  std::string value;
  bool bytes;
};

/// Whether `type` is the type of a str constant (not a bytes one).
inline bool isStrLiteral(const Type *type) {
  const auto *literal = llvm::dyn_cast<StringLiteralType>(type);
  return literal && !literal->isBytes();
}

/// The element of a NumPy fixed-width string array or record field: `count`
/// bytes of an `S<count>` dtype ("[char x 12]", Numba's CharSeq) or `count`
/// UCS4 code points of a `U<count>` dtype ("[unichr x 12]", UnicodeCharSeq).
/// A shorter string is padded with zeros; a longer one is cut.
class CharSequenceType : public Type {
public:
  CharSequenceType(unsigned count, bool unicode)
      : Type(Kind::CharSequence,
             (unicode ? "[unichr x " : "[char x ") + std::to_string(count) + "]"),
        count(count), unicode(unicode) {}
  unsigned length() const { return count; }
  bool isUnicode() const { return unicode; }
  /// Bytes one character takes: 4 for code points, 1 for bytes.
  unsigned unitBytes() const { return unicode ? 4 : 1; }
  uint64_t byteSize() const { return uint64_t(count) * unitBytes(); }
  static bool classof(const Type *t) { return t->kind() == Kind::CharSequence; }

private:
  unsigned count;
  bool unicode;
};

enum class ArrayLayout : uint8_t { C, F, A };
llvm::StringRef layoutName(ArrayLayout layout);

/// The bytes one element of `type` takes in an array: a number's width, one
/// for a boolean, eight for a datetime64 or timedelta64; nothing for other
/// types.
std::optional<uint64_t> scalarByteSize(const Type *type);
/// Bytes one element occupies in an array (NumPy's itemsize): a scalar's
/// size, a record's, a fixed-width string's; 1 for anything else.
uint64_t itemSize(const Type *type);
/// The alignment NumPy gives such an element in an aligned struct.
uint64_t itemAlignment(const Type *type);

/// Numba's Array type. A read-only array (a NumPy array a kernel reads from
/// its module's globals, frozen into the code) prints as
/// "readonly array(float64, 1d, C)" and takes no stores.
class ArrayType : public Type {
public:
  ArrayType(std::string name, const Type *dtype, unsigned ndim, ArrayLayout layout, bool readonly)
      : Type(Kind::Array, std::move(name)), dtype(dtype), ndim(ndim), layout(layout),
        readonly(readonly) {}
  const Type *elementType() const { return dtype; }
  unsigned rank() const { return ndim; }
  ArrayLayout arrayLayout() const { return layout; }
  bool isReadonly() const { return readonly; }
  static bool classof(const Type *t) { return t->kind() == Kind::Array; }

private:
  const Type *dtype;
  unsigned ndim;
  ArrayLayout layout;
  bool readonly;
};

class TupleType : public Type {
public:
  TupleType(std::vector<const Type *> elements, std::string name)
      : Type(Kind::Tuple, std::move(name)), elements(std::move(elements)) {}
  llvm::ArrayRef<const Type *> elementTypes() const { return elements; }
  size_t size() const { return elements.size(); }
  /// All elements have the same type (Numba's UniTuple).
  bool isHomogeneous() const;
  /// Whether it is a NamedTupleType.
  bool isNamed() const { return named; }
  static bool classof(const Type *t) { return t->kind() == Kind::Tuple; }

protected:
  bool named = false;

private:
  std::vector<const Type *> elements;
};

/// A tuple of a `collections.namedtuple` or `typing.NamedTuple` class, whose
/// elements are also its fields (Numba's NamedTuple and NamedUniTuple,
/// printed as they are: "Point(int64, float64)", "Point(int64 x 2)"). It is
/// a tuple everywhere else.
class NamedTupleType : public TupleType {
public:
  NamedTupleType(std::vector<const Type *> elements, std::string name, std::string className,
                 std::vector<std::string> fields)
      : TupleType(std::move(elements), std::move(name)), cls(std::move(className)),
        fieldNames(std::move(fields)) {
    named = true;
  }
  llvm::StringRef className() const { return cls; }
  llvm::ArrayRef<std::string> fields() const { return fieldNames; }
  /// The index of field `name`, if the class has one.
  std::optional<size_t> fieldIndex(llvm::StringRef name) const;
  static bool classof(const Type *t) {
    return t->kind() == Kind::Tuple && static_cast<const TupleType *>(t)->isNamed();
  }

private:
  std::string cls;
  std::vector<std::string> fieldNames;
};

/// A NumPy structured dtype, such as xoroshiro128p's {s0: uint64, s1: uint64}.
class RecordType : public Type {
public:
  /// A field holds one `type`, or, with a `shape`, a C-ordered array of them
  /// (Numba's nestedarray(float32, (3, 2))).
  struct Field {
    std::string name;
    const Type *type;
    unsigned offset;
    std::vector<uint64_t> shape;

    bool isNestedArray() const { return !shape.empty(); }
    /// Bytes the field occupies.
    uint64_t byteSize() const;
    /// Numba's name of the field's type: "float32", "nestedarray(int16, (3,))".
    std::string typeName() const;
  };
  RecordType(std::string name, std::vector<Field> fields, unsigned size, unsigned alignment)
      : Type(Kind::Record, std::move(name)), fields(std::move(fields)), size(size),
        alignment(alignment) {}
  llvm::ArrayRef<Field> recordFields() const { return fields; }
  unsigned byteSize() const { return size; }
  unsigned byteAlignment() const { return alignment; }
  static bool classof(const Type *t) { return t->kind() == Kind::Record; }

private:
  std::vector<Field> fields;
  unsigned size;
  unsigned alignment;
};

/// The value of `range(start, stop, step)`, with Numba's element type
/// (range_state32 iterates int32, range_state64 int64, ...).
class RangeType : public Type {
public:
  explicit RangeType(const IntegerType *element)
      : Type(Kind::Range, "range_state_" + element->str()), element(element) {}
  const IntegerType *elementType() const { return element; }
  static bool classof(const Type *t) { return t->kind() == Kind::Range; }

private:
  const IntegerType *element;
};

/// A dtype used as a value: `float32`, `np.float32`, `numba.types.int32`.
/// Calling it casts (`float32(x)`); indexing it makes an array type.
class NumberClassType : public Type {
public:
  explicit NumberClassType(const Type *instance)
      : Type(Kind::NumberClass, "class(" + instance->str() + ")"), instance(instance) {}
  const Type *instanceType() const { return instance; }
  static bool classof(const Type *t) { return t->kind() == Kind::NumberClass; }

private:
  const Type *instance;
};

/// A compile-time entity: a builtin module or function (a Symbol), a
/// function of the module being compiled (a FunctionDecl), a function
/// defined inside one with what it captured (a FunctionDecl; receiverType()
/// is the tuple of the captures' types), a method bound to a value
/// (`z.conjugate`), or an argument a call left out, which takes its
/// parameter's default (Numba's `omitted(default=2)`; receiverType() is the
/// default's type). The front end's tables own what it points to.
class EntityType : public Type {
public:
  /// Overload: a Python function with numba.extending.overload
  /// implementations (an OverloadSet of the front end); OverloadedMethod:
  /// a method numba.extending.overload_method implements, bound to its
  /// receiver (also an OverloadSet).
  enum class EntityKind : uint8_t {
    Builtin,
    Function,
    Closure,
    Method,
    Omitted,
    Overload,
    OverloadedMethod
  };
  EntityType(EntityKind entityKind, const void *entity, const Type *receiver, std::string method,
             std::string name)
      : Type(Kind::Entity, std::move(name)), entityKind(entityKind), entity(entity),
        receiver(receiver), method(std::move(method)) {}
  EntityKind entityKindOf() const { return entityKind; }
  const void *entityPointer() const { return entity; }
  /// For methods: the type of the value the method is bound to, and its name.
  const Type *receiverType() const { return receiver; }
  llvm::StringRef methodName() const { return method; }
  static bool classof(const Type *t) { return t->kind() == Kind::Entity; }

private:
  EntityKind entityKind;
  const void *entity;
  const Type *receiver;
  std::string method;
};

/// NumPy's datetime64 (a point in time, "datetime64[D]") or timedelta64 (a
/// duration, "timedelta64[s]"): an int64 count of `unit`s since the epoch
/// or of the duration, whose most negative value is NaT, "not a time", which
/// every operation passes on. Numba's NPDatetime and NPTimedelta; a value
/// without a unit prints as "datetime64[]".
class DateTimeType : public Type {
public:
  DateTimeType(bool isDatetime, DateTimeUnit unit)
      : Type(Kind::DateTime, std::string(isDatetime ? "datetime64[" : "timedelta64[") +
                                 dateTimeUnitName(unit).str() + "]"),
        datetime(isDatetime), dateUnit(unit) {}
  /// A datetime64; else a timedelta64.
  bool isDatetime() const { return datetime; }
  DateTimeUnit unit() const { return dateUnit; }
  static bool classof(const Type *t) { return t->kind() == Kind::DateTime; }

private:
  bool datetime;
  DateTimeUnit dateUnit;
};

/// Numba's CPointer: the address of `pointee` values ("uint8*"), a kernel
/// argument passed as an integer address, indexed as `p[i]`.
class PointerType : public Type {
public:
  explicit PointerType(const Type *pointee)
      : Type(Kind::Pointer, pointee->str() + "*"), pointee(pointee) {}
  const Type *pointeeType() const { return pointee; }
  static bool classof(const Type *t) { return t->kind() == Kind::Pointer; }

private:
  const Type *pointee;
};

/// A member of an enum.Enum class (Numba's EnumMember, "Enum<int64>(Color)")
/// or of an enum.IntEnum class (IntEnumMember, "IntEnum<int64>(Shape)"),
/// held as its value. The class is part of the type: members compare with
/// members of their own class, and an IntEnum member is also an integer.
class EnumMemberType : public Type {
public:
  EnumMemberType(std::string className, const Type *value, bool isInt)
      : Type(Kind::EnumMember,
             std::string(isInt ? "IntEnum<" : "Enum<") + value->str() + ">(" + className + ")"),
        enumClass(std::move(className)), value(value), intEnum(isInt) {}
  llvm::StringRef className() const { return enumClass; }
  /// The type of the members' values (int64, UniTuple(float64 x 2), ...).
  const Type *valueType() const { return value; }
  bool isIntEnum() const { return intEnum; }
  static bool classof(const Type *t) { return t->kind() == Kind::EnumMember; }

private:
  std::string enumClass;
  const Type *value;
  bool intEnum;
};

/// The index `start:stop:step` in a subscript (Numba's slice2/slice3).
/// A CUDA vector type of numba.cuda (float32x4, int8x2, ...): one to four
/// elements of a scalar type, read as `.x`, `.y`, `.z`, `.w`.
class VectorType : public Type {
public:
  VectorType(std::string name, const Type *element, unsigned count)
      : Type(Kind::Vector, std::move(name)), element(element), count(count) {}
  const Type *elementType() const { return element; }
  unsigned size() const { return count; }
  static bool classof(const Type *t) { return t->kind() == Kind::Vector; }

private:
  const Type *element;
  unsigned count;
};

class SliceType : public Type {
public:
  explicit SliceType(bool hasStep)
      : Type(Kind::Slice, hasStep ? "slice<a:b:c>" : "slice<a:b>"), step(hasStep) {}
  bool hasStep() const { return step; }
  static bool classof(const Type *t) { return t->kind() == Kind::Slice; }

private:
  bool step;
};

/// How a value of one type converts to another, from best to worst.
enum class Conversion : uint8_t { Exact, Promote, Safe, Unsafe };
llvm::StringRef conversionName(Conversion conversion);

class TypeContext {
public:
  TypeContext();
  TypeContext(const TypeContext &) = delete;
  TypeContext &operator=(const TypeContext &) = delete;
  ~TypeContext();

  const NoneType *none() const { return noneType; }
  const BooleanType *boolean() const { return booleanType; }
  const IntegerType *integer(unsigned bits, bool isSigned) const;
  const IntegerType *int64() const { return integer(64, true); }
  const IntegerType *uint64() const { return integer(64, false); }
  const IntegerType *int32() const { return integer(32, true); }
  const FloatType *floating(unsigned bits) const;
  const FloatType *float64() const { return floating(64); }
  const FloatType *float32() const { return floating(32); }
  const FloatType *bfloat16() const;
  const ComplexType *complex(unsigned bits) const;

  const IntegerLiteralType *integerLiteral(int64_t value);
  /// A literal above INT64_MAX has type Literal[int] over uint64.
  const IntegerLiteralType *unsignedIntegerLiteral(uint64_t value);
  const BooleanLiteralType *booleanLiteral(bool value);
  const StringLiteralType *stringLiteral(llvm::StringRef value);
  const StringLiteralType *bytesLiteral(llvm::StringRef value);
  /// `S<count>` (unicode false) or `U<count>` elements.
  const CharSequenceType *charSequence(unsigned count, bool unicode);
  const DateTimeType *datetime(DateTimeUnit unit);
  const PointerType *pointer(const Type *pointee);
  const EnumMemberType *enumMember(llvm::StringRef className, const Type *value, bool isInt);
  /// `value` or None; `value` itself where it is None or already optional.
  const Type *optional(const Type *value);
  const DateTimeType *timedelta(DateTimeUnit unit);
  const ArrayType *array(const Type *dtype, unsigned ndim, ArrayLayout layout,
                         bool readonly = false);
  /// `array` with another layout, keeping its element type, rank and
  /// read-only flag (the type of a view of it).
  const ArrayType *arrayLike(const ArrayType *array, unsigned ndim, ArrayLayout layout);
  const TupleType *tuple(llvm::ArrayRef<const Type *> elements);
  /// The tuple of the named tuple class `className` with these fields.
  const NamedTupleType *namedTuple(llvm::ArrayRef<const Type *> elements, llvm::StringRef className,
                                   llvm::ArrayRef<std::string> fields);
  const RecordType *record(std::vector<RecordType::Field> fields, unsigned size, unsigned alignment,
                           bool aligned);
  /// numba.cuda.random.xoroshiro128p_type: {s0: uint64, s1: uint64}, aligned.
  const RecordType *xoroshiro128pState();
  const RangeType *range(const IntegerType *element);
  const NumberClassType *numberClass(const Type *instance);
  const EntityType *entity(EntityType::EntityKind kind, const void *entity, llvm::StringRef name);
  /// `receiver.method` where overload_method implements it (`overloads`).
  const EntityType *overloadedMethod(const void *overloads, const Type *receiver,
                                     llvm::StringRef method);
  /// A named tuple class as kernels call it (`Point(1, 2)`): the named tuple
  /// type of its fields with no types yet (`none` each), whose NumberClass
  /// the class's name is typed as.
  const NamedTupleType *namedTupleClass(llvm::StringRef className,
                                        llvm::ArrayRef<std::string> fields);
  const EntityType *method(const Type *receiver, llvm::StringRef method);
  /// The function `function` defined inside another, having captured values
  /// of `captures`' types: "closure 'inner'(Literal[int](10))".
  const EntityType *closure(const void *function, const TupleType *captures, llvm::StringRef name);
  /// An omitted argument whose default has type `valueType` and Python repr
  /// `defaultRepr`: "omitted(default=2)".
  const EntityType *omitted(const Type *valueType, llvm::StringRef defaultRepr);
  const SliceType *slice(bool hasStep);
  /// float32x4 and the like: `count` (1 to 4) elements of a scalar type.
  const VectorType *vector(const Type *element, unsigned count);

  /// Looks up a Numba scalar type name ("float32", "f4", "intp", "boolean",
  /// "complex128", ...), or an FP8 type's ("fp8_e4m3"). Returns null for
  /// unknown names.
  const Type *scalarByName(llvm::StringRef name) const;
  /// The scalar type of a NumPy type code ('f', 'd', 'i', '?'; 'l' and 'q'
  /// are both int64, as on LP64 Linux), or null for another character.
  const Type *scalarOfTypeCode(char code) const;
  /// All scalar types, in Numba's order (bool, ints, uints, floats, complex).
  llvm::ArrayRef<const Type *> allScalars() const { return scalars; }

  /// Drops literal-ness, recursively through tuples. An omitted argument
  /// becomes the plain type of its default.
  const Type *unliteral(const Type *type);

  /// Numba's can_convert: how `from` converts to `to`, or nothing.
  std::optional<Conversion> canConvert(const Type *from, const Type *to);
  /// Numba's unify_pairs: the type both unify to, or null.
  const Type *unify(const Type *a, const Type *b);

private:
  template <typename T, typename... Args> const T *intern(const std::string &key, Args &&...args);
  std::optional<Conversion> scalarConversion(const Type *from, const Type *to) const;
  const Type *promoteNumbers(const Type *a, const Type *b);
  void addBFloat16Conversions();

  std::vector<std::unique_ptr<Type>> owned;
  llvm::StringMap<const Type *> interned;
  const NoneType *noneType;
  const BooleanType *booleanType;
  std::vector<const Type *> scalars;
  std::vector<const Fp8Type *> fp8Types;
  /// scalarConversions[i][j]: conversion from scalars[i] to scalars[j].
  std::vector<std::vector<std::optional<Conversion>>> scalarConversions;
};

} // namespace kiln
