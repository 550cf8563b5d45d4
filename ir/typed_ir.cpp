//===- ir/typed_ir.cpp - Building, printing, checking typed IR ------===//

#include "ir/typed_ir.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>

namespace kiln::ir {

llvm::StringRef spelling(Opcode opcode) {
  switch (opcode) {
#define IR_OPCODE(NAME, SPELLING)                                                                  \
  case Opcode::NAME:                                                                               \
    return SPELLING;
#include "ir/opcodes.def"
  }
  return "?";
}

llvm::StringRef spelling(Intrinsic intrinsic) {
  switch (intrinsic) {
#define IR_INTRINSIC(NAME, SPELLING)                                                               \
  case Intrinsic::NAME:                                                                            \
    return SPELLING;
#include "ir/intrinsics.def"
  }
  return "?";
}

unsigned Function::takeValueId(std::optional<unsigned> id) {
  if (!id)
    return nextValueId++;
  nextValueId = std::max(nextValueId, *id + 1);
  return *id;
}

Argument *Function::addArgument(const Type *type, std::string name, std::optional<unsigned> id) {
  auto argument = std::make_unique<Argument>(
      type, takeValueId(id), static_cast<unsigned>(arguments.size()), std::move(name));
  Argument *result = argument.get();
  ownedValues.push_back(std::move(argument));
  arguments.push_back(result);
  return result;
}

Block *Function::addBlock() {
  blocks.push_back(std::make_unique<Block>(static_cast<unsigned>(blocks.size())));
  return blocks.back().get();
}

void jump(Block *from, Block *target) {
  from->terminator.kind = Terminator::Kind::Jump;
  from->terminator.target = target;
  target->predecessors.push_back(from);
}

void branch(Block *from, Value *condition, Block *whenTrue, Block *whenFalse) {
  from->terminator.kind = Terminator::Kind::Branch;
  from->terminator.value = condition;
  from->terminator.target = whenTrue;
  from->terminator.falseTarget = whenFalse;
  whenTrue->predecessors.push_back(from);
  whenFalse->predecessors.push_back(from);
}

Block *Function::insertBlockAfter(Block *after) {
  auto place = llvm::find_if(blocks, [&](const auto &block) { return block.get() == after; });
  auto inserted = blocks.insert(std::next(place), std::make_unique<Block>(0));
  for (auto renumber = inserted; renumber != blocks.end(); ++renumber)
    (*renumber)->id = static_cast<unsigned>(renumber - blocks.begin());
  return inserted->get();
}

Instruction *Function::addInstruction(Block *block, Opcode opcode, const Type *type, Location where,
                                      std::optional<unsigned> id) {
  auto instruction = std::make_unique<Instruction>(opcode, type, takeValueId(id), where);
  Instruction *result = instruction.get();
  result->parent = block;
  ownedValues.push_back(std::move(instruction));
  block->instructions.push_back(result);
  return result;
}

Constant *Function::constant(const Type *type, ConstantValue value) {
  auto constant = std::make_unique<Constant>(type, nextValueId++, std::move(value));
  Constant *result = constant.get();
  ownedValues.push_back(std::move(constant));
  return result;
}

Undefined *Function::undefined(const Type *type, llvm::StringRef variable, Undefined::Cause cause) {
  auto value = std::make_unique<Undefined>(type, nextValueId++, variable.str(), cause);
  Undefined *result = value.get();
  ownedValues.push_back(std::move(value));
  return result;
}

Function *Module::addFunction() {
  functions.push_back(std::make_unique<Function>());
  return functions.back().get();
}

} // namespace kiln::ir
