//===- ir/verifier.cpp - Checking the typed IR's invariants ---------------===//

#include "ir/datetime_operations.h"
#include "ir/libdevice.h"
#include "ir/typed_ir.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>

namespace kiln::ir {

namespace {

llvm::SmallVector<const Block *, 2> successors(const Block &block) {
  const Terminator &t = block.terminator;
  switch (t.kind) {
  case Terminator::Kind::Jump:
    return {t.target};
  case Terminator::Kind::Branch:
    return {t.target, t.falseTarget};
  default:
    return {};
  }
}

/// The dominator tree of a function's blocks, by Cooper, Harvey and
/// Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm").
class DominatorTree {
public:
  explicit DominatorTree(const Function &function) {
    std::vector<const Block *> order = reversePostOrder(function);
    for (size_t i = 0; i < order.size(); ++i)
      position[order[i]] = i;
    const Block *entry = function.entry();
    idom[entry] = entry;
    for (bool changed = true; changed;) {
      changed = false;
      for (const Block *block : llvm::ArrayRef(order).drop_front()) {
        const Block *dominator = nullptr;
        for (const Block *predecessor : block->predecessors) {
          if (!idom.contains(predecessor))
            continue; // not processed yet, or unreachable
          dominator = dominator ? intersect(predecessor, dominator) : predecessor;
        }
        if (dominator && idom.lookup(block) != dominator) {
          idom[block] = dominator;
          changed = true;
        }
      }
    }
  }

  bool isReachable(const Block *block) const { return idom.contains(block); }

  /// Whether every path from the entry to `block` passes `dominator`.
  bool dominates(const Block *dominator, const Block *block) const {
    if (!idom.contains(block))
      return false; // unreachable
    for (;;) {
      if (block == dominator)
        return true;
      const Block *parent = idom.lookup(block);
      if (parent == block)
        return false;
      block = parent;
    }
  }

private:
  static std::vector<const Block *> reversePostOrder(const Function &function) {
    std::vector<const Block *> postOrder;
    llvm::DenseSet<const Block *> visited{function.entry()};
    std::vector<std::pair<const Block *, unsigned>> stack{{function.entry(), 0}};
    while (!stack.empty()) {
      auto &[block, next] = stack.back();
      llvm::SmallVector<const Block *, 2> targets = successors(*block);
      if (next < targets.size()) {
        const Block *target = targets[next++];
        if (visited.insert(target).second)
          stack.push_back({target, 0});
        continue;
      }
      postOrder.push_back(block);
      stack.pop_back();
    }
    return {postOrder.rbegin(), postOrder.rend()};
  }

  const Block *intersect(const Block *a, const Block *b) const {
    while (a != b) {
      while (position.lookup(a) > position.lookup(b))
        a = idom.lookup(a);
      while (position.lookup(b) > position.lookup(a))
        b = idom.lookup(b);
    }
    return a;
  }

  llvm::DenseMap<const Block *, size_t> position;
  llvm::DenseMap<const Block *, const Block *> idom;
};

class Verifier {
public:
  std::optional<std::string> run(const Module &module) {
    for (const auto &function : module.functions) {
      current = function.get();
      if (auto problem = checkFunction(*function))
        return "in @" + function->symbol + ": " + *problem;
    }
    return std::nullopt;
  }

private:
  std::optional<std::string> checkFunction(const Function &function) {
    if (function.kind == Function::Kind::External)
      return function.blocks.empty()
                 ? std::nullopt
                 : std::optional<std::string>("an external function has blocks");
    if (function.blocks.empty())
      return "no blocks";
    DominatorTree dominators(function);
    positionInBlock.clear();
    llvm::DenseSet<const Value *> defined;
    for (const Argument *argument : function.arguments)
      defined.insert(argument);
    for (const auto &block : function.blocks)
      for (size_t i = 0; i < block->instructions.size(); ++i) {
        defined.insert(block->instructions[i]);
        positionInBlock[block->instructions[i]] = i;
      }
    for (const auto &block : function.blocks) {
      bool seenNonPhi = false;
      for (const Instruction *instruction : block->instructions) {
        if (instruction->parent != block.get())
          return "instruction %" + std::to_string(instruction->id()) + " has the wrong parent";
        if (instruction->opcode == Opcode::Phi) {
          if (seenNonPhi)
            return "phi %" + std::to_string(instruction->id()) + " after a non-phi";
          if (instruction->incoming.size() != instruction->operands.size() ||
              instruction->incoming.size() != block->predecessors.size())
            return "phi %" + std::to_string(instruction->id()) + " does not match predecessors";
        } else {
          seenNonPhi = true;
        }
        for (const Value *operand : instruction->operands) {
          if (!operand)
            return "null operand in %" + std::to_string(instruction->id());
          if (llvm::isa<Instruction>(operand) && !defined.contains(operand))
            return "operand of %" + std::to_string(instruction->id()) + " is not in the function";
          if (instruction->opcode == Opcode::Phi && operand->type() != instruction->type())
            return "phi %" + std::to_string(instruction->id()) + " has an operand of type " +
                   operand->type()->str();
          if (!operand->type())
            return "%" + std::to_string(instruction->id()) + " uses %" +
                   std::to_string(operand->id()) + ", which has no result";
          if (instruction->opcode != Opcode::Phi && llvm::isa<Undefined>(operand))
            return "%" + std::to_string(instruction->id()) + " reads undefined variable '" +
                   llvm::cast<Undefined>(operand)->variable + "'";
        }
        if (instruction->opcode == Opcode::Phi)
          if (auto problem = checkUnboundOperands(*instruction, dominators))
            return problem;
        if (auto problem = checkDefinitionsDominate(*instruction, dominators))
          return problem;
        if (!instruction->type() && needsResult(instruction->opcode))
          return "%" + std::to_string(instruction->id()) + " (" +
                 spelling(instruction->opcode).str() + ") has no result type";
        if (auto problem = checkTypes(*instruction))
          return "%" + std::to_string(instruction->id()) + " (" +
                 spelling(instruction->opcode).str() + "): " + *problem;
      }
      const Terminator &t = block->terminator;
      if ((t.kind == Terminator::Kind::Jump || t.kind == Terminator::Kind::Branch) &&
          (!t.target || (t.kind == Terminator::Kind::Branch && !t.falseTarget)))
        return "bb" + std::to_string(block->id) + " jumps nowhere";
      if (t.value && dominators.isReachable(block.get()) &&
          !available(t.value, block.get(), block->instructions.size(), dominators))
        return "the terminator of bb" + std::to_string(block->id) + " uses %" +
               std::to_string(t.value->id()) + " where it is not defined on every path";
      if (t.kind == Terminator::Kind::Branch &&
          (!t.value || !llvm::isa<BooleanType>(t.value->type())))
        return "branch condition of bb" + std::to_string(block->id) + " is not a bool";
      if (t.kind == Terminator::Kind::Return) {
        bool returnsNone = llvm::isa<NoneType>(function.returnType);
        if (returnsNone != (t.value == nullptr) ||
            (t.value && t.value->type() != function.returnType))
          return "return in bb" + std::to_string(block->id) + " does not match the return type";
      }
    }
    return std::nullopt;
  }

  /// A phi may take an undefined operand from a predecessor only where the
  /// variable really is unbound. A value of it defined on every path to that
  /// predecessor (an argument, or an instruction whose block dominates it)
  /// proves the variable bound there, unless `del` unbound it since.
  static std::optional<std::string> checkUnboundOperands(const Instruction &phi,
                                                         const DominatorTree &dominators) {
    for (size_t i = 0; i < phi.operands.size(); ++i) {
      const auto *undefined = llvm::dyn_cast_or_null<Undefined>(phi.operands[i]);
      if (!undefined || undefined->cause == Undefined::Cause::Deleted)
        continue;
      const Block *unboundPath = phi.incoming[i];
      for (size_t j = 0; j < phi.operands.size(); ++j) {
        const Value *bound = phi.operands[j];
        const auto *instruction = llvm::dyn_cast_or_null<Instruction>(bound);
        bool boundOnEveryPath =
            llvm::isa_and_nonnull<Argument>(bound) ||
            (instruction && dominators.dominates(instruction->parent, unboundPath));
        if (boundOnEveryPath)
          return "phi %" + std::to_string(phi.id()) + " takes '" + undefined->variable +
                 "' as unbound from bb" + std::to_string(unboundPath->id) + ", but %" +
                 std::to_string(bound->id()) + " binds it on every path there";
      }
    }
    return std::nullopt;
  }

  /// Operations that only have an effect may have no result.
  static bool needsResult(Opcode opcode) {
    return opcode != Opcode::ArrayStore && opcode != Opcode::PointerStore &&
           opcode != Opcode::RecordSet && opcode != Opcode::Print && opcode != Opcode::Assert &&
           opcode != Opcode::Call && opcode != Opcode::Intrinsic;
  }

  /// Whether `value` is defined on every path to position `position` of
  /// `block`: an argument or constant, or an instruction before it in the
  /// block or in a block dominating it.
  bool available(const Value *value, const Block *block, size_t position,
                 const DominatorTree &dominators) const {
    const auto *definition = llvm::dyn_cast<Instruction>(value);
    if (!definition)
      return true;
    if (definition->parent == block)
      return positionInBlock.lookup(definition) < position;
    return dominators.dominates(definition->parent, block);
  }

  /// SSA: every use is dominated by its definition; a phi's operand by the
  /// end of the block it comes from. Unreachable code is not checked.
  std::optional<std::string> checkDefinitionsDominate(const Instruction &instruction,
                                                      const DominatorTree &dominators) const {
    for (size_t i = 0; i < instruction.operands.size(); ++i) {
      bool isPhi = instruction.opcode == Opcode::Phi;
      const Block *from = isPhi ? instruction.incoming[i] : instruction.parent;
      size_t position = isPhi ? from->instructions.size() : positionInBlock.lookup(&instruction);
      if (!dominators.isReachable(from) ||
          available(instruction.operands[i], from, position, dominators))
        continue;
      return "%" + std::to_string(instruction.id()) + " uses %" +
             std::to_string(instruction.operands[i]->id()) +
             (isPhi ? " from bb" + std::to_string(from->id) : std::string()) +
             " where it is not defined on every path";
    }
    return std::nullopt;
  }

  static std::string describeOperandTypes(const Instruction &instruction) {
    std::string text = "(";
    for (const Value *operand : instruction.operands)
      text += (text.size() > 1 ? ", " : "") + operand->type()->str();
    return text + ")";
  }

  /// Math intrinsics (sin ... round_digits in intrinsics.def)
  /// work on floats: the first operand is one, and so is the result of all
  /// but the classifying and splitting functions.
  static std::optional<std::string> checkIntrinsic(const Instruction &instruction) {
    if (instruction.intrinsic < Intrinsic::Sin)
      return std::nullopt;
    if (instruction.operands.empty() || !llvm::isa<FloatType>(instruction.operands[0]->type()))
      return "math intrinsic " + spelling(instruction.intrinsic).str() +
             " needs a float operand, not " + describeOperandTypes(instruction);
    switch (instruction.intrinsic) {
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite:
    case Intrinsic::Frexp:
    case Intrinsic::Modf:
      return std::nullopt;
    default:
      if (instruction.type() != instruction.operands[0]->type())
        return "math intrinsic " + spelling(instruction.intrinsic).str() + " gives " +
               instruction.type()->str() + " for " + describeOperandTypes(instruction);
      return std::nullopt;
    }
  }

  static bool takesDateTime(const Instruction &instruction) {
    return instruction.operands.size() == 2 &&
           (llvm::isa<DateTimeType>(instruction.operands[0]->type()) ||
            llvm::isa<DateTimeType>(instruction.operands[1]->type()));
  }

  std::optional<std::string> checkDateTimeOperation(const Instruction &instruction) {
    std::optional<DateTimeOperationResult> result = dateTimeOperationResult(
        instruction.opcode, instruction.operands[0]->type(), instruction.operands[1]->type());
    if (!result)
      return "no datetime64 operation takes " + describeOperandTypes(instruction);
    if (!result->describes(instruction.type()))
      return "this datetime64 operation gives another type than " + instruction.type()->str() +
             " for " + describeOperandTypes(instruction);
    return std::nullopt;
  }

  std::optional<std::string> checkTypes(const Instruction &instruction) {
    auto operandType = [&](size_t i) { return instruction.operands[i]->type(); };
    switch (instruction.opcode) {
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::TrueDiv:
    case Opcode::FloorDiv:
    case Opcode::Mod:
    case Opcode::Shl:
    case Opcode::Shr:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
      if (takesDateTime(instruction))
        return checkDateTimeOperation(instruction);
      if (instruction.operands.size() != 2 || operandType(0) != instruction.type() ||
          operandType(1) != instruction.type())
        return "operands must have the result type " + instruction.type()->str() + ", not " +
               describeOperandTypes(instruction);
      return std::nullopt;
    case Opcode::Pow:
      if (instruction.operands.size() != 2 || operandType(0) != instruction.type())
        return std::string("the base must have the result type");
      return std::nullopt;
    case Opcode::Eq:
    case Opcode::Ne:
    case Opcode::Lt:
    case Opcode::Le:
    case Opcode::Gt:
    case Opcode::Ge:
      if (takesDateTime(instruction))
        return checkDateTimeOperation(instruction);
      if (instruction.operands.size() != 2 || operandType(0) != operandType(1) ||
          !llvm::isa<BooleanType>(instruction.type()))
        return std::string("comparisons take two operands of one type and give bool");
      return std::nullopt;
    case Opcode::Intrinsic:
      return checkIntrinsic(instruction);
    case Opcode::LibdeviceCall:
      return checkLibdeviceCall(instruction);
    case Opcode::Select:
      if (instruction.operands.size() != 3 || !llvm::isa<BooleanType>(operandType(0)) ||
          operandType(1) != instruction.type() || operandType(2) != instruction.type())
        return std::string("select takes a bool and two values of the result type");
      return std::nullopt;
    case Opcode::Call: {
      const Function *callee = instruction.callee;
      if (!callee || callee->arguments.size() != instruction.operands.size())
        return std::string("wrong number of arguments");
      for (size_t i = 0; i < instruction.operands.size(); ++i)
        if (operandType(i) != callee->arguments[i]->type())
          return "argument " + std::to_string(i) + " has type " + operandType(i)->str() + ", not " +
                 callee->arguments[i]->type()->str();
      if (callee->returnType != instruction.type() &&
          !(llvm::isa<NoneType>(callee->returnType) && !instruction.type()))
        return std::string("result type differs from the callee's");
      return std::nullopt;
    }
    case Opcode::ArrayLoad:
    case Opcode::ArrayStore:
    case Opcode::ArrayView:
    case Opcode::ArrayShape:
    case Opcode::ArrayStride:
    case Opcode::ArraySize:
    case Opcode::ArrayTranspose:
    case Opcode::ArrayReshape:
    case Opcode::ArrayComplexPart:
    case Opcode::ArrayViewAs:
      if (instruction.operands.empty() || !llvm::isa<ArrayType>(operandType(0)))
        return std::string("the first operand must be an array");
      return std::nullopt;
    case Opcode::PointerLoad:
    case Opcode::PointerStore: {
      const auto *pointer =
          instruction.operands.empty() ? nullptr : llvm::dyn_cast<PointerType>(operandType(0));
      bool load = instruction.opcode == Opcode::PointerLoad;
      const auto *index =
          instruction.operands.size() > 1 ? llvm::dyn_cast<IntegerType>(operandType(1)) : nullptr;
      if (!pointer || instruction.operands.size() != (load ? 2u : 3u) || !index ||
          index->bitwidth() != 64 || !index->signedness() ||
          (load ? instruction.type() : operandType(2)) != pointer->pointeeType())
        return std::string("a pointer load takes a pointer and an int64 index and gives the "
                           "pointee; a store takes the pointee too");
      return std::nullopt;
    }
    case Opcode::ConstArray:
      return checkConstArray(instruction);
    case Opcode::ArrayAt: {
      const auto *array = llvm::dyn_cast_or_null<ArrayType>(instruction.type());
      if (!array || array->isReadonly() || array->rank() != instruction.shape.size() ||
          instruction.strides.size() != instruction.shape.size())
        return std::string("an array at an address has a writable array type of the rank of its "
                           "shape, and a stride per dimension");
      return std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

  /// A libdevice call passes each input its parameter's type and gives the
  /// function's returned values (ir/libdevice.h).
  static std::optional<std::string> checkLibdeviceCall(const Instruction &instruction) {
    const LibdeviceFunction *function = findLibdeviceFunction(instruction.text);
    if (!function)
      return "libdevice has no function '" + instruction.text + "'";
    std::vector<LibdeviceScalar> inputs = function->inputs();
    if (instruction.operands.size() != inputs.size())
      return function->symbol() + " takes " + std::to_string(inputs.size()) + " inputs, not " +
             std::to_string(instruction.operands.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!isLibdeviceType(instruction.operands[i]->type(), inputs[i]))
        return "input " + std::to_string(i) + " of " + function->symbol() + " has the wrong type " +
               instruction.operands[i]->type()->str();
    std::vector<LibdeviceScalar> values = function->returnedValues();
    const auto *tuple = llvm::dyn_cast_or_null<TupleType>(instruction.type());
    bool matches = values.size() == 1 ? isLibdeviceType(instruction.type(), values.front())
                                      : tuple && tuple->size() == values.size();
    for (size_t i = 0; matches && values.size() > 1 && i < values.size(); ++i)
      matches = isLibdeviceType(tuple->elementTypes()[i], values[i]);
    if (!matches)
      return function->symbol() + " cannot give " +
             (instruction.type() ? instruction.type()->str() : std::string("no value"));
    return std::nullopt;
  }

  static std::optional<std::string> checkConstArray(const Instruction &instruction) {
    const auto *array = llvm::dyn_cast_or_null<ArrayType>(instruction.type());
    if (!array || !array->isReadonly() || array->arrayLayout() == ArrayLayout::A ||
        array->rank() != instruction.shape.size())
      return "a constant array's type must be a readonly C or F array of rank " +
             std::to_string(instruction.shape.size());
    const Type *element = array->elementType();
    std::optional<uint64_t> itemBytes = scalarByteSize(element);
    if (const auto *record = llvm::dyn_cast<RecordType>(element))
      itemBytes = record->byteSize();
    if (!itemBytes)
      return "a constant array holds numbers, booleans or records, not " + element->str();
    uint64_t count = 1;
    uint64_t bytes = 0;
    bool overflows = false;
    for (uint64_t extent : instruction.shape)
      overflows |= __builtin_mul_overflow(count, extent, &count);
    overflows |= __builtin_mul_overflow(count, *itemBytes, &bytes);
    if (overflows)
      return std::string("a constant array's shape is too large");
    if (!instruction.data || instruction.data->size() != bytes)
      return "a constant array of " + std::to_string(count) + " " + element->str() + " needs " +
             std::to_string(bytes) + " bytes, not " +
             std::to_string(instruction.data ? instruction.data->size() : 0);
    return std::nullopt;
  }

  const Function *current = nullptr;
  llvm::DenseMap<const Instruction *, size_t> positionInBlock;
};

} // namespace

std::optional<std::string> verify(const Module &module) {
  return Verifier().run(module);
}

} // namespace kiln::ir
