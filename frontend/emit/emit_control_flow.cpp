//===- frontend/emit/emit_control_flow.cpp - Control flow -----------------===//

#include "frontend/emit/function_emitter.h"

namespace kiln::emit {

using ssa::Op;

/// Whether `value` is the same number in `type`, so that a conversion to
/// it may retype the constant instead of casting it.
static bool representableExactly(const ConstantValue &value, const Type *type) {
  if (value.kind() == ConstantValue::Kind::Bool)
    return !llvm::isa<ComplexType>(type);
  if (value.kind() != ConstantValue::Kind::Int)
    return value.kind() == ConstantValue::Kind::Float && llvm::isa<FloatType>(type) &&
           llvm::cast<FloatType>(type)->bitwidth() == 64;
  Int128 v = value.intValue128();
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
    unsigned bits = integer->bitwidth();
    Int128 low = integer->signedness() ? -(static_cast<Int128>(1) << (bits - 1)) : 0;
    Int128 high = integer->signedness() ? (static_cast<Int128>(1) << (bits - 1)) - 1
                                        : (static_cast<Int128>(1) << bits) - 1;
    return v >= low && v <= high;
  }
  if (const auto *floating = llvm::dyn_cast<FloatType>(type)) {
    Int128 limit = static_cast<Int128>(1) << (floating->bitwidth() == 64   ? 53
                                              : floating->bitwidth() == 32 ? 24
                                                                           : 11);
    return v >= -limit && v <= limit;
  }
  return false;
}

ir::Value *FunctionEmitter::convert(ir::Value *value, const Type *type, ir::Block *where) {
  // The result of a call that returns None, passed on as None.
  if (value && !value->type() &&
      (llvm::isa_and_nonnull<NoneType>(type) || llvm::isa_and_nonnull<OptionalType>(type)))
    value = noneConstant();
  if (!value || !type || value->type() == type)
    return value;
  // Unwrapping an optional value raises TypeError where it is None.
  if (llvm::isa_and_nonnull<OptionalType>(value->type()) && !llvm::isa<OptionalType>(type))
    function.raises = true;
  if (const auto *fp8 = llvm::dyn_cast<Fp8Type>(type))
    return convertToFp8(value, fp8);
  if (llvm::isa_and_nonnull<Fp8Type>(value->type()))
    return convertFromFp8(value, type);
  // A constant the target type holds exactly is retyped; any other goes
  // through a Cast, whose wrapping, rounding and saturation are the
  // conversion's meaning (np.uint16(70000) is 4464, not 70000).
  if (const auto *known = llvm::dyn_cast<ir::Constant>(value))
    if (type->isScalar() && known->value.isNumber() && representableExactly(known->value, type))
      return constant(type, known->value.memberValue());
  return emit(ir::Opcode::Cast, type, {value}, where);
}

ir::Value *FunctionEmitter::operand(const ssa::Instr *instr, size_t i,
                                    const Resolution &resolution) {
  const Type *target = i < resolution.operandTypes.size() ? resolution.operandTypes[i] : nullptr;
  return target ? valueAs(instr->operands[i], target) : valueOf(instr->operands[i]);
}

ir::Value *FunctionEmitter::valueAs(const ssa::Instr *source, const Type *type) {
  // A string constant has no run-time value until it fills a fixed-width
  // string, which its type spells out.
  if (const auto *text = llvm::dyn_cast<StringLiteralType>(typeOf(source));
      text && type && llvm::isa<CharSequenceType>(type))
    return constant(type, text->isBytes() ? ConstantValue::bytes(text->stringValue())
                                          : ConstantValue::string(text->stringValue()));
  return convert(valueOf(source), type);
}

std::vector<ir::Value *> FunctionEmitter::callArguments(const ssa::Instr *call,
                                                        const Resolution &resolution) {
  std::vector<ir::Value *> args;
  auto add = [&](ir::Value *value) {
    // Conversions count arguments after the callee, operand 0.
    size_t position = args.size() + 1;
    const Type *target =
        position < resolution.operandTypes.size() ? resolution.operandTypes[position] : nullptr;
    args.push_back(target && value ? convert(value, target) : value);
  };
  // A method overload_method implements takes its receiver first.
  const ssa::Instr *callee = call->operands[0];
  if (const auto *method = llvm::dyn_cast_or_null<EntityType>(typeOf(callee));
      method && method->entityKindOf() == EntityType::EntityKind::OverloadedMethod)
    add(valueOf(callee->operands[0]));
  for (size_t i = 1; i < call->operands.size(); ++i) {
    const ssa::Instr *argument = call->operands[i];
    if (!llvm::is_contained(call->starred, i)) {
      add(valueOf(argument));
      continue;
    }
    const auto *tuple = llvm::cast<TupleType>(typeOf(argument));
    for (size_t k = 0; k < tuple->size(); ++k) {
      const Type *element = plain(tuple->elementTypes()[k]);
      if (argument->op == Op::BuildTuple) {
        add(valueOf(argument->operands[k]));
      } else if (!passesAtRunTime(element)) {
        add(nullptr);
      } else if (ir::Value *whole = valueOf(argument)) {
        ir::Instruction *get = emit(ir::Opcode::TupleGet, element, {whole});
        get->index = static_cast<unsigned>(k);
        add(get);
      } else if (argument->op == Op::Constant) {
        add(constant(element, ConstantValue(argument->constant->elements()[k])));
      } else {
        add(nullptr);
      }
    }
  }
  return args;
}

std::vector<ir::Value *> FunctionEmitter::indexValues(const ssa::Instr *index) {
  std::vector<ir::Value *> result;
  const Type *type = typeOf(index);
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
    for (size_t i = 0; i < tuple->size(); ++i) {
      ir::Value *element;
      if (index->op == Op::BuildTuple) {
        element = valueOf(index->operands[i]);
      } else {
        ir::Instruction *get =
            emit(ir::Opcode::TupleGet, plain(tuple->elementTypes()[i]), {valueOf(index)});
        get->index = static_cast<unsigned>(i);
        element = get;
      }
      result.push_back(convert(element, types.int64()));
    }
    return result;
  }
  result.push_back(convert(valueOf(index), types.int64()));
  return result;
}

bool FunctionEmitter::edgeRuns(const ssa::Block *from, const ssa::Block *to) const {
  if (!blocks.count(from))
    return false;
  const ssa::Block *decided = spec.decidedSuccessor(*from);
  return !decided || decided == to;
}

void FunctionEmitter::run() {
  const ssa::Function &ssa = *spec.ssa;
  size_t next = 0;
  for (const ssa::Instr *argument : ssa.arguments)
    if (passesAtRunTime(types.unliteral(spec.argTypes[argument->index])))
      values[argument] = function.arguments[next++];

  // Reads of numbers no assignment reaches, which typing accepts where
  // Numba does: Numba reads whatever the variable's slot holds; Kiln zero.
  for (const ssa::Instr *unassigned : ssa.undefinedValues)
    if (const Type *type = typeOf(unassigned))
      values[unassigned] =
          constant(type, llvm::isa<ComplexType>(type)   ? ConstantValue::complex(0, 0)
                         : llvm::isa<FloatType>(type)   ? ConstantValue::floating(0)
                         : llvm::isa<BooleanType>(type) ? ConstantValue::boolean(false)
                                                        : ConstantValue::integer(0));

  // Blocks that a decided branch cuts off are neither typed nor compiled.
  std::vector<ssa::Block *> order;
  for (ssa::Block *block : ssa.reversePostOrder())
    if (spec.reachable[block->id])
      order.push_back(block);
  for (const ssa::Block *block : order)
    blocks[block] = function.addBlock();

  // Phis first: loop back edges bring values defined later.
  for (const ssa::Block *block : order)
    for (const ssa::Instr *phi : block->phis) {
      const Type *type = typeOf(phi);
      if (!type || type->isCompileTimeOnly())
        continue;
      ir::Instruction *instruction = function.addInstruction(blocks[block], ir::Opcode::Phi,
                                                             plain(type), irLocation(phi->range));
      values[phi] = instruction;
      phis.push_back({phi, block, instruction});
    }

  for (const ssa::Block *block : order) {
    current = blocks[block];
    for (const ssa::Instr *instr : block->instrs) {
      location = instr->range;
      emitInstr(instr);
    }
    location = block->terminator.range;
    emitTerminator(block);
    tails[block] = current;
  }

  for (const ssa::Block *block : order)
    for (const ssa::Block *predecessor : block->predecessors)
      if (edgeRuns(predecessor, block))
        blocks[block]->predecessors.push_back(tails[predecessor]);

  for (auto &[phi, block, instruction] : phis) {
    for (size_t i = 0; i < phi->operands.size(); ++i) {
      const ssa::Block *from = phi->incoming[i];
      if (!edgeRuns(from, block))
        continue;
      ir::Block *predecessor = tails[from];
      const ssa::Instr *incoming = phi->operands[i];
      ir::Value *value = nullptr;
      if (incoming->op == Op::Undefined)
        value = function.undefined(instruction->type(), incoming->name,
                                   incoming->deleted ? ir::Undefined::Cause::Deleted
                                                     : ir::Undefined::Cause::Unassigned);
      else if (ir::Value *defined = valueOrNone(incoming))
        value = convert(defined, instruction->type(), predecessor);
      // A value that was never emitted stays null, which the verifier
      // reports: silently reading it as undefined would miscompile.
      instruction->operands.push_back(value);
      instruction->incoming.push_back(predecessor);
    }
  }
}

ir::Location FunctionEmitter::irLocation(SourceRange range) const {
  return module.locate(range);
}

void FunctionEmitter::emitTerminator(const ssa::Block *block) {
  const ssa::Terminator &t = block->terminator;
  ir::Terminator &out = current->terminator;
  out.location = irLocation(t.range);
  switch (t.kind) {
  case ssa::Terminator::Kind::Jump:
    out.kind = ir::Terminator::Kind::Jump;
    out.target = blocks[t.target];
    return;
  case ssa::Terminator::Kind::Branch:
    if (const ssa::Block *decided = spec.decidedSuccessor(*block)) {
      out.kind = ir::Terminator::Kind::Jump;
      out.target = blocks[decided];
      return;
    }
    out.kind = ir::Terminator::Kind::Branch;
    out.value = convert(valueOf(t.value), types.boolean());
    out.target = blocks[t.target];
    out.falseTarget = blocks[t.falseTarget];
    return;
  case ssa::Terminator::Kind::Return: {
    out.kind = ir::Terminator::Kind::Return;
    if (llvm::isa<NoneType>(function.returnType))
      return;
    // A bare `return` returns None.
    out.value = convert(t.value ? valueOrNone(t.value) : noneConstant(), function.returnType);
    return;
  }
  case ssa::Terminator::Kind::Raise: {
    out.kind = ir::Terminator::Kind::Raise;
    const Symbol *exception = typing::builtinOf(typeOf(t.value));
    // A class the module defines is named with the module, where the
    // runtime finds it: "pkg.kernels.MyError".
    out.exceptionClass = !exception ? "Exception"
                         : exception->isUserException()
                             ? module.name() + "." + exception->qualifiedName.str()
                             : exception->name().str();
    out.message = spec.resolutions[t.value->id].detail;
    function.raises = true;
    return;
  }
  case ssa::Terminator::Kind::None:
    out.kind = ir::Terminator::Kind::Return;
    if (llvm::isa<OptionalType>(function.returnType))
      out.value = convert(noneConstant(), function.returnType);
    return;
  }
}

void FunctionEmitter::emitInstr(const ssa::Instr *instr) {
  emitOperation(instr);
  // Typing may have widened the value beyond the operation's own type
  // (a type variable of Numba's keeps every type it had); they differ only then.
  if (spec.resolutions[instr->id].result == typeOf(instr))
    return;
  auto value = values.find(instr);
  if (value != values.end())
    value->second = convert(value->second, typeOf(instr));
}

void FunctionEmitter::emitOperation(const ssa::Instr *instr) {
  const Resolution &resolution = spec.resolutions[instr->id];
  const Type *type = typeOf(instr);
  switch (resolution.kind) {
  case Resolution::Kind::Unresolved:
  case Resolution::Kind::CompileTime:
    return; // no run-time value
  case Resolution::Kind::Constant:
    values[instr] = constant(plain(resolution.result), *resolution.constant);
    return;
  case Resolution::Kind::Value:
    switch (instr->op) {
    case Op::Constant:
      if (type->isCompileTimeOnly())
        return;
      values[instr] = constant(plain(type), *instr->constant);
      return;
    case Op::BuildTuple: {
      // Index tuples with slices (`a[i, :]`) have no run-time value: the
      // view takes their parts.
      if (llvm::any_of(llvm::cast<TupleType>(type)->elementTypes(),
                       [](const Type *t) { return t->kind() == Type::Kind::Slice; }))
        return;
      // Tuples holding None have no run-time value either; indexing them
      // takes the element directly (emitGetItem).
      if (type->isCompileTimeOnly())
        return;
      std::vector<ir::Value *> elements;
      for (const ssa::Instr *element : instr->operands)
        elements.push_back(valueOf(element));
      values[instr] = emit(ir::Opcode::TupleMake, plain(type), elements);
      return;
    }
    case Op::Global: {
      // A NumPy array of the module's globals, frozen in; or a device
      // array, captured where it is.
      const ConstantArray &array = instr->global->arrayValue();
      if (array.address) {
        ir::Instruction *captured = emit(ir::Opcode::ArrayAt, plain(type), {});
        captured->address = *array.address;
        captured->shape = array.shape;
        captured->strides = array.strides;
        values[instr] = captured;
        return;
      }
      ir::Instruction *frozen = emit(ir::Opcode::ConstArray, plain(type), {});
      frozen->shape = array.shape;
      frozen->data = array.data;
      values[instr] = frozen;
      return;
    }
    default:
      return; // arguments, phis and slices are mapped elsewhere
    }
  case Resolution::Kind::Operator:
  case Resolution::Kind::Truth:
    values[instr] = emitOperator(instr, resolution);
    return;
  case Resolution::Kind::Builtin:
  case Resolution::Kind::Cast:
  case Resolution::Kind::DeviceCall:
  case Resolution::Kind::RangeValue:
    if (resolution.kind == Resolution::Kind::Cast && instr->op == Op::GetAttr) {
      values[instr] = convert(valueOf(instr->operands[0]), plain(resolution.result)); // e.value
      return;
    }
    if (instr->op == Op::Call) {
      values[instr] = emitCall(instr, resolution);
      return;
    }
    // Attribute builtins: cuda.threadIdx.x, cuda.laneid, z.real, ...
    if (instr->operands.empty())
      values[instr] = emitBuiltin(instr, resolution, {});
    else
      values[instr] = emitBuiltin(instr, resolution, {valueOf(instr->operands[0])});
    return;
  case Resolution::Kind::ArrayAttribute:
    values[instr] = emitArrayAttribute(instr, resolution);
    return;
  case Resolution::Kind::ArrayItem:
  case Resolution::Kind::ArrayView:
  case Resolution::Kind::TupleItem:
  case Resolution::Kind::TupleDynamicItem:
  case Resolution::Kind::TupleSlice:
  case Resolution::Kind::RecordField:
    values[instr] = emitGetItem(instr, resolution);
    return;
  case Resolution::Kind::ArrayStore: {
    ir::Value *array = valueOf(instr->operands[0]);
    std::vector<ir::Value *> operands{array};
    for (ir::Value *index : indexValues(instr->operands[1]))
      operands.push_back(index);
    const auto *arrayType = llvm::cast<ArrayType>(array->type());
    operands.push_back(valueAs(instr->operands[2], arrayType->elementType()));
    emit(ir::Opcode::ArrayStore, nullptr, operands);
    return;
  }
  case Resolution::Kind::ArraySliceStore:
    emitSliceStore(instr, resolution);
    return;
  case Resolution::Kind::PointerItem:
    values[instr] = emit(ir::Opcode::PointerLoad, plain(resolution.result),
                         {valueOf(instr->operands[0]), operand(instr, 1, resolution)});
    return;
  case Resolution::Kind::PointerStore:
    emit(ir::Opcode::PointerStore, nullptr,
         {valueOf(instr->operands[0]), operand(instr, 1, resolution),
          operand(instr, 2, resolution)});
    return;
  case Resolution::Kind::RecordStore: {
    size_t valueIndex = instr->op == Op::SetItem ? 2 : 1;
    if (llvm::isa<ArrayType>(typeOf(instr->operands[valueIndex]))) {
      emitNestedArrayStore(valueOf(instr->operands[0]), resolution.detail,
                           valueOf(instr->operands[valueIndex]));
      return;
    }
    ir::Instruction *set =
        emit(ir::Opcode::RecordSet, nullptr,
             {valueOf(instr->operands[0]),
              valueAs(instr->operands[valueIndex], resolution.operandTypes[valueIndex])});
    set->text = resolution.detail;
    return;
  }
  case Resolution::Kind::LoopOperation:
    values[instr] = emitLoopOperation(instr, resolution);
    return;
  case Resolution::Kind::UfuncCall:
    values[instr] = emitUfunc(instr, resolution);
    return;
  case Resolution::Kind::ArrayMethod:
    values[instr] = resolution.detail == "view"   ? emitViewAs(instr, resolution)
                    : resolution.detail == "copy" ? emitArrayCopy(instr, resolution)
                                                  : emitReshape(instr, resolution);
    return;
  case Resolution::Kind::Assertion: {
    ir::Instruction *assertion =
        emit(ir::Opcode::Assert, nullptr, {convert(valueOf(instr->operands[0]), types.boolean())});
    if (instr->operands.size() > 1)
      if (const auto *message = llvm::dyn_cast<StringLiteralType>(typeOf(instr->operands[1])))
        assertion->text = message->stringValue();
    if (function.options.debug)
      function.raises = true;
    return;
  }
  }
}

ir::Value *FunctionEmitter::emitLoopOperation(const ssa::Instr *instr,
                                              const Resolution &resolution) {
  const Type *result = plain(resolution.result);
  switch (instr->op) {
  case Op::LoopStart:
    return intConstant(result, 0);
  case Op::LoopNext:
    return emit(ir::Opcode::Add, result, {valueOf(instr->operands[0]), intConstant(result, 1)});
  case Op::LoopTest:
    return emit(ir::Opcode::Lt, types.boolean(),
                {valueOf(instr->operands[0]), valueOf(instr->operands[1])});
  case Op::IterCount: {
    ir::Value *iterable = valueOf(instr->operands[0]);
    if (resolution.detail == "range")
      return emit(ir::Opcode::RangeLength, result, {iterable});
    if (resolution.detail == "array") {
      ir::Instruction *length = emit(ir::Opcode::ArrayShape, types.int64(), {iterable});
      length->index = 0;
      return length;
    }
    const auto *tuple = llvm::cast<TupleType>(plain(typeOf(instr->operands[0])));
    return intConstant(types.int64(), static_cast<int64_t>(tuple->size()));
  }
  case Op::IterItem: {
    ir::Value *iterable = valueOf(instr->operands[0]);
    ir::Value *counter = valueOf(instr->operands[1]);
    if (resolution.detail == "range")
      return emit(ir::Opcode::RangeItem, result, {iterable, counter});
    if (resolution.detail == "array") {
      const auto *array = llvm::cast<ArrayType>(iterable->type());
      if (array->rank() == 1)
        return emit(ir::Opcode::ArrayLoad, result, {iterable, convert(counter, types.int64())});
      ir::Instruction *view =
          emit(ir::Opcode::ArrayView, result, {iterable, convert(counter, types.int64())});
      view->viewItems.push_back({false});
      return view;
    }
    if (llvm::cast<TupleType>(iterable->type())->size() == 0)
      return nullptr;
    return emit(ir::Opcode::TupleGetDynamic, result, {iterable, convert(counter, types.int64())});
  }
  default:
    return nullptr;
  }
}

} // namespace kiln::emit
