//===- ir/ir_parser_instructions.cpp - Instructions of typed IR -----------===//
//
// Values (a use of %N may come before its definition and is patched when
// the function ends), block references, and one instruction or terminator
// per line: its result, opcode, operation data, operands, view items, result
// type and location.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser_internal.h"

namespace kiln::ir::reader {

namespace {

/// Which operations have a result is decided by the line (`%N = `); these
/// are the ones whose operands end in a text.
bool takesTextOperand(Opcode opcode) {
  return opcode == Opcode::Print || opcode == Opcode::Assert;
}

} // namespace

bool Parser::value(Cursor &at, Value *&result, unsigned &forwardId) {
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
  if (isText && (!chars || chars->isUnicode() != (constant.kind() == ConstantValue::Kind::String)))
    return fail(start, "a string is a run-time value only as a fixed-width string of its kind "
                       "(a str as [unichr x N], a bytes as [char x N])");
  result = function->constant(constantType, std::move(constant));
  return true;
}

bool Parser::operand(Cursor &at, Instruction &instruction) {
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

bool Parser::terminatorValue(Cursor &at, Terminator &terminator) {
  Cursor start = at;
  unsigned forwardId;
  if (!value(at, terminator.value, forwardId))
    return false;
  if (forwardId != ~0u)
    pending.push_back({forwardId, start, nullptr, 0, &terminator});
  return true;
}

bool Parser::define(const Cursor &at, unsigned id, Value *definition) {
  if (!values.try_emplace(id, definition).second)
    return fail(at, "%" + llvm::Twine(id) + " is defined twice");
  return true;
}

bool Parser::resolvePendingUses() {
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

Block *Parser::blockNumbered(unsigned id) {
  while (function->blocks.size() <= id)
    function->addBlock();
  return function->blocks[id].get();
}

bool Parser::blockReference(Cursor &at, Block *&result) {
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

bool Parser::operationData(Cursor &at, Instruction &instruction) {
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

bool Parser::intrinsicName(Cursor &at, Instruction &instruction) {
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

bool Parser::operands(Cursor &at, Instruction &instruction) {
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

bool Parser::viewItems(Cursor &at, Instruction &instruction) {
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

bool Parser::instructionLine(Cursor &at, Block &block) {
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

bool Parser::terminatorLine(Cursor &at, Block &block, bool &isTerminator) {
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

} // namespace kiln::ir::reader
