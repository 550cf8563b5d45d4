//===- runtime/extension/argument_types.cpp - Types of kernel arguments ---===//

#include "runtime/extension/argument_types.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace kiln::extension {
namespace {

struct ScalarInfo {
  const char *name;
  unsigned size;
};

constexpr ScalarInfo scalarInfo[scalarKindCount] = {
#define NUMBA_SCALAR(Id, name, size) {name, size},
#include "module/numba_scalars.def"
};

/// A direct edge of Numba's casting graph.
struct CastingEdge {
  ScalarKind from, to;
  Conversion forward, backward;
};
using K = ScalarKind;
constexpr Conversion Promote = Conversion::Promote, Safe = Conversion::Safe,
                     Unsafe = Conversion::Unsafe, None = Conversion::None;
constexpr CastingEdge castingEdges[] = {
#define NUMBA_CAST(From, To, forward, backward) {K::From, K::To, forward, backward},
#include "module/numba_scalars.def"
};

/// The closure of the graph: a path converts as its worst edge, and two
/// types as their best path.
struct ConversionTable {
  Conversion table[scalarKindCount][scalarKindCount];
  ConversionTable() {
    for (auto &row : table)
      std::fill(std::begin(row), std::end(row), Conversion::None);
    for (unsigned i = 0; i < scalarKindCount; ++i)
      table[i][i] = Conversion::Exact;
    for (const CastingEdge &edge : castingEdges) {
      table[unsigned(edge.from)][unsigned(edge.to)] = edge.forward;
      if (edge.backward != None)
        table[unsigned(edge.to)][unsigned(edge.from)] = edge.backward;
    }
    for (unsigned via = 0; via < scalarKindCount; ++via)
      for (unsigned from = 0; from < scalarKindCount; ++from)
        for (unsigned to = 0; to < scalarKindCount; ++to) {
          Conversion first = table[from][via], second = table[via][to];
          if (first == None || second == None || from == to)
            continue;
          Conversion path = std::max(first, second);
          if (path < table[from][to])
            table[from][to] = path;
        }
  }
};

const ConversionTable conversions;

std::deque<std::string> &records() {
  static std::deque<std::string> interned;
  return interned;
}

/// One PEP 3118 scalar code (after any byte order character).
bool scalarFromCode(const char *&format, ScalarKind &kind) {
  switch (*format++) {
  case '?':
    kind = K::Bool;
    return true;
  case 'b':
    kind = K::I8;
    return true;
  case 'B':
    kind = K::U8;
    return true;
  case 'h':
    kind = K::I16;
    return true;
  case 'H':
    kind = K::U16;
    return true;
  case 'i':
    kind = K::I32;
    return true;
  case 'I':
    kind = K::U32;
    return true;
  case 'l':
  case 'q':
  case 'n':
    kind = K::I64;
    return true;
  case 'L':
  case 'Q':
  case 'N':
    kind = K::U64;
    return true;
  case 'e':
    kind = K::F16;
    return true;
  case 'f':
    kind = K::F32;
    return true;
  case 'd':
    kind = K::F64;
    return true;
  case 'Z':
    if (*format == 'f' || *format == 'd') {
      kind = *format++ == 'f' ? K::C64 : K::C128;
      return true;
    }
    return false;
  default:
    return false;
  }
}

/// Skips a native or little-endian byte order mark; false for big-endian.
bool nativeByteOrder(const char *&format) {
  if (*format == '>' || *format == '!')
    return false;
  if (*format == '@' || *format == '=' || *format == '<')
    ++format;
  return true;
}

/// A fixed-width string code after its count: "s" (bytes) or "w" (UCS4),
/// named as Numba names the element ("[char x 12]", "[unichr x 12]").
bool charSequenceFromCode(const char *&format, size_t count, std::string &name) {
  if ((*format != 's' && *format != 'w') || count == 0)
    return false;
  name = (*format++ == 'w' ? "[unichr x " : "[char x ") + std::to_string(count) + "]";
  return true;
}

bool recordFromFormat(const char *format, size_t itemSize, ElementId &element) {
  // T{<Q:s0:<Q:s1:} with padding as "4x" and array fields as "(3,2)<f:j:"
  std::string key = "Record(";
  size_t offset = 0;
  bool first = true;
  while (*format && *format != '}') {
    size_t repeat = 0;
    bool counted = false;
    while (*format >= '0' && *format <= '9') {
      repeat = repeat * 10 + size_t(*format++ - '0');
      counted = true;
    }
    if (*format == 'x') {
      offset += counted ? repeat : 1;
      ++format;
      continue;
    }
    // ":name:" after a field's type, appended to the key.
    auto fieldName = [&]() {
      if (*format != ':')
        return false;
      const char *name = ++format;
      while (*format && *format != ':')
        ++format;
      if (*format != ':')
        return false;
      key += first ? "" : ",";
      key.append(name, size_t(format - name));
      ++format;
      first = false;
      return true;
    };
    if (std::string charType; counted && charSequenceFromCode(format, repeat, charType)) {
      // 12w:y: a fixed-width string field.
      if (!fieldName())
        return false;
      key += "[type=" + charType + ";offset=" + std::to_string(offset) + "]";
      offset += repeat * (charType[1] == 'u' ? 4 : 1);
      continue;
    }
    if (counted && repeat != 1)
      return false; // a repeated field is a sub-array
    std::vector<size_t> shape;
    if (*format == '(') {
      ++format;
      while (*format >= '0' && *format <= '9') {
        size_t extent = 0;
        while (*format >= '0' && *format <= '9')
          extent = extent * 10 + size_t(*format++ - '0');
        shape.push_back(extent);
        if (*format == ',')
          ++format;
      }
      if (*format++ != ')' || shape.empty())
        return false;
    }
    ScalarKind kind;
    if (!nativeByteOrder(format) || !scalarFromCode(format, kind) || !fieldName())
      return false;
    // Numba's names: float32, nestedarray(float32, (3, 2)), nestedarray(int16, (3,)).
    std::string type = scalarName(kind);
    size_t bytes = scalarSize(kind);
    if (!shape.empty()) {
      std::string extents;
      for (size_t d = 0; d < shape.size(); ++d) {
        extents += (d ? ", " : "") + std::to_string(shape[d]);
        bytes *= shape[d];
      }
      type = "nestedarray(" + type + ", (" + extents + (shape.size() == 1 ? ",))" : "))");
    }
    key += "[type=" + type + ";offset=" + std::to_string(offset) + "]";
    offset += bytes;
  }
  if (*format != '}' || first)
    return false;
  key += ";" + std::to_string(itemSize);
  element = internRecord(key);
  return true;
}

} // namespace

const char *scalarName(ScalarKind kind) {
  return scalarInfo[unsigned(kind)].name;
}
unsigned scalarSize(ScalarKind kind) {
  return scalarInfo[unsigned(kind)].size;
}

bool scalarFromName(std::string_view name, ScalarKind &kind) {
  for (unsigned i = 0; i < scalarKindCount; ++i)
    if (name == scalarInfo[i].name) {
      kind = ScalarKind(i);
      return true;
    }
  if (name == "boolean") {
    kind = K::Bool;
    return true;
  }
  return false;
}

bool isIntegerKind(ScalarKind kind) {
  return kind >= K::I8 && kind <= K::U64;
}
bool isComplexKind(ScalarKind kind) {
  return kind == K::C64 || kind == K::C128;
}

Conversion scalarConversion(ScalarKind from, ScalarKind to) {
  return conversions.table[unsigned(from)][unsigned(to)];
}

ElementId internRecord(std::string_view key) {
  return internElementKey(key);
}

ElementId internElementKey(std::string_view key) {
  std::deque<std::string> &interned = records();
  for (size_t i = 0; i < interned.size(); ++i)
    if (interned[i] == key)
      return ElementId(scalarKindCount + i);
  interned.emplace_back(key);
  return ElementId(scalarKindCount + interned.size() - 1);
}

const std::string &recordKey(ElementId id) {
  return records()[id - scalarKindCount];
}

// Named tuple classes share the records' table, under a prefix of their own.
constexpr std::string_view namedTuplePrefix = "namedtuple ";

ElementId internNamedTuple(std::string_view className) {
  return internRecord(std::string(namedTuplePrefix) + std::string(className));
}

std::string namedTupleClass(ElementId id) {
  return recordKey(id).substr(namedTuplePrefix.size());
}

// Enum classes too, under one prefix per kind of enum.
constexpr std::string_view enumPrefix = "enum ";
constexpr std::string_view intEnumPrefix = "intenum ";

ElementId internEnumClass(std::string_view className, bool isInt) {
  return internRecord(std::string(isInt ? intEnumPrefix : enumPrefix) + std::string(className));
}

bool isIntEnumClass(ElementId id) {
  return recordKey(id).starts_with(intEnumPrefix);
}

std::string enumClassName(ElementId id) {
  return recordKey(id).substr(isIntEnumClass(id) ? intEnumPrefix.size() : enumPrefix.size());
}

bool elementFromFormat(const char *format, size_t itemSize, ElementId &element) {
  if (!format)
    return false;
  if (!nativeByteOrder(format))
    return false;
  if (format[0] == 'T' && format[1] == '{')
    return recordFromFormat(format + 2, itemSize, element);
  if (*format >= '1' && *format <= '9') {
    size_t count = 0;
    while (*format >= '0' && *format <= '9')
      count = count * 10 + size_t(*format++ - '0');
    std::string name;
    if (!charSequenceFromCode(format, count, name) || *format != '\0')
      return false;
    element = internElementKey(name);
    return true;
  }
  ScalarKind kind;
  if (!scalarFromCode(format, kind) || *format != '\0' || scalarSize(kind) != itemSize)
    return false;
  element = ElementId(kind);
  return true;
}

bool dateTimeElementFromCode(std::string_view code, ElementId &element) {
  if (code.size() < 3 || (code[0] != '<' && code[0] != '=') || (code[1] != 'M' && code[1] != 'm') ||
      code[2] != '8' || (code.size() > 3 && (code[3] != '[' || code.back() != ']')))
    return false;
  std::string_view unit = code.size() > 3 ? code.substr(4, code.size() - 5) : std::string_view();
  for (char c : unit)
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return false;
  std::string name = code[1] == 'M' ? "datetime64[" : "timedelta64[";
  name.append(unit);
  name += ']';
  element = internElementKey(name);
  return true;
}

Conversion convertType(const TypeNode *from, const TypeNode *to) {
  // An address is an integer: Numba passes a Python int as a CPointer.
  if (to->kind == TypeKind::Pointer && from->kind == TypeKind::Scalar &&
      !isRecordElement(from->element) && isIntegerKind(ScalarKind(from->element)))
    return Conversion::Safe;
  // An IntEnum member is an integer to integers, never better than a safe
  // conversion (Numba's IntEnumMember.can_convert_to).
  if (from->kind == TypeKind::Enum && isIntEnumClass(from->element) &&
      to->kind == TypeKind::Scalar && !isRecordElement(to->element) &&
      isIntegerKind(ScalarKind(to->element)))
    return std::max(convertType(from + 1, to), Conversion::Safe);
  if (from->kind != to->kind)
    return Conversion::None;
  switch (to->kind) {
  case TypeKind::Scalar:
    // datetime64 and timedelta64 (interned) convert to nothing else.
    if (isRecordElement(from->element) || isRecordElement(to->element))
      return from->element == to->element ? Conversion::Exact : Conversion::None;
    return scalarConversion(ScalarKind(from->element), ScalarKind(to->element));
  case TypeKind::Record:
    return from->element == to->element ? Conversion::Exact : Conversion::None;
  case TypeKind::Pointer:
    return from->element == to->element ? Conversion::Exact : Conversion::None;
  case TypeKind::Enum:
    return from->element == to->element ? convertType(from + 1, to + 1) : Conversion::None;
  case TypeKind::Array: {
    if (from->ndim != to->ndim || from->element != to->element)
      return Conversion::None;
    if (from->readonly && !to->readonly)
      return Conversion::None;
    Conversion conversion = from->readonly == to->readonly ? Conversion::Exact : Conversion::Safe;
    // Numba types an array C, else F, else A; an array may also be
    // contiguous the other way (1-d, or size-1 dimensions), which is as good
    // for the kernel but ranks after its own layout.
    if (to->layout == Layout::C) {
      if (!from->contiguousC)
        return Conversion::None;
      if (from->layout != Layout::C)
        conversion = std::max(conversion, Conversion::Promote);
    } else if (to->layout == Layout::F) {
      if (!from->contiguousF)
        return Conversion::None;
      if (from->layout != Layout::F)
        conversion = std::max(conversion, Conversion::Promote);
    } else if (from->layout != Layout::A) {
      conversion = std::max(conversion, Conversion::Safe);
    }
    return conversion;
  }
  case TypeKind::Tuple: {
    // A named tuple's class is part of its type.
    if (from->count != to->count || from->element != to->element)
      return Conversion::None;
    Conversion worst = Conversion::Exact;
    const TypeNode *fromElement = from + 1;
    const TypeNode *toElement = to + 1;
    for (unsigned i = 0; i < to->count; ++i) {
      worst = std::max(worst, convertType(fromElement, toElement));
      if (worst == Conversion::None)
        return worst;
      fromElement += fromElement->span;
      toElement += toElement->span;
    }
    return worst;
  }
  case TypeKind::Unsupported:
    break;
  }
  return Conversion::None;
}

namespace {

void appendElementName(std::string &out, ElementId element) {
  if (isRecordElement(element) && recordKey(element).starts_with("Record("))
    out += recordKey(element) + ")";
  else if (isRecordElement(element))
    out += recordKey(element); // a fixed-width string: "[unichr x 12]"
  else
    out += scalarName(ScalarKind(element));
}

} // namespace

void appendTypeName(std::string &out, const TypeNode *node) {
  switch (node->kind) {
  case TypeKind::Scalar:
  case TypeKind::Record:
    appendElementName(out, node->element);
    return;
  case TypeKind::Pointer:
    appendElementName(out, node->element);
    out += "*";
    return;
  case TypeKind::Enum: // IntEnum<int64>(Shape), as Numba prints it
    out += isIntEnumClass(node->element) ? "IntEnum<" : "Enum<";
    appendTypeName(out, node + 1);
    out += ">(" + enumClassName(node->element) + ")";
    return;
  case TypeKind::Array:
    if (node->readonly)
      out += "readonly ";
    out += "array(";
    appendElementName(out, node->element);
    out += ", " + std::to_string(node->ndim) + "d, ";
    out += node->layout == Layout::C ? "C)" : node->layout == Layout::F ? "F)" : "A)";
    return;
  case TypeKind::Tuple: {
    if (node->count == 0) {
      out += "Tuple()";
      return;
    }
    const TypeNode *element = node + 1;
    bool uniform = node->count > 0;
    std::string first;
    appendTypeName(first, element);
    std::string names = first;
    for (unsigned i = 1; i < node->count; ++i) {
      element += element->span;
      std::string name;
      appendTypeName(name, element);
      uniform = uniform && name == first;
      names += ", " + name;
    }
    if (node->element != 0)
      out +=
          namedTupleClass(node->element) +
          (uniform ? "(" + first + " x " + std::to_string(node->count) + ")" : "(" + names + ")");
    else if (uniform)
      out += "UniTuple(" + first + " x " + std::to_string(node->count) + ")";
    else
      out += "Tuple(" + names + ")";
    return;
  }
  case TypeKind::Unsupported:
    out += "?";
    return;
  }
}

} // namespace kiln::extension

namespace kiln::extension {

uint16_t halfFromDouble(double value) {
  float single = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &single, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) // inf or nan
    return uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  int halfExponent = int(exponent) - 127 + 15;
  if (halfExponent >= 31)
    return uint16_t(sign | 0x7c00u);
  if (halfExponent <= 0) {
    if (halfExponent < -10)
      return uint16_t(sign);
    mantissa |= 0x800000u;
    unsigned shift = unsigned(14 - halfExponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(halfExponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // may carry into the exponent, up to infinity: correct
  return uint16_t(sign | half);
}

double doubleFromHalf(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t single;
  if (exponent == 0x1f) {
    single = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      single = sign;
    } else {
      int shift = 0;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      single = sign | (uint32_t(127 - 15 - shift + 1) << 23) | (mantissa << 13);
    }
  } else {
    single = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &single, 4);
  return value;
}

} // namespace kiln::extension
