//===- runtime/extension/argument_types.h - Types of kernel arguments -*- C++ -*-===//
//
// [Note: argument types]
// Dispatch compares the types of a call's arguments with the argument types
// of each compiled specialization, as Numba's dispatcher does, but on small
// flat records instead of type objects, so that the comparison allocates
// nothing. A type is a preorder sequence of TypeNodes: a scalar, an array or
// a record is one node; a tuple is a node followed by its elements' nodes.
//
// Element types are numbered: the fourteen scalars first (ScalarKind), then
// record types, interned by their layout key (Numba's record name without
// the alignment flag: "Record(s0[type=uint64;offset=0],...;16"), and
// fixed-width strings by their Numba name ("[unichr x 12]").
//
// Conversions follow Numba's casting rules: the graph the compiler uses
// (module/numba_scalars.def), closed the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::extension {

/// Numba's scalars, in module/numba_scalars.def's order.
enum class ScalarKind : uint8_t {
#define NUMBA_SCALAR(Id, name, size) Id,
#include "module/numba_scalars.def"
};
constexpr unsigned scalarKindCount = unsigned(ScalarKind::C128) + 1;

/// Numba's name: "int64", "float32", "bool".
const char *scalarName(ScalarKind kind);
unsigned scalarSize(ScalarKind kind);
bool scalarFromName(std::string_view name, ScalarKind &kind);
bool isIntegerKind(ScalarKind kind);
bool isComplexKind(ScalarKind kind);

/// From best to worst, as Numba rates them; None: no conversion.
enum class Conversion : uint8_t { Exact, Promote, Safe, Unsafe, None };
Conversion scalarConversion(ScalarKind from, ScalarKind to);

/// An element type: a ScalarKind below scalarKindCount, else a record or a
/// fixed-width string, interned by key.
using ElementId = uint16_t;
inline bool isRecordElement(ElementId id) {
  return id >= scalarKindCount;
}
/// The id of the record type with this layout key (interned; the GIL
/// serializes callers).
ElementId internRecord(std::string_view key);
/// The id of an element named by `key`: a record's layout key, or a
/// fixed-width string's Numba name ("[char x 12]", "[unichr x 12]").
ElementId internElementKey(std::string_view key);
/// The record's layout key.
const std::string &recordKey(ElementId id);
/// The id of the named tuple class `className` (interned as records are),
/// and back; plain tuples have element 0.
ElementId internNamedTuple(std::string_view className);
std::string namedTupleClass(ElementId id);
/// The id of the enum class `className` (an IntEnum if `isInt`), interned
/// as named tuple classes are, and back.
ElementId internEnumClass(std::string_view className, bool isInt);
std::string enumClassName(ElementId id);
bool isIntEnumClass(ElementId id);

/// The element type a PEP 3118 format describes ("<f", "Zd", "T{<Q:s0:...}"),
/// given the item size; false for formats dispatch cannot match (non-native
/// byte order, nested records, sub-arrays).
bool elementFromFormat(const char *format, size_t itemSize, ElementId &element);

/// The element of NumPy dtype code `code` ("<M8[D]", "<m8") when it is a
/// datetime64 or timedelta64 Numba has a type for (none for multiples of a
/// unit, "<m8[10s]", or another byte order). Their arrays give no buffer,
/// hence no PEP 3118 format.
bool dateTimeElementFromCode(std::string_view code, ElementId &element);

/// Pointer: a CPointer parameter (`element` the pointee's scalar kind),
/// which takes an integer address. Enum: a member of the enum class
/// `element`, followed by the node(s) of its value.
enum class TypeKind : uint8_t { Scalar, Array, Record, Tuple, Pointer, Enum, Unsupported };
enum class Layout : uint8_t { C, F, A };

struct TypeNode {
  TypeKind kind = TypeKind::Unsupported;
  /// Arrays: the layout Numba's typeof gives (C before F before A); in
  /// specializations, the layout of the signature.
  Layout layout = Layout::A;
  /// Arrays of arguments: whether they are C and F contiguous (both, for
  /// C-contiguous arrays of up to one dimension and for empty arrays).
  bool contiguousC = false;
  bool contiguousF = false;
  bool readonly = false;
  uint8_t ndim = 0;
  ElementId element = 0; ///< scalars, arrays, records; a named tuple's class
  uint16_t span = 1;     ///< nodes of this type, itself included (tuples: > 1)
  uint16_t count = 0;    ///< tuples: direct elements
};

/// How the argument type starting at `from` converts to the parameter type
/// at `to`: the worst conversion of any part.
Conversion convertType(const TypeNode *from, const TypeNode *to);

/// Numba's name of the type starting at `node`: "array(float32, 1d, C)",
/// "readonly array(int64, 2d, A)", "UniTuple(int64 x 2)".
void appendTypeName(std::string &out, const TypeNode *node);

} // namespace kiln::extension

namespace kiln::extension {

/// IEEE binary16 conversions (round to nearest even), for float16 scalars.
uint16_t halfFromDouble(double value);
double doubleFromHalf(uint16_t bits);

} // namespace kiln::extension
