//===- ir/ir_parser_types.cpp - Types and constants in typed IR -----------===//
//
// Types as Type::str() writes them (scalars, arrays, tuples, records,
// optionals, enums, datetimes, vectors, pointers) and constants as
// ConstantValue::repr() writes them, with Python's spelling of numbers.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser_internal.h"

#include <llvm/ADT/StringSwitch.h>

#include <cmath>

namespace kiln::ir::reader {

bool Parser::type(Cursor &at, const Type *&result) {
  if (!baseType(at, result))
    return false;
  while (at.take("*")) // uint8*: a pointer to uint8 values
    result = types.pointer(result);
  return true;
}

bool Parser::baseType(Cursor &at, const Type *&result) {
  Cursor start = at;
  if (at.take("["))
    return charSequenceType(at, start, result);
  llvm::StringRef name = at.word();
  if (name == "none") {
    result = types.none();
  } else if (name == "bool") {
    result = types.boolean();
  } else if (name == "array") {
    return arrayType(at, /*readonly=*/false, result);
  } else if (name == "readonly") {
    Cursor arrayAt = at;
    if (at.word() != "array")
      return fail(arrayAt, "expected 'array' after 'readonly'");
    return arrayType(at, /*readonly=*/true, result);
  } else if (name == "UniTuple" || name == "Tuple") {
    return tupleType(at, name == "UniTuple", result);
  } else if (name == "Record") {
    return recordType(at, result);
  } else if (name == "OptionalType") {
    // OptionalType(int64): an int64 or None.
    const Type *value;
    if (!expect(at, "(") || !type(at, value) || !expect(at, ")"))
      return false;
    result = types.optional(value);
    return true;
  } else if (name == "Enum" || name == "IntEnum") {
    // Enum<int64>(Color): a member of the class Color, holding int64 values.
    const Type *value;
    if (!expect(at, "<") || !type(at, value) || !expect(at, ">") || !expect(at, "("))
      return false;
    Cursor classAt = at;
    llvm::StringRef className = at.word();
    if (className.empty())
      return fail(classAt, "expected the enum's class name");
    result = types.enumMember(className, value, name == "IntEnum");
    return expect(at, ")");
  } else if (name == "datetime64" || name == "timedelta64") {
    if (!expect(at, "["))
      return false;
    Cursor unitAt = at;
    llvm::StringRef unitName = at.word();
    std::optional<DateTimeUnit> unit = dateTimeUnitNamed(unitName);
    if (!unit)
      return fail(unitAt, "unknown datetime64 unit '" + unitName + "'");
    result = name == "datetime64" ? types.datetime(*unit) : types.timedelta(*unit);
    return expect(at, "]");
  } else if (name.consume_front("range_state_")) {
    const auto *element = llvm::dyn_cast_or_null<IntegerType>(types.scalarByName(name));
    if (!element)
      return fail(start, "'" + name + "' is not an integer type");
    result = types.range(element);
  } else if (auto [element, count] = name.rsplit('x'); !count.empty() && count.size() == 1 &&
                                                       count[0] >= '1' && count[0] <= '4' &&
                                                       types.scalarByName(element)) {
    // float32x4: a vector type
    result = types.vector(types.scalarByName(element), unsigned(count[0] - '0'));
  } else {
    result = types.scalarByName(name);
  }
  return result || fail(start, "unknown type '" + name + "'");
}

bool Parser::charSequenceType(Cursor &at, Cursor start, const Type *&result) {
  llvm::StringRef unit = at.word();
  unsigned count = 0;
  if (unit != "char" && unit != "unichr")
    return fail(start, "expected '[char x N]' or '[unichr x N]'");
  if (!expect(at, "x") || !unsignedValue(at, count) || !expect(at, "]"))
    return false;
  result = types.charSequence(count, unit == "unichr");
  return true;
}

bool Parser::arrayType(Cursor &at, bool readonly, const Type *&result) {
  const Type *dtype;
  unsigned ndim;
  if (!expect(at, "(") || !type(at, dtype) || !expect(at, ",") || !unsignedValue(at, ndim) ||
      !expect(at, "d") || !expect(at, ","))
    return false;
  Cursor layoutAt = at;
  llvm::StringRef layoutText = at.word();
  std::optional<ArrayLayout> layout = llvm::StringSwitch<std::optional<ArrayLayout>>(layoutText)
                                          .Case("C", ArrayLayout::C)
                                          .Case("F", ArrayLayout::F)
                                          .Case("A", ArrayLayout::A)
                                          .Default(std::nullopt);
  if (!layout)
    return fail(layoutAt, "expected an array layout (C, F or A)");
  result = types.array(dtype, ndim, *layout, readonly);
  return expect(at, ")");
}

bool Parser::tupleType(Cursor &at, bool homogeneous, const Type *&result) {
  if (!expect(at, "("))
    return false;
  std::vector<const Type *> elements;
  if (homogeneous) {
    const Type *element;
    unsigned count = 0;
    if (!type(at, element) || !expect(at, "x") || !unsignedValue(at, count) || !expect(at, ")"))
      return false;
    elements.assign(count, element);
  } else if (!at.take(")")) {
    do {
      const Type *element;
      if (!type(at, element))
        return false;
      elements.push_back(element);
    } while (at.take(","));
    if (!expect(at, ")"))
      return false;
  }
  result = types.tuple(elements);
  return true;
}

bool Parser::recordType(Cursor &at, const Type *&result) {
  if (!expect(at, "("))
    return false;
  std::vector<RecordType::Field> fields;
  unsigned alignment = 1;
  do {
    RecordType::Field field;
    field.name = at.word().str();
    if (field.name.empty())
      return fail(at, "expected a record field name");
    if (!expect(at, "[") || !expect(at, "type="))
      return false;
    if (at.take("nestedarray(")) {
      // nestedarray(float32, (3, 2)) or nestedarray(int16, (3,))
      if (!type(at, field.type) || !expect(at, ",") || !expect(at, "("))
        return false;
      do {
        unsigned extent = 0;
        if (!unsignedValue(at, extent))
          return false;
        field.shape.push_back(extent);
      } while (at.take(",") && !at.peek(")"));
      if (!expect(at, ")") || !expect(at, ")"))
        return false;
    } else if (!type(at, field.type)) {
      return false;
    }
    if (!expect(at, ";") || !expect(at, "offset=") || !unsignedValue(at, field.offset) ||
        !expect(at, "]"))
      return false;
    alignment = std::max(alignment, static_cast<unsigned>(itemAlignment(field.type)));
    fields.push_back(std::move(field));
  } while (at.take(","));
  unsigned size;
  if (!expect(at, ";") || !unsignedValue(at, size) || !expect(at, ";"))
    return false;
  bool aligned = at.take("True");
  if (!aligned && !expect(at, "False"))
    return false;
  result = types.record(std::move(fields), size, aligned ? alignment : 1, aligned);
  return expect(at, ")");
}

std::optional<double> Parser::scanFloat(llvm::StringRef &text) {
  llvm::StringRef start = text;
  bool negative = text.consume_front("-");
  double magnitude;
  if (text.consume_front("nan")) {
    magnitude = std::nan("");
  } else if (text.consume_front("inf")) {
    magnitude = INFINITY;
  } else {
    size_t length = 0;
    while (
        length < text.size() &&
        (llvm::isDigit(text[length]) || text[length] == '.' || text[length] == 'e' ||
         ((text[length] == '+' || text[length] == '-') && length > 0 && text[length - 1] == 'e')))
      ++length;
    if (length == 0 || text.take_front(length).getAsDouble(magnitude)) {
      text = start;
      return std::nullopt;
    }
    text = text.drop_front(length);
  }
  return negative ? -magnitude : magnitude;
}

bool Parser::numberLiteral(Cursor &at, ConstantValue &result) {
  at.skipSpace();
  llvm::StringRef text = at.rest;
  bool negative = text.consume_front("-");
  size_t digits = 0;
  while (digits < text.size() && llvm::isDigit(text[digits]))
    ++digits;
  llvm::StringRef afterDigits = text.drop_front(digits);
  bool isInteger =
      digits > 0 && (afterDigits.empty() || !llvm::StringRef(".ej").contains(afterDigits.front()));
  if (isInteger) {
    uint64_t magnitude;
    if (text.take_front(digits).getAsInteger(10, magnitude))
      return fail(at, "integer constant out of range");
    if (negative && magnitude > uint64_t(INT64_MAX) + 1)
      return fail(at, "integer constant out of range");
    result = ConstantValue::integer(negative ? -Int128(magnitude) : Int128(magnitude));
    at.rest = afterDigits;
    return true;
  }
  std::optional<double> value = scanFloat(at.rest);
  if (!value)
    return fail(at, "expected a constant");
  result = at.rest.consume_front("j") ? ConstantValue::complex(0.0, *value)
                                      : ConstantValue::floating(*value);
  return true;
}

bool Parser::constantValue(Cursor &at, ConstantValue &result) {
  if (at.take("None")) {
    result = ConstantValue::none();
    return true;
  }
  if (at.take("True") || at.take("False")) {
    result = ConstantValue::boolean(at.rest.data()[-2] == 'u');
    return true;
  }
  if (at.peek("'") || at.peek("\"")) {
    std::string text;
    if (!quoted(at, text))
      return false;
    result = ConstantValue::string(std::move(text));
    return true;
  }
  if (at.peek("b'") || at.peek("b\"")) {
    at.rest = at.rest.drop_front();
    std::string bytes;
    if (!quoted(at, bytes))
      return false;
    result = ConstantValue::bytes(std::move(bytes));
    return true;
  }
  if (at.take("np.")) {
    Cursor typeAt = at;
    llvm::StringRef name = at.word();
    const Type *dtype = name == "bool" ? types.boolean() : types.scalarByName(name);
    if (!dtype)
      return fail(typeAt, "unknown NumPy scalar type '" + name + "'");
    ConstantValue value = ConstantValue::none();
    if (!expect(at, "(") || !constantValue(at, value) || !expect(at, ")"))
      return false;
    result = ConstantValue::numpyScalar(value, dtype);
    return true;
  }
  if (at.take("("))
    return tupleOrComplex(at, result);
  return numberLiteral(at, result);
}

bool Parser::tupleOrComplex(Cursor &at, ConstantValue &result) {
  at.skipSpace();
  llvm::StringRef text = at.rest;
  std::optional<double> real = scanFloat(text);
  if (real && (text.starts_with("+") || text.starts_with("-"))) {
    bool negative = text.front() == '-';
    text = text.drop_front();
    std::optional<double> imag = scanFloat(text);
    if (imag && text.consume_front("j)")) {
      at.rest = text;
      result = ConstantValue::complex(*real, negative ? -*imag : *imag);
      return true;
    }
  }
  std::vector<ConstantValue> elements;
  while (!at.take(")")) {
    ConstantValue element = ConstantValue::none();
    if (!constantValue(at, element))
      return false;
    elements.push_back(std::move(element));
    if (!at.take(",") && !at.peek(")"))
      return fail(at, "expected ',' or ')' in a tuple");
  }
  result = ConstantValue::tuple(std::move(elements));
  return true;
}

} // namespace kiln::ir::reader
