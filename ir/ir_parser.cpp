//===- ir/ir_parser.cpp - Reading printed typed IR ------------------------===//
//
// The text is line-oriented (see [Note: typed IR text] in ir_printer.cpp):
// a module line, then per function a header line, block labels, one
// instruction or terminator per line and a closing brace. A `#` starts a
// comment outside quotes, so hand-written tests can explain themselves.
//
// Values may be used before the line defining them (phis, and blocks
// printed before the blocks that dominate them), so uses are patched when
// the function ends; calls are patched when the module ends.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSwitch.h>

#include <cmath>

namespace kiln::ir {

namespace {

/// The unparsed rest of one line, and where it is.
struct Cursor {
  llvm::StringRef rest;
  unsigned line = 0;
  const char *lineStart = nullptr;

  unsigned column() const { return unsigned(rest.data() - lineStart) + 1; }
  void skipSpace() { rest = rest.ltrim(" \t"); }
  bool atEnd() {
    skipSpace();
    return rest.empty();
  }
  /// Consumes `token` after spaces, if it is next.
  bool take(llvm::StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }
  bool peek(llvm::StringRef token) {
    skipSpace();
    return rest.starts_with(token);
  }
  /// An identifier, allowing dots (opcode and intrinsic spellings have them).
  llvm::StringRef word() {
    skipSpace();
    size_t length = 0;
    while (length < rest.size() &&
           (llvm::isAlnum(rest[length]) || rest[length] == '_' || rest[length] == '.'))
      ++length;
    llvm::StringRef result = rest.take_front(length);
    rest = rest.drop_front(length);
    return result;
  }
  /// Characters up to a space, a comma, an opening parenthesis or the end.
  llvm::StringRef symbol() {
    skipSpace();
    size_t length = rest.find_first_of(" \t,(");
    llvm::StringRef result = rest.take_front(length);
    rest = rest.drop_front(result.size());
    return result;
  }
};

/// Strips a comment (a `#` outside quotes) and trailing spaces.
llvm::StringRef withoutComment(llvm::StringRef line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#') {
      return line.take_front(i).rtrim();
    }
  }
  return line.rtrim();
}

/// Which operations have a result is decided by the line (`%N = `); these
/// are the ones whose operands end in a text.
bool takesTextOperand(Opcode opcode) {
  return opcode == Opcode::Print || opcode == Opcode::Assert;
}

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef bufferName, TypeContext &types)
      : bufferName(bufferName), types(types) {
    text.split(lines, '\n');
    for (size_t i = 0; i < size_t(Opcode::Assert) + 1; ++i)
      opcodes[spelling(Opcode(i))] = Opcode(i);
    for (size_t i = 0; i < size_t(Intrinsic::RoundDigits) + 1; ++i)
      intrinsics[spelling(Intrinsic(i))] = Intrinsic(i);
  }

  llvm::Expected<std::unique_ptr<Module>> run() {
    module = std::make_unique<Module>();
    if (!parseModule())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), failure);
    return std::move(module);
  }

private:
  //===--- Errors ---------------------------------------------------------===//

  /// Records the first error, at the first character of what `at` holds.
  bool fail(Cursor at, const llvm::Twine &message) {
    at.skipSpace();
    if (failure.empty())
      failure = (bufferName + ":" + llvm::Twine(at.line) + ":" + llvm::Twine(at.column()) + ": " +
                 message)
                    .str();
    return false;
  }
  bool expect(Cursor &at, llvm::StringRef token) {
    return at.take(token) || fail(at, "expected '" + token + "'");
  }

  //===--- Lines ----------------------------------------------------------===//

  /// The next line with something on it, or false at the end of the text.
  bool nextLine(Cursor &cursor) {
    while (lineIndex < lines.size()) {
      llvm::StringRef line = lines[lineIndex++];
      cursor = Cursor{withoutComment(line), unsigned(lineIndex), line.data()};
      if (!cursor.atEnd())
        return true;
    }
    return false;
  }

  bool endOfLine(Cursor &at) { return at.atEnd() || fail(at, "unexpected '" + at.rest + "'"); }

  //===--- Literals -------------------------------------------------------===//

  bool number(Cursor &at, uint64_t &result) {
    at.skipSpace();
    size_t length = 0;
    while (length < at.rest.size() && llvm::isDigit(at.rest[length]))
      ++length;
    if (length == 0 || at.rest.take_front(length).getAsInteger(10, result))
      return fail(at, "expected a number");
    at.rest = at.rest.drop_front(length);
    return true;
  }

  bool unsignedValue(Cursor &at, unsigned &result) {
    uint64_t wide = 0;
    if (!number(at, wide))
      return false;
    if (wide > UINT32_MAX)
      return fail(at, "number too large");
    result = unsigned(wide);
    return true;
  }

  bool signedValue(Cursor &at, int &result) {
    bool negative = at.take("-");
    unsigned magnitude;
    if (!unsignedValue(at, magnitude))
      return false;
    result = negative ? -int(magnitude) : int(magnitude);
    return true;
  }

  /// A string as quotedString() writes it, with either quote.
  bool quoted(Cursor &at, std::string &result) {
    at.skipSpace();
    if (at.rest.empty() || (at.rest[0] != '\'' && at.rest[0] != '"'))
      return fail(at, "expected a quoted string");
    char quote = at.rest[0];
    result.clear();
    for (size_t i = 1; i < at.rest.size(); ++i) {
      char c = at.rest[i];
      if (c == quote) {
        at.rest = at.rest.drop_front(i + 1);
        return true;
      }
      if (c != '\\') {
        result += c;
        continue;
      }
      if (++i == at.rest.size())
        break;
      switch (at.rest[i]) {
      case 'n':
        result += '\n';
        break;
      case 'r':
        result += '\r';
        break;
      case 't':
        result += '\t';
        break;
      case 'x': {
        unsigned code;
        if (i + 2 >= at.rest.size() || at.rest.substr(i + 1, 2).getAsInteger(16, code))
          return fail(at, "bad \\x escape");
        result += char(code);
        i += 2;
        break;
      }
      default:
        result += at.rest[i];
      }
    }
    return fail(at, "unterminated string");
  }

  bool location(Cursor &at, Location &result) {
    if (!at.take("loc("))
      return true;
    return unsignedValue(at, result.line) && expect(at, ":") && unsignedValue(at, result.column) &&
           expect(at, ")");
  }

  //===--- Types ----------------------------------------------------------===//

  bool type(Cursor &at, const Type *&result) {
    if (!baseType(at, result))
      return false;
    while (at.take("*")) // uint8*: a pointer to uint8 values
      result = types.pointer(result);
    return true;
  }

  bool baseType(Cursor &at, const Type *&result) {
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

  /// [char x 12] or [unichr x 12], after the "[".
  bool charSequenceType(Cursor &at, Cursor start, const Type *&result) {
    llvm::StringRef unit = at.word();
    unsigned count = 0;
    if (unit != "char" && unit != "unichr")
      return fail(start, "expected '[char x N]' or '[unichr x N]'");
    if (!expect(at, "x") || !unsignedValue(at, count) || !expect(at, "]"))
      return false;
    result = types.charSequence(count, unit == "unichr");
    return true;
  }

  bool arrayType(Cursor &at, bool readonly, const Type *&result) {
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

  bool tupleType(Cursor &at, bool homogeneous, const Type *&result) {
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

  /// Record(s0[type=uint64;offset=0],s1[type=uint64;offset=8];16;True)
  bool recordType(Cursor &at, const Type *&result) {
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

  //===--- Constants ------------------------------------------------------===//

  /// Consumes a float as Python's repr writes it ("1.5", "-2e-05", "nan",
  /// "-inf"), or an int's digits, which read as a float too.
  static std::optional<double> scanFloat(llvm::StringRef &text) {
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

  /// A number as Python's repr writes it: an int, a float (with '.', 'e',
  /// 'nan' or 'inf') or, followed by 'j', an imaginary number.
  bool numberLiteral(Cursor &at, ConstantValue &result) {
    at.skipSpace();
    llvm::StringRef text = at.rest;
    bool negative = text.consume_front("-");
    size_t digits = 0;
    while (digits < text.size() && llvm::isDigit(text[digits]))
      ++digits;
    llvm::StringRef afterDigits = text.drop_front(digits);
    bool isInteger = digits > 0 &&
                     (afterDigits.empty() || !llvm::StringRef(".ej").contains(afterDigits.front()));
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

  bool constantValue(Cursor &at, ConstantValue &result) {
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

  /// After '(': a tuple, or a complex number written (real+imagj).
  bool tupleOrComplex(Cursor &at, ConstantValue &result) {
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

  //===--- Values ---------------------------------------------------------===//

  /// Where a use of a value not yet defined goes, once it is.
  struct PendingUse {
    unsigned id = 0;
    Cursor at;
    Instruction *instruction; // operands[operand] of it, or
    size_t operand;
    Terminator *terminator; // the terminator's value
  };

  /// A value. A use of %N before its definition gives null and sets
  /// `forwardId`, for the caller to record in `pending`.
  bool value(Cursor &at, Value *&result, unsigned &forwardId) {
    forwardId = ~0u;
    at.skipSpace();
    Cursor start = at;
    if (at.take("%")) {
      unsigned id = 0;
      if (!unsignedValue(at, id))
        return false;
      auto found = values.find(id);
      result = found == values.end() ? nullptr : found->second;
      if (!result)
        forwardId = id;
      return true;
    }
    for (auto [spelling, cause] : {std::pair{"undef(", Undefined::Cause::Unassigned},
                                   std::pair{"deleted(", Undefined::Cause::Deleted}}) {
      if (!at.take(spelling))
        continue;
      auto [variable, rest] = at.rest.split(')');
      at.rest = llvm::StringRef(variable.end(), rest.end() - variable.end());
      const Type *valueType;
      if (!expect(at, ")") || !expect(at, ":") || !type(at, valueType))
        return false;
      result = function->undefined(valueType, variable, cause);
      return true;
    }
    ConstantValue constant = ConstantValue::none();
    const Type *constantType;
    if (!constantValue(at, constant))
      return false;
    if (!at.rest.consume_front(":"))
      return fail(at, "expected ':' and the constant's type");
    if (!type(at, constantType))
      return false;
    if (const auto *member = llvm::dyn_cast<EnumMemberType>(constantType))
      constant = ConstantValue::enumMember(std::move(constant), member->className().str(), "",
                                           member->isIntEnum());
    bool isText = constant.kind() == ConstantValue::Kind::String ||
                  constant.kind() == ConstantValue::Kind::Bytes;
    const auto *chars = llvm::dyn_cast<CharSequenceType>(constantType);
    if (isText &&
        (!chars || chars->isUnicode() != (constant.kind() == ConstantValue::Kind::String)))
      return fail(start, "a string is a run-time value only as a fixed-width string of its kind "
                         "(a str as [unichr x N], a bytes as [char x N])");
    result = function->constant(constantType, std::move(constant));
    return true;
  }

  bool operand(Cursor &at, Instruction &instruction) {
    Cursor start = at;
    Value *result;
    unsigned forwardId;
    if (!value(at, result, forwardId))
      return false;
    if (forwardId != ~0u)
      pending.push_back({forwardId, start, &instruction, instruction.operands.size(), nullptr});
    instruction.operands.push_back(result);
    return true;
  }

  bool terminatorValue(Cursor &at, Terminator &terminator) {
    Cursor start = at;
    unsigned forwardId;
    if (!value(at, terminator.value, forwardId))
      return false;
    if (forwardId != ~0u)
      pending.push_back({forwardId, start, nullptr, 0, &terminator});
    return true;
  }

  bool define(const Cursor &at, unsigned id, Value *definition) {
    if (!values.try_emplace(id, definition).second)
      return fail(at, "%" + llvm::Twine(id) + " is defined twice");
    return true;
  }

  bool resolvePendingUses() {
    for (PendingUse &use : pending) {
      Value *definition = values.lookup(use.id);
      if (!definition)
        return fail(use.at, "%" + llvm::Twine(use.id) + " is used but never defined");
      if (use.instruction)
        use.instruction->operands[use.operand] = definition;
      else
        use.terminator->value = definition;
    }
    pending.clear();
    return true;
  }

  //===--- Blocks ---------------------------------------------------------===//

  Block *blockNumbered(unsigned id) {
    while (function->blocks.size() <= id)
      function->addBlock();
    return function->blocks[id].get();
  }

  bool blockReference(Cursor &at, Block *&result) {
    at.skipSpace();
    Cursor start = at;
    if (!expect(at, "bb"))
      return false;
    unsigned id = 0;
    if (!unsignedValue(at, id))
      return false;
    if (id > 100000)
      return fail(at, "block number too large");
    result = blockNumbered(id);
    referencedBlocks.push_back({id, start});
    return true;
  }

  //===--- Instructions ---------------------------------------------------===//

  bool operationData(Cursor &at, Instruction &instruction) {
    switch (instruction.opcode) {
    case Opcode::Intrinsic:
      return intrinsicName(at, instruction);
    case Opcode::Call: {
      if (!expect(at, "@"))
        return false;
      llvm::StringRef symbol = at.symbol();
      pendingCalls.push_back({symbol.str(), at, &instruction});
      return true;
    }
    case Opcode::TupleGet:
    case Opcode::ArrayShape:
    case Opcode::ArrayStride:
    case Opcode::ArrayComplexPart:
      return unsignedValue(at, instruction.index);
    case Opcode::RecordGet:
    case Opcode::RecordSet:
    case Opcode::LibdeviceCall:
      if (!expect(at, "."))
        return false;
      instruction.text = at.word().str();
      return !instruction.text.empty() || fail(at, "expected a name");
    case Opcode::SharedArray:
    case Opcode::LocalArray:
      if (!expect(at, "("))
        return false;
      do {
        uint64_t extent = 0;
        if (!number(at, extent))
          return false;
        instruction.shape.push_back(extent);
      } while (at.take(","));
      return expect(at, ")");
    case Opcode::ArrayAt: {
      // 140737488355328 (4, 4) strides (32, 8)
      if (!number(at, instruction.address) || !expect(at, "("))
        return false;
      while (!at.take(")")) {
        uint64_t extent = 0;
        if ((!instruction.shape.empty() && !expect(at, ",")) || !number(at, extent))
          return false;
        instruction.shape.push_back(extent);
      }
      if (!expect(at, "strides") || !expect(at, "("))
        return false;
      while (!at.take(")")) {
        if (!instruction.strides.empty() && !expect(at, ","))
          return false;
        bool negative = at.take("-");
        uint64_t magnitude = 0;
        if (!number(at, magnitude) || magnitude > uint64_t(INT64_MAX))
          return magnitude > uint64_t(INT64_MAX) ? fail(at, "stride too large") : false;
        instruction.strides.push_back(negative ? -int64_t(magnitude) : int64_t(magnitude));
      }
      return true;
    }
    case Opcode::ConstArray: {
      // (4, 4) x"00ff...": a 0-d array has the shape ().
      if (!expect(at, "("))
        return false;
      while (!at.take(")")) {
        uint64_t extent = 0;
        if (!instruction.shape.empty() && !expect(at, ","))
          return false;
        if (!number(at, extent))
          return false;
        instruction.shape.push_back(extent);
      }
      if (!expect(at, "x\""))
        return false;
      size_t end = at.rest.find('"');
      std::string bytes;
      if (end == llvm::StringRef::npos || !llvm::tryGetFromHex(at.rest.take_front(end), bytes))
        return fail(at, "expected the array's bytes as hexadecimal digits in quotes");
      at.rest = at.rest.drop_front(end + 1);
      instruction.data = std::make_shared<const std::string>(std::move(bytes));
      return true;
    }
    default:
      return true;
    }
  }

  bool intrinsicName(Cursor &at, Instruction &instruction) {
    Cursor start = at;
    llvm::StringRef name = at.word();
    auto found = intrinsics.find(name);
    if (found == intrinsics.end()) {
      auto [base, dimension] = name.rsplit('.');
      found = intrinsics.find(base);
      size_t axis = llvm::StringRef("xyz").find(dimension);
      if (found == intrinsics.end() || dimension.size() != 1 || axis == llvm::StringRef::npos)
        return fail(start, "unknown intrinsic '" + name + "'");
      instruction.index = unsigned(axis);
    } else if (at.take("[") && (!unsignedValue(at, instruction.index) || !expect(at, "]"))) {
      return false;
    }
    instruction.intrinsic = found->second;
    return true;
  }

  bool operands(Cursor &at, Instruction &instruction) {
    if (at.atEnd() || at.peek(":") || at.peek("loc(") || at.peek("["))
      return true;
    bool textAllowed = takesTextOperand(instruction.opcode);
    // Print items are separated by "," or, when joined, by "++".
    bool joined = false;
    auto nextOperand = [&] {
      joined = instruction.opcode == Opcode::Print && at.take("++");
      return joined || at.take(",");
    };
    do {
      if (textAllowed && (at.peek("'") || at.peek("\""))) {
        std::string text;
        if (!quoted(at, text))
          return false;
        if (instruction.opcode == Opcode::Assert)
          instruction.text = std::move(text);
        else
          instruction.printItems.push_back({PrintItem::Kind::Text, std::move(text), joined});
        continue;
      }
      if (!operand(at, instruction))
        return false;
      if (instruction.opcode == Opcode::Print)
        instruction.printItems.push_back({PrintItem::Kind::Value, "", joined});
      if (instruction.opcode == Opcode::Phi) {
        Block *from;
        if (!expect(at, "from") || !blockReference(at, from))
          return false;
        instruction.incoming.push_back(from);
      }
    } while (nextOperand());
    return true;
  }

  bool viewItems(Cursor &at, Instruction &instruction) {
    if (!at.take("["))
      return true;
    do {
      ViewItem item{!at.take("i")};
      if (item.isSlice) {
        item.hasStart = at.take("a");
        if (!expect(at, ":"))
          return false;
        item.hasStop = at.take("b");
        item.hasStep = at.take(":") && at.take("c");
      }
      instruction.viewItems.push_back(item);
    } while (at.take(","));
    return expect(at, "]");
  }

  bool instructionLine(Cursor &at, Block &block) {
    std::optional<unsigned> id;
    Cursor definitionAt = at;
    if (at.take("%")) {
      unsigned number;
      if (!unsignedValue(at, number) || !expect(at, "="))
        return false;
      id = number;
    }
    Cursor opcodeAt = at;
    llvm::StringRef spellingText = at.word();
    auto found = opcodes.find(spellingText);
    if (found == opcodes.end())
      return fail(opcodeAt, "unknown operation '" + spellingText + "'");
    // The result type ends the line (before its location), after " : ",
    // which nothing earlier on the line has unquoted but an assert message.
    const Type *resultType = nullptr;
    Cursor trailer = at;
    if (id) {
      size_t separator = at.rest.rfind(" : ");
      if (separator == llvm::StringRef::npos)
        return fail(at, "expected ' : ' and the result type");
      trailer.rest = at.rest.drop_front(separator + 3);
      at.rest = at.rest.take_front(separator);
      if (!type(trailer, resultType))
        return false;
    }
    Instruction *instruction =
        function->addInstruction(&block, found->second, resultType, Location(), id);
    if (id && !define(definitionAt, *id, instruction))
      return false;
    if (!operationData(at, *instruction) || !operands(at, *instruction) ||
        !viewItems(at, *instruction))
      return false;
    if (id && !endOfLine(at))
      return false;
    return location(id ? trailer : at, instruction->location) && endOfLine(id ? trailer : at);
  }

  /// Reads a terminator if the line is one; `isTerminator` says whether.
  bool terminatorLine(Cursor &at, Block &block, bool &isTerminator) {
    Terminator &t = block.terminator;
    Cursor probe = at;
    llvm::StringRef keyword = probe.word();
    isTerminator =
        keyword == "jump" || keyword == "branch" || keyword == "return" || keyword == "raise";
    if (!isTerminator)
      return true;
    at = probe;
    if (keyword == "jump") {
      t.kind = Terminator::Kind::Jump;
      if (!blockReference(at, t.target))
        return false;
    } else if (keyword == "branch") {
      t.kind = Terminator::Kind::Branch;
      if (!terminatorValue(at, t) || !expect(at, ",") || !blockReference(at, t.target) ||
          !expect(at, ",") || !blockReference(at, t.falseTarget))
        return false;
    } else if (keyword == "return") {
      t.kind = Terminator::Kind::Return;
      if (!at.atEnd() && !at.peek("loc(") && !terminatorValue(at, t))
        return false;
    } else {
      t.kind = Terminator::Kind::Raise;
      t.exceptionClass = at.word().str();
      if (t.exceptionClass.empty())
        return fail(at, "expected an exception class");
      if (!expect(at, "(") || !quoted(at, t.message) || !expect(at, ")"))
        return false;
    }
    return location(at, t.location) && endOfLine(at);
  }

  //===--- Functions ------------------------------------------------------===//

  bool options(Cursor &at, JitOptions &result) {
    if (!at.take("options("))
      return true;
    do {
      Cursor nameAt = at;
      llvm::StringRef name = at.word();
      bool ok = true;
      const JitFlag *flag =
          llvm::find_if(jitFlags, [&](const JitFlag &f) { return name == f.spelling; });
      if (flag != std::end(jitFlags))
        result.*flag->member = flag->whenWritten;
      else if (name == "max_registers") {
        unsigned count = 0;
        ok = expect(at, "=") && unsignedValue(at, count);
        result.maxRegisters = count;
      } else if (name == "lto") {
        ok = expect(at, "=");
        result.lto = at.take("True");
        ok = ok && (*result.lto || expect(at, "False"));
      } else if (name == "fastmath_flags") {
        ok = expect(at, "=") && expect(at, "(");
        while (ok && !at.take(")")) {
          llvm::StringRef fastmathFlag = at.word();
          ok = !fastmathFlag.empty() || fail(at, "expected a fast-math flag");
          result.fastmathFlags.push_back(fastmathFlag.str());
          at.take(",");
        }
      } else if (name == "launch_bounds") {
        ok = expect(at, "=") && expect(at, "(");
        while (ok && !at.take(")")) {
          unsigned bound;
          ok = unsignedValue(at, bound);
          result.launchBounds.push_back(bound);
          at.take(",");
        }
      } else if (name == "link") {
        ok = expect(at, "=") && expect(at, "(");
        while (ok && !at.take(")")) {
          std::string file;
          ok = quoted(at, file);
          result.link.push_back(std::move(file));
          at.take(",");
        }
      } else if (name == "carveout") {
        int carveout = 0;
        ok = expect(at, "=") && signedValue(at, carveout);
        result.sharedMemoryCarveout = carveout;
      } else {
        return fail(nameAt, "unknown option '" + name + "'");
      }
      if (!ok)
        return false;
    } while (at.take(","));
    return expect(at, ")");
  }

  bool functionAttributes(Cursor &at) {
    for (;;) {
      if (at.take("synchronizes")) {
        function->synchronizes = true;
      } else if (at.take("raises")) {
        function->raises = true;
      } else if (at.take("cooperative")) {
        function->cooperative = true;
      } else if (at.take("abi(c)")) {
        function->cAbi = true;
      } else if (at.take("origin(")) {
        Cursor originAt = at;
        llvm::StringRef origin = at.word();
        if (origin == "ufunc_loop")
          function->origin = Function::Origin::UfuncLoop;
        else if (origin == "reduction_loop")
          function->origin = Function::Origin::ReductionLoop;
        else if (origin != "source")
          return fail(originAt, "unknown origin '" + origin + "'");
        if (!expect(at, ")"))
          return false;
      } else if (at.take("name(")) {
        if (!quoted(at, function->sourceName) || !expect(at, ")"))
          return false;
      } else if (at.take("path(")) {
        if (!quoted(at, function->path) || !expect(at, ")"))
          return false;
      } else if (at.take("hash(")) {
        if (!quoted(at, function->semanticHash) || !expect(at, ")"))
          return false;
      } else if (at.peek("loc(")) {
        if (!location(at, function->location))
          return false;
      } else if (at.peek("options(")) {
        if (!options(at, function->options))
          return false;
      } else {
        return true;
      }
    }
  }

  /// `kernel @symbol(T %0 name, ...) -> R attributes {`; returns whether
  /// the function has a body.
  bool functionHeader(Cursor &at, bool &hasBody) {
    Cursor kindAt = at;
    llvm::StringRef kind = at.word();
    if (kind == "kernel")
      function->kind = Function::Kind::Kernel;
    else if (kind == "function")
      function->kind = Function::Kind::Device;
    else if (kind == "declare")
      function->kind = Function::Kind::External;
    else
      return fail(kindAt, "expected 'kernel', 'function' or 'declare'");
    if (!expect(at, "@"))
      return false;
    function->symbol = at.symbol().str();
    if (function->symbol.empty())
      return fail(at, "expected the function's symbol");
    if (!expect(at, "("))
      return false;
    if (!at.take(")")) {
      do {
        const Type *argumentType;
        unsigned id = 0;
        Cursor argumentAt = at;
        if (!type(at, argumentType) || !expect(at, "%") || !unsignedValue(at, id))
          return false;
        llvm::StringRef name = at.peek(",") || at.peek(")") ? "" : at.word();
        if (!define(argumentAt, id, function->addArgument(argumentType, name.str(), id)))
          return false;
      } while (at.take(","));
      if (!expect(at, ")"))
        return false;
    }
    if (!expect(at, "->") || !type(at, function->returnType) || !functionAttributes(at))
      return false;
    hasBody = at.take("{");
    if (hasBody == (function->kind == Function::Kind::External))
      return fail(at, hasBody ? "an external function has no body" : "expected '{'");
    return endOfLine(at);
  }

  bool functionBody() {
    Cursor at;
    Block *block = nullptr;
    while (nextLine(at)) {
      Cursor lineStart = at;
      if (at.take("}"))
        return endOfLine(at) && finishFunction(block, lineStart);
      if (at.peek("bb") && at.rest.ends_with(":")) {
        if (block)
          return fail(at, "bb" + llvm::Twine(block->id) + " has no terminator");
        unsigned id = 0;
        at.take("bb");
        if (!unsignedValue(at, id) || !expect(at, ":") || !endOfLine(at))
          return false;
        if (id > 100000)
          return fail(at, "block number too large");
        block = blockNumbered(id);
        if (!definedBlocks.insert(id).second)
          return fail(at, "bb" + llvm::Twine(id) + " is defined twice");
        continue;
      }
      if (!block)
        return fail(at, "expected a block label such as 'bb0:'");
      bool isTerminator;
      if (!terminatorLine(at, *block, isTerminator))
        return false;
      if (isTerminator)
        block = nullptr;
      else if (!instructionLine(at, *block))
        return false;
    }
    return fail(at, "the function has no closing '}'");
  }

  bool finishFunction(Block *open, const Cursor &at) {
    if (open)
      return fail(at, "bb" + llvm::Twine(open->id) + " has no terminator");
    if (function->blocks.empty())
      return fail(at, "a function needs at least one block");
    for (auto &[id, referenceAt] : referencedBlocks)
      if (!definedBlocks.contains(id))
        return fail(referenceAt, "bb" + llvm::Twine(id) + " is never defined");
    for (const auto &block : function->blocks) {
      if (!definedBlocks.contains(block->id))
        return fail(at, "bb" + llvm::Twine(block->id) + " is never defined");
      const Terminator &t = block->terminator;
      if (t.kind == Terminator::Kind::Jump || t.kind == Terminator::Kind::Branch)
        t.target->predecessors.push_back(block.get());
      if (t.kind == Terminator::Kind::Branch)
        t.falseTarget->predecessors.push_back(block.get());
    }
    return resolvePendingUses();
  }

  bool parseFunction(Cursor &at) {
    function = module->addFunction();
    values.clear();
    definedBlocks.clear();
    referencedBlocks.clear();
    bool hasBody;
    if (!functionHeader(at, hasBody))
      return false;
    if (!hasBody)
      return true;
    return functionBody();
  }

  bool parseModule() {
    Cursor at;
    if (!nextLine(at))
      return fail(at, "expected 'module'");
    if (!at.take("module") || !quoted(at, module->name) || !endOfLine(at))
      return fail(at, "expected 'module' and the module's name in quotes");
    while (nextLine(at))
      if (!parseFunction(at))
        return false;
    llvm::StringMap<Function *> bySymbol;
    for (const auto &candidate : module->functions)
      if (!bySymbol.try_emplace(candidate->symbol, candidate.get()).second)
        return fail(at, "@" + candidate->symbol + " is defined twice");
    for (PendingCall &call : pendingCalls) {
      call.instruction->callee = bySymbol.lookup(call.symbol);
      if (!call.instruction->callee)
        return fail(call.at, "call of @" + call.symbol + ", which is not in the module");
    }
    return true;
  }

  struct PendingCall {
    std::string symbol;
    Cursor at;
    Instruction *instruction;
  };

  llvm::StringRef bufferName;
  TypeContext &types;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  size_t lineIndex = 0;
  llvm::StringMap<Opcode> opcodes;
  llvm::StringMap<Intrinsic> intrinsics;

  std::unique_ptr<Module> module;
  Function *function = nullptr;
  llvm::DenseMap<unsigned, Value *> values;
  llvm::DenseSet<unsigned> definedBlocks;
  std::vector<std::pair<unsigned, Cursor>> referencedBlocks;
  std::vector<PendingUse> pending;
  std::vector<PendingCall> pendingCalls;
  std::string failure;
};

} // namespace

llvm::Expected<std::unique_ptr<Module>>
parseModule(llvm::StringRef text, llvm::StringRef bufferName, TypeContext &types) {
  return Parser(text, bufferName, types).run();
}

} // namespace kiln::ir
