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
// This file holds the entry point and reads functions and the module; see
// ir_parser_internal.h for where the rest is read.
//
//===----------------------------------------------------------------------===//

#include "ir/ir_parser.h"

#include "ir/ir_parser_internal.h"

namespace kiln::ir {

namespace reader {

Parser::Parser(llvm::StringRef text, llvm::StringRef bufferName, TypeContext &types)
    : bufferName(bufferName), types(types) {
  text.split(lines, '\n');
  for (size_t i = 0; i < size_t(Opcode::Assert) + 1; ++i)
    opcodes[spelling(Opcode(i))] = Opcode(i);
  for (size_t i = 0; i < size_t(Intrinsic::RoundDigits) + 1; ++i)
    intrinsics[spelling(Intrinsic(i))] = Intrinsic(i);
}

llvm::Expected<std::unique_ptr<Module>> Parser::run() {
  module = std::make_unique<Module>();
  if (!parseModule())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), failure);
  return std::move(module);
}

bool Parser::options(Cursor &at, JitOptions &result) {
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

bool Parser::functionAttributes(Cursor &at) {
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

bool Parser::functionHeader(Cursor &at, bool &hasBody) {
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

bool Parser::functionBody() {
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

bool Parser::finishFunction(Block *open, const Cursor &at) {
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

bool Parser::parseFunction(Cursor &at) {
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

bool Parser::parseModule() {
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

} // namespace reader

llvm::Expected<std::unique_ptr<Module>>
parseModule(llvm::StringRef text, llvm::StringRef bufferName, TypeContext &types) {
  return reader::Parser(text, bufferName, types).run();
}

} // namespace kiln::ir
