//===- ir/types.cpp - Numba's type system ---------------------------===//

#include "ir/types.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <cassert>

namespace kiln {

llvm::StringRef layoutName(ArrayLayout layout) {
  switch (layout) {
  case ArrayLayout::C:
    return "C";
  case ArrayLayout::F:
    return "F";
  case ArrayLayout::A:
    return "A";
  }
  return "A";
}

llvm::StringRef conversionName(Conversion conversion) {
  switch (conversion) {
  case Conversion::Exact:
    return "exact";
  case Conversion::Promote:
    return "promote";
  case Conversion::Safe:
    return "safe";
  case Conversion::Unsafe:
    return "unsafe";
  }
  return "unsafe";
}

bool Type::isCompileTimeOnly() const {
  switch (typeKind) {
  case Kind::StringLiteral:
  case Kind::NumberClass:
  case Kind::Entity:
  case Kind::Slice:
  case Kind::None:
    return true;
  case Kind::Tuple:
    return llvm::any_of(llvm::cast<TupleType>(this)->elementTypes(),
                        [](const Type *t) { return t->isCompileTimeOnly(); });
  default:
    return false;
  }
}

bool TupleType::isHomogeneous() const {
  return !elements.empty() && std::all_of(elements.begin(), elements.end(),
                                          [&](const Type *t) { return t == elements[0]; });
}

namespace {

/// Index of each scalar in TypeContext::scalars: Numba's scalars, then
/// bfloat16, which numba-cuda converts by rules of its own.
enum ScalarIndex : unsigned {
#define NUMBA_SCALAR(Id, name, size) Id,
#include "module/numba_scalars.def"
  BF16,
  NumScalars
};

/// A direct edge of Numba's casting graph; every other conversion follows
/// by closure.
struct CastingEdge {
  ScalarIndex from;
  ScalarIndex to;
  Conversion forward;
  std::optional<Conversion> backward;
};
constexpr Conversion Promote = Conversion::Promote;
constexpr Conversion Safe = Conversion::Safe;
constexpr Conversion Unsafe = Conversion::Unsafe;
constexpr std::nullopt_t None = std::nullopt;
const CastingEdge castingEdges[] = {
#define NUMBA_CAST(From, To, forward, backward) {From, To, forward, backward},
#include "module/numba_scalars.def"
};

} // namespace

TypeContext::TypeContext() {
  auto own = [&](Type *type) {
    owned.emplace_back(type);
    interned[type->str()] = type;
    return type;
  };
  noneType = static_cast<NoneType *>(own(new NoneType()));
  booleanType = static_cast<BooleanType *>(own(new BooleanType()));
  scalars.resize(NumScalars);
  scalars[Bool] = booleanType;
  const unsigned intBits[] = {8, 16, 32, 64};
  for (unsigned i = 0; i < 4; ++i) {
    scalars[I8 + i] = own(new IntegerType(intBits[i], true));
    scalars[U8 + i] = own(new IntegerType(intBits[i], false));
  }
  scalars[F16] = own(new FloatType(16));
  scalars[F32] = own(new FloatType(32));
  scalars[F64] = own(new FloatType(64));
  scalars[C64] = own(new ComplexType(64, llvm::cast<FloatType>(scalars[F32])));
  scalars[C128] = own(new ComplexType(128, llvm::cast<FloatType>(scalars[F64])));
  scalars[BF16] = own(new FloatType(FloatType::BFloat16Tag{}));

  // Close the casting graph: the conversion along a path is its worst edge,
  // and the conversion between two types is the best path.
  scalarConversions.assign(NumScalars, std::vector<std::optional<Conversion>>(NumScalars));
  for (unsigned i = 0; i < NumScalars; ++i)
    scalarConversions[i][i] = Conversion::Exact;
  for (const CastingEdge &edge : castingEdges) {
    scalarConversions[edge.from][edge.to] = edge.forward;
    if (edge.backward)
      scalarConversions[edge.to][edge.from] = edge.backward;
  }
  for (unsigned via = 0; via < NumScalars; ++via)
    for (unsigned from = 0; from < NumScalars; ++from)
      for (unsigned to = 0; to < NumScalars; ++to) {
        auto first = scalarConversions[from][via];
        auto second = scalarConversions[via][to];
        if (!first || !second || from == to)
          continue;
        Conversion path = std::max(*first, *second);
        auto &best = scalarConversions[from][to];
        if (!best || path < *best)
          best = path;
      }
  addBFloat16Conversions();
  for (auto format : {Fp8Type::Format::E4M3, Fp8Type::Format::E5M2, Fp8Type::Format::E8M0})
    fp8Types.push_back(llvm::cast<Fp8Type>(own(new Fp8Type(format))));
}

std::string Fp8Type::formatName(Format format) {
  switch (format) {
  case Format::E4M3:
    return "fp8_e4m3";
  case Format::E5M2:
    return "fp8_e5m2";
  case Format::E8M0:
    return "fp8_e8m0";
  }
  llvm_unreachable("unknown FP8 format");
}

void TypeContext::addBFloat16Conversions() {
  // numba-cuda's Bfloat16.can_convert_from/can_convert_to: direct rules, not
  // edges of the casting graph, so nothing converts through bfloat16.
  auto &from = scalarConversions[BF16];
  for (unsigned other = 0; other < NumScalars; ++other)
    if (other != BF16)
      from[other] = scalarConversions[other][BF16] = std::nullopt;
  from[F32] = from[F64] = Conversion::Safe;
  from[F16] = Conversion::Unsafe;
  for (unsigned integer = I8; integer <= U64; ++integer) {
    from[integer] = Conversion::Unsafe;
    bool eightBits = integer == I8 || integer == U8;
    scalarConversions[integer][BF16] = eightBits ? Conversion::Safe : Conversion::Unsafe;
  }
  for (unsigned real : {F16, F32, F64})
    scalarConversions[real][BF16] = Conversion::Unsafe;
}

TypeContext::~TypeContext() = default;

template <typename T, typename... Args>
const T *TypeContext::intern(const std::string &key, Args &&...args) {
  auto it = interned.find(key);
  if (it != interned.end())
    return llvm::cast<T>(it->second);
  T *type = new T(std::forward<Args>(args)...);
  owned.emplace_back(type);
  interned[key] = type;
  return type;
}

const IntegerType *TypeContext::integer(unsigned bits, bool isSigned) const {
  unsigned index = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
  assert((bits == 8 || bits == 16 || bits == 32 || bits == 64) && "no such integer type");
  return llvm::cast<IntegerType>(scalars[(isSigned ? I8 : U8) + index]);
}

const FloatType *TypeContext::floating(unsigned bits) const {
  assert((bits == 16 || bits == 32 || bits == 64) && "no such float type");
  return llvm::cast<FloatType>(scalars[bits == 16 ? F16 : bits == 32 ? F32 : F64]);
}

const FloatType *TypeContext::bfloat16() const {
  return llvm::cast<FloatType>(scalars[BF16]);
}

const ComplexType *TypeContext::complex(unsigned bits) const {
  assert((bits == 64 || bits == 128) && "no such complex type");
  return llvm::cast<ComplexType>(scalars[bits == 64 ? C64 : C128]);
}

const IntegerLiteralType *TypeContext::integerLiteral(int64_t value) {
  return intern<IntegerLiteralType>("Literal[int](" + std::to_string(value) + ")", value, false,
                                    int64());
}

const IntegerLiteralType *TypeContext::unsignedIntegerLiteral(uint64_t value) {
  if (value <= static_cast<uint64_t>(INT64_MAX))
    return integerLiteral(static_cast<int64_t>(value));
  return intern<IntegerLiteralType>("Literal[int](" + std::to_string(value) + ")",
                                    static_cast<int64_t>(value), true, uint64());
}

const BooleanLiteralType *TypeContext::booleanLiteral(bool value) {
  return intern<BooleanLiteralType>(value ? "Literal[bool](True)" : "Literal[bool](False)", value);
}

const StringLiteralType *TypeContext::stringLiteral(llvm::StringRef value) {
  return intern<StringLiteralType>("str:" + value.str(), value.str(), false);
}

const StringLiteralType *TypeContext::bytesLiteral(llvm::StringRef value) {
  return intern<StringLiteralType>("bytes:" + value.str(), value.str(), true);
}

const PointerType *TypeContext::pointer(const Type *pointee) {
  return intern<PointerType>("pointer:" + pointee->str(), pointee);
}

const EnumMemberType *TypeContext::enumMember(llvm::StringRef className, const Type *value,
                                              bool isInt) {
  std::string key =
      std::string(isInt ? "IntEnum<" : "Enum<") + value->str() + ">(" + className.str() + ")";
  return intern<EnumMemberType>(key, className.str(), value, isInt);
}

const DateTimeType *TypeContext::datetime(DateTimeUnit unit) {
  return intern<DateTimeType>("datetime64[" + dateTimeUnitName(unit).str() + "]", true, unit);
}

const DateTimeType *TypeContext::timedelta(DateTimeUnit unit) {
  return intern<DateTimeType>("timedelta64[" + dateTimeUnitName(unit).str() + "]", false, unit);
}

const CharSequenceType *TypeContext::charSequence(unsigned count, bool unicode) {
  std::string name = (unicode ? "[unichr x " : "[char x ") + std::to_string(count) + "]";
  return intern<CharSequenceType>(name, count, unicode);
}

std::optional<uint64_t> scalarByteSize(const Type *type) {
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type))
    return integer->bitwidth() / 8;
  if (const auto *real = llvm::dyn_cast<FloatType>(type))
    return real->bitwidth() / 8;
  if (const auto *complex = llvm::dyn_cast<ComplexType>(type))
    return complex->bitwidth() / 8;
  if (llvm::isa<BooleanType>(type))
    return 1;
  if (llvm::isa<DateTimeType>(type))
    return 8;
  return std::nullopt;
}

uint64_t itemSize(const Type *type) {
  if (const auto *record = llvm::dyn_cast<RecordType>(type))
    return record->byteSize();
  if (const auto *chars = llvm::dyn_cast<CharSequenceType>(type))
    return chars->byteSize();
  return scalarByteSize(type).value_or(1);
}

uint64_t itemAlignment(const Type *type) {
  if (const auto *complex = llvm::dyn_cast<ComplexType>(type))
    return complex->bitwidth() / 16;
  if (const auto *record = llvm::dyn_cast<RecordType>(type))
    return record->byteAlignment();
  if (const auto *chars = llvm::dyn_cast<CharSequenceType>(type))
    return chars->unitBytes();
  return itemSize(type);
}

const ArrayType *TypeContext::array(const Type *dtype, unsigned ndim, ArrayLayout layout,
                                    bool readonly) {
  // Numba: arrays of 0 or 1 dimensions that are C-contiguous are also
  // F-contiguous; it keeps the layout as written.
  std::string key = std::string(readonly ? "readonly " : "") + "array(" + dtype->str() + ", " +
                    std::to_string(ndim) + "d, " + layoutName(layout).str() + ")";
  return intern<ArrayType>(key, key, dtype, ndim, layout, readonly);
}

const ArrayType *TypeContext::arrayLike(const ArrayType *like, unsigned ndim, ArrayLayout layout) {
  return array(like->elementType(), ndim, layout, like->isReadonly());
}

const TupleType *TypeContext::tuple(llvm::ArrayRef<const Type *> elements) {
  std::string name;
  bool homogeneous =
      !elements.empty() && llvm::all_of(elements, [&](const Type *t) { return t == elements[0]; });
  if (homogeneous) {
    name = "UniTuple(" + elements[0]->str() + " x " + std::to_string(elements.size()) + ")";
  } else {
    name = "Tuple(";
    for (size_t i = 0; i < elements.size(); ++i)
      name += (i ? ", " : "") + elements[i]->str();
    name += ")";
  }
  return intern<TupleType>(name, std::vector<const Type *>(elements.begin(), elements.end()), name);
}

const NamedTupleType *TypeContext::namedTuple(llvm::ArrayRef<const Type *> elements,
                                              llvm::StringRef className,
                                              llvm::ArrayRef<std::string> fields) {
  // Numba's names: the class's, then the elements as the tuple's.
  llvm::StringRef plain = tuple(elements)->str();
  std::string name = className.str() + plain.substr(plain.find('(')).str();
  std::string key = "namedtuple:" + name + ":" + llvm::join(fields, ",");
  return intern<NamedTupleType>(key, std::vector<const Type *>(elements.begin(), elements.end()),
                                name, className.str(),
                                std::vector<std::string>(fields.begin(), fields.end()));
}

const NamedTupleType *TypeContext::namedTupleClass(llvm::StringRef className,
                                                   llvm::ArrayRef<std::string> fields) {
  return namedTuple(std::vector<const Type *>(fields.size(), none()), className, fields);
}

std::optional<size_t> NamedTupleType::fieldIndex(llvm::StringRef name) const {
  for (size_t i = 0; i < fieldNames.size(); ++i)
    if (fieldNames[i] == name)
      return i;
  return std::nullopt;
}

uint64_t RecordType::Field::byteSize() const {
  uint64_t bytes = itemSize(type);
  for (uint64_t extent : shape)
    bytes *= extent;
  return bytes;
}

std::string RecordType::Field::typeName() const {
  if (!isNestedArray())
    return type->str();
  std::string dims;
  for (size_t d = 0; d < shape.size(); ++d)
    dims += (d ? ", " : "") + std::to_string(shape[d]);
  return "nestedarray(" + type->str() + ", (" + dims + (shape.size() == 1 ? ",))" : "))");
}

const RecordType *TypeContext::record(std::vector<RecordType::Field> fields, unsigned size,
                                      unsigned alignment, bool aligned) {
  // Numba's name for a record type spells out its layout.
  std::string name = "Record(";
  for (size_t i = 0; i < fields.size(); ++i)
    name += (i ? "," : "") + fields[i].name + "[type=" + fields[i].typeName() +
            ";offset=" + std::to_string(fields[i].offset) + "]";
  name += ";" + std::to_string(size) + ";" + (aligned ? "True" : "False") + ")";
  return intern<RecordType>(name, name, std::move(fields), size, alignment);
}

const RecordType *TypeContext::xoroshiro128pState() {
  return record({{"s0", uint64(), 0, {}}, {"s1", uint64(), 8, {}}}, 16, 8, true);
}

const RangeType *TypeContext::range(const IntegerType *element) {
  return intern<RangeType>("range_state_" + element->str(), element);
}

const NumberClassType *TypeContext::numberClass(const Type *instance) {
  return intern<NumberClassType>("class(" + instance->str() + ")", instance);
}

const EntityType *TypeContext::entity(EntityType::EntityKind kind, const void *entityPointer,
                                      llvm::StringRef name) {
  std::string key = "entity:" + std::to_string(reinterpret_cast<uintptr_t>(entityPointer));
  return intern<EntityType>(key, kind, entityPointer, nullptr, "", name.str());
}

const EntityType *TypeContext::closure(const void *function, const TupleType *captures,
                                       llvm::StringRef name) {
  std::string shown = "closure '" + name.str() + "'(";
  for (size_t i = 0; i < captures->size(); ++i)
    shown += (i ? ", " : "") + captures->elementTypes()[i]->str();
  shown += ")";
  return intern<EntityType>("closure:" + std::to_string(reinterpret_cast<uintptr_t>(function)) +
                                ":" + captures->str(),
                            EntityType::EntityKind::Closure, function, captures, "", shown);
}

const EntityType *TypeContext::method(const Type *receiver, llvm::StringRef methodName) {
  std::string name = "BoundFunction(" + receiver->str() + "." + methodName.str() + ")";
  return intern<EntityType>("method:" + name, EntityType::EntityKind::Method, nullptr, receiver,
                            methodName.str(), name);
}

const EntityType *TypeContext::overloadedMethod(const void *overloads, const Type *receiver,
                                                llvm::StringRef methodName) {
  std::string name = "BoundFunction(" + receiver->str() + "." + methodName.str() + ")";
  return intern<EntityType>(
      "overloaded method:" + std::to_string(reinterpret_cast<uintptr_t>(overloads)) + ":" + name,
      EntityType::EntityKind::OverloadedMethod, overloads, receiver, methodName.str(), name);
}

const EntityType *TypeContext::omitted(const Type *valueType, llvm::StringRef defaultRepr) {
  std::string name = "omitted(default=" + defaultRepr.str() + ")";
  return intern<EntityType>("omitted:" + name + ":" + valueType->str(),
                            EntityType::EntityKind::Omitted, nullptr, valueType, "", name);
}

const VectorType *TypeContext::vector(const Type *element, unsigned count) {
  std::string name = element->str() + "x" + std::to_string(count);
  return intern<VectorType>(name, name, element, count);
}

const SliceType *TypeContext::slice(bool hasStep) {
  return intern<SliceType>(hasStep ? "slice3" : "slice2", hasStep);
}

const Type *TypeContext::scalarByName(llvm::StringRef name) const {
  // The names numba.types exports for scalars (numba/core/types/__init__.py).
  int index = llvm::StringSwitch<int>(name)
                  .Cases("boolean", "bool_", "b1", Bool)
                  .Cases("int8", "i1", "byte", "char", I8)
                  .Cases("int16", "i2", "short", I16)
                  .Cases("int32", "i4", "intc", I32)
                  .Cases("int64", "i8", "intp", "long_", "longlong", "int_", "ssize_t", I64)
                  .Cases("uint8", "u1", "uchar", U8)
                  .Cases("uint16", "u2", "ushort", U16)
                  .Cases("uint32", "u4", "uintc", "uint", U32)
                  .Cases("uint64", "u8", "uintp", "ulong", "ulonglong", "size_t", U64)
                  .Cases("float16", "f2", "half", F16)
                  .Cases("float32", "f4", "float_", "single", F32)
                  .Cases("float64", "f8", "double", F64)
                  .Cases("complex64", "c8", "csingle", C64)
                  .Cases("complex128", "c16", "cdouble", C128)
                  .Case("bfloat16", BF16)
                  .Default(-1);
  if (index < 0) {
    for (const Fp8Type *fp8 : fp8Types)
      if (fp8->str() == name)
        return fp8;
    return nullptr;
  }
  return scalars[static_cast<unsigned>(index)];
}

const Type *TypeContext::scalarOfTypeCode(char code) const {
  switch (code) {
  case '?':
    return scalars[Bool];
  case 'b':
    return scalars[I8];
  case 'B':
    return scalars[U8];
  case 'h':
    return scalars[I16];
  case 'H':
    return scalars[U16];
  case 'i':
    return scalars[I32];
  case 'I':
    return scalars[U32];
  case 'l':
  case 'q':
    return scalars[I64];
  case 'L':
  case 'Q':
    return scalars[U64];
  case 'e':
    return scalars[F16];
  case 'f':
    return scalars[F32];
  case 'd':
    return scalars[F64];
  case 'F':
    return scalars[C64];
  case 'D':
    return scalars[C128];
  default:
    return nullptr;
  }
}

const Type *TypeContext::unliteral(const Type *type) {
  if (const auto *entity = llvm::dyn_cast<EntityType>(type);
      entity && entity->entityKindOf() == EntityType::EntityKind::Omitted)
    return unliteral(entity->receiverType());
  if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(type))
    return literal->literalType();
  if (llvm::isa<BooleanLiteralType>(type))
    return boolean();
  if (const auto *tupleType = llvm::dyn_cast<TupleType>(type)) {
    std::vector<const Type *> elements;
    for (const Type *element : tupleType->elementTypes())
      elements.push_back(unliteral(element));
    if (const auto *named = llvm::dyn_cast<NamedTupleType>(type))
      return namedTuple(elements, named->className(), named->fields());
    return tuple(elements);
  }
  return type;
}

std::optional<Conversion> TypeContext::scalarConversion(const Type *from, const Type *to) const {
  auto indexOf = [&](const Type *t) -> int {
    auto it = std::find(scalars.begin(), scalars.end(), t);
    return it == scalars.end() ? -1 : static_cast<int>(it - scalars.begin());
  };
  int fromIndex = indexOf(from);
  int toIndex = indexOf(to);
  if (fromIndex < 0 || toIndex < 0)
    return std::nullopt;
  return scalarConversions[static_cast<unsigned>(fromIndex)][static_cast<unsigned>(toIndex)];
}

std::optional<Conversion> TypeContext::canConvert(const Type *from, const Type *to) {
  if (from == to)
    return Conversion::Exact;
  if (std::optional<Conversion> direct = scalarConversion(from, to))
    return direct;
  // Numba's Optional.can_convert_from/to: None and values become optional
  // by promotion; an optional value converts as its value, at best safely
  // (the conversion raises TypeError on None).
  if (const auto *toOptional = llvm::dyn_cast<OptionalType>(to)) {
    if (from == none())
      return Conversion::Promote;
    const auto *fromOptional = llvm::dyn_cast<OptionalType>(from);
    std::optional<Conversion> conversion =
        canConvert(fromOptional ? fromOptional->valueType() : from, toOptional->valueType());
    if (!conversion || fromOptional)
      return conversion;
    return std::max(*conversion, Conversion::Promote);
  }
  if (const auto *fromOptional = llvm::dyn_cast<OptionalType>(from)) {
    if (std::optional<Conversion> conversion = canConvert(fromOptional->valueType(), to))
      return std::max(*conversion, Conversion::Safe);
    return std::nullopt;
  }
  // A literal converts as its value's type would, but never better than a
  // promotion (Numba's Literal.can_convert_to).
  if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(from)) {
    if (std::optional<Conversion> conversion = canConvert(literal->literalType(), to))
      return std::max(*conversion, Conversion::Promote);
    return std::nullopt;
  }
  if (llvm::isa<BooleanLiteralType>(from)) {
    if (std::optional<Conversion> conversion = canConvert(boolean(), to))
      return std::max(*conversion, Conversion::Promote);
    return std::nullopt;
  }
  // An IntEnum member is an integer to integers, never better than a safe
  // conversion (Numba's IntEnumMember.can_convert_to).
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(from);
      member && member->isIntEnum() && llvm::isa<IntegerType>(to)) {
    if (std::optional<Conversion> conversion = canConvert(member->valueType(), to))
      return std::max(*conversion, Conversion::Safe);
    return std::nullopt;
  }
  if (const auto *fromArray = llvm::dyn_cast<ArrayType>(from)) {
    const auto *toArray = llvm::dyn_cast<ArrayType>(to);
    // A read-only array never becomes a writable one; a writable one may
    // be read only (Numba's Array.can_convert_to).
    if (toArray && toArray->rank() == fromArray->rank() &&
        toArray->elementType() == fromArray->elementType() &&
        (toArray->isReadonly() || !fromArray->isReadonly()) &&
        (toArray->arrayLayout() == ArrayLayout::A ||
         toArray->arrayLayout() == fromArray->arrayLayout()))
      return Conversion::Safe;
    return std::nullopt;
  }
  if (const auto *fromTuple = llvm::dyn_cast<TupleType>(from)) {
    const auto *toTuple = llvm::dyn_cast<TupleType>(to);
    if (!toTuple || toTuple->size() != fromTuple->size())
      return std::nullopt;
    Conversion worst = Conversion::Exact;
    for (size_t i = 0; i < fromTuple->size(); ++i) {
      std::optional<Conversion> element =
          canConvert(fromTuple->elementTypes()[i], toTuple->elementTypes()[i]);
      if (!element)
        return std::nullopt;
      worst = std::max(worst, *element);
    }
    return worst;
  }
  // A str constant fills a unicode string element, a bytes constant a byte
  // string element (Numba's UnicodeCharSeq and CharSeq.can_convert_from).
  if (const auto *text = llvm::dyn_cast<StringLiteralType>(from))
    if (const auto *chars = llvm::dyn_cast<CharSequenceType>(to);
        chars && chars->isUnicode() != text->isBytes())
      return Conversion::Safe;
  return std::nullopt;
}

const Type *TypeContext::promoteNumbers(const Type *a, const Type *b) {
  // NumPy's promote_types, which Numba uses to unify numbers.
  auto plain = [](const Type *t) -> const Type * {
    if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(t))
      return literal->literalType();
    return t;
  };
  a = plain(a);
  b = plain(b);
  if (a == b)
    return a;
  auto rank = [](const Type *t) { // 0: int, 1: float, 2: complex
    return llvm::isa<IntegerType>(t) ? 0 : llvm::isa<FloatType>(t) ? 1 : 2;
  };
  if (rank(a) > rank(b))
    std::swap(a, b); // now rank(a) <= rank(b)

  if (const auto *ia = llvm::dyn_cast<IntegerType>(a)) {
    if (const auto *ib = llvm::dyn_cast<IntegerType>(b)) {
      if (ia->signedness() == ib->signedness())
        return ia->bitwidth() >= ib->bitwidth() ? ia : ib;
      const IntegerType *s = ia->signedness() ? ia : ib;
      const IntegerType *u = ia->signedness() ? ib : ia;
      if (s->bitwidth() > u->bitwidth())
        return s;
      if (u->bitwidth() == 64)
        return float64();
      return integer(std::max(s->bitwidth(), u->bitwidth() * 2), true);
    }
    // Integer with a float or complex: the smallest float wide enough for
    // the integer's range, then at least b's precision.
    unsigned intBits = ia->bitwidth();
    unsigned needFloat = intBits <= 8 ? 16 : intBits <= 16 ? 32 : 64;
    if (const auto *fb = llvm::dyn_cast<FloatType>(b))
      return floating(std::max(needFloat, fb->bitwidth()));
    unsigned complexBits = llvm::cast<ComplexType>(b)->bitwidth();
    return complex(std::max(needFloat <= 32 ? 64u : 128u, complexBits));
  }
  if (const auto *fa = llvm::dyn_cast<FloatType>(a)) {
    if (const auto *fb = llvm::dyn_cast<FloatType>(b))
      return fa->bitwidth() >= fb->bitwidth() ? fa : fb;
    unsigned complexBits = llvm::cast<ComplexType>(b)->bitwidth();
    return complex(std::max(fa->bitwidth() <= 32 ? 64u : 128u, complexBits));
  }
  const auto *ca = llvm::cast<ComplexType>(a);
  const auto *cb = llvm::cast<ComplexType>(b);
  return ca->bitwidth() >= cb->bitwidth() ? ca : cb;
}

const Type *TypeContext::optional(const Type *value) {
  value = unliteral(value);
  if (value == none() || llvm::isa<OptionalType>(value))
    return value;
  return intern<OptionalType>("optional:" + value->str(), value);
}

const Type *TypeContext::unify(const Type *a, const Type *b) {
  if (a == b)
    return a;
  // None and a value unify to an optional value (Numba's NoneType.unify
  // and Optional.unify), unless the value exists at compile time only.
  const auto *optionalA = llvm::dyn_cast<OptionalType>(a);
  const auto *optionalB = llvm::dyn_cast<OptionalType>(b);
  if (a == none() || b == none() || optionalA || optionalB) {
    const Type *valueA = optionalA ? optionalA->valueType() : a;
    const Type *valueB = optionalB ? optionalB->valueType() : b;
    const Type *value = valueA == none()   ? valueB
                        : valueB == none() ? valueA
                                           : unify(valueA, valueB);
    if (!value || value->isCompileTimeOnly())
      return nullptr;
    return optional(value);
  }
  if (a->isNumber() && b->isNumber()) {
    // numba-cuda's bfloat16 unifies with no other number.
    if (isBFloat16(a) || isBFloat16(b))
      return nullptr;
    return promoteNumbers(a, b);
  }
  if (const auto *arrayA = llvm::dyn_cast<ArrayType>(a)) {
    if (const auto *arrayB = llvm::dyn_cast<ArrayType>(b)) {
      if (arrayA->rank() == arrayB->rank() && arrayA->elementType() == arrayB->elementType())
        return array(arrayA->elementType(), arrayA->rank(),
                     arrayA->arrayLayout() == arrayB->arrayLayout() ? arrayA->arrayLayout()
                                                                    : ArrayLayout::A,
                     arrayA->isReadonly() || arrayB->isReadonly());
    }
  }
  if (const auto *tupleA = llvm::dyn_cast<TupleType>(a)) {
    const auto *tupleB = llvm::dyn_cast<TupleType>(b);
    if (tupleB && tupleA->size() == tupleB->size()) {
      std::vector<const Type *> elements;
      for (size_t i = 0; i < tupleA->size(); ++i) {
        const Type *element = unify(tupleA->elementTypes()[i], tupleB->elementTypes()[i]);
        if (!element)
          return nullptr;
        elements.push_back(element);
      }
      return tuple(elements);
    }
  }
  if (std::optional<Conversion> conversion = canConvert(a, b);
      conversion && *conversion <= Conversion::Safe)
    return b;
  if (std::optional<Conversion> conversion = canConvert(b, a);
      conversion && *conversion <= Conversion::Safe)
    return a;
  if (a->isLiteral() || b->isLiteral()) {
    const Type *plainA = unliteral(a);
    const Type *plainB = unliteral(b);
    if (plainA != a || plainB != b)
      return unify(plainA, plainB);
  }
  return nullptr;
}

} // namespace kiln
