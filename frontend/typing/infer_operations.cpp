//===- frontend/typing/infer_operations.cpp - Typing each operation -------===//
//
// How FunctionTyper types one SSA instruction: arguments, constants and the
// module values a function reads; phis, which unify what flows in; and
// every other operation from its typed operands, by the rules of
// typing_rules.h. An operation that fails on an optional operand is typed
// again with the operand's value type, as Numba's templates are.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/constant_folding.h"
#include "frontend/typing/function_typer.h"
#include "frontend/typing/typing_rules.h"

namespace kiln {

using ssa::Op;

namespace {

bool isOmitted(const Type *type) {
  const auto *entity = llvm::dyn_cast<EntityType>(type);
  return entity && entity->entityKindOf() == EntityType::EntityKind::Omitted;
}

} // namespace

Typing FunctionTyper::typeInstr(const Instr *instr) {
  Typing typed = typeOperation(instr);
  if (typed)
    return typed;
  Typing unwrapped = typeWithOptionalsUnwrapped(instr);
  return unwrapped ? std::move(unwrapped) : std::move(typed);
}

Typing FunctionTyper::typeWithOptionalsUnwrapped(const Instr *instr) {
  auto isOptional = [&](const Instr *operand) {
    return llvm::isa_and_nonnull<OptionalType>(spec.valueTypes[operand->id]);
  };
  if (llvm::none_of(instr->operands, isOptional))
    return Typing::cascade();
  bool unwraps = false;
  switch (instr->op) {
  case Op::Binary:
  case Op::Unary:
  case Op::Truth:
  case Op::GetItem:
  case Op::SetItem:
    unwraps = true;
    break;
  case Op::Compare:
    unwraps = instr->compareOp != ast::CompareOp::Is && instr->compareOp != ast::CompareOp::IsNot;
    break;
  case Op::Call:
    // Builtins, not device functions: those are specialized for optional
    // arguments as for any other.
    if (const Type *callee = typeOf(instr->operands[0]))
      unwraps = typing::builtinOf(callee) != nullptr;
    break;
  default:
    break;
  }
  if (!unwraps)
    return Typing::cascade();
  unwrappingOptionals = true;
  Typing typed = typeOperation(instr);
  unwrappingOptionals = false;
  if (!typed)
    return typed;
  std::vector<const Type *> &operandTypes = typed->operandTypes;
  operandTypes.resize(std::max(operandTypes.size(), instr->operands.size()), nullptr);
  for (size_t i = 0; i < instr->operands.size(); ++i)
    if (isOptional(instr->operands[i]) && !operandTypes[i])
      operandTypes[i] =
          llvm::cast<OptionalType>(spec.valueTypes[instr->operands[i]->id])->valueType();
  return typed;
}

Typing FunctionTyper::typeOperation(const Instr *instr) {
  switch (instr->op) {
  case Op::Argument: {
    // An omitted argument has its default's type (Numba's ArgConstraint).
    const Type *type = spec.argTypes[instr->index];
    if (isOmitted(type))
      type = llvm::cast<EntityType>(type)->receiverType();
    return Resolution::value(type);
  }
  case Op::Constant: {
    // A constant written in the kernel, or a module global frozen in.
    const Type *type = instr->constant->type(types, instr->fromLiteral ? ConstantRole::Literal
                                                                       : ConstantRole::Global);
    if (!type)
      return Typing::error(DiagID::err_integer_too_large_for_type, {instr->constant->repr()});
    if (llvm::isa<StringLiteralType>(type))
      return Resolution::make(Resolution::Kind::CompileTime, type);
    return Resolution::value(type);
  }
  case Op::Global:
    return typeGlobal(*instr->global);
  case Op::Undefined:
    return Typing::error(DiagID::err_undefined_variable, {instr->name});
  case Op::Phi:
    return typePhi(instr);
  default:
    break;
  }

  // Everything else needs typed operands; an Undefined operand is a read of
  // a variable before its assignment.
  for (const Instr *operand : instr->operands) {
    if (operand->op == Op::Undefined && !typeUnassignedRead(operand))
      return Typing::error(DiagID::err_undefined_variable, {operand->name}, operand->range);
    if (!typeOf(operand))
      return Typing::cascade();
  }
  return typeWithTypedOperands(instr);
}

Typing FunctionTyper::typeGlobal(const ModuleValue &value) {
  switch (value.kind()) {
  case ModuleValue::Kind::Symbol: {
    const Symbol *symbol = value.symbolValue();
    if (symbol->kind == Symbol::Kind::DType || symbol->kind == Symbol::Kind::Constant ||
        symbol->is(BuiltinId::CudaLaneid) || symbol->is(BuiltinId::CudaWarpsize))
      return typing::getAttribute(
          types,
          types.entity(EntityType::EntityKind::Builtin,
                       BuiltinSymbols::get().lookup(symbol->qualifiedName.rsplit('.').first), ""),
          symbol->name());
    return Resolution::make(
        Resolution::Kind::CompileTime,
        types.entity(EntityType::EntityKind::Builtin, symbol, symbol->displayName()));
  }
  case ModuleValue::Kind::Function: {
    const FunctionDecl *decl = value.functionValue();
    return Resolution::make(Resolution::Kind::CompileTime,
                            types.entity(EntityType::EntityKind::Function, decl,
                                         decl->kindName().str() + " '" + decl->name + "'"));
  }
  case ModuleValue::Kind::Overload: {
    const OverloadSet &overloads = value.overloadValue();
    return Resolution::make(Resolution::Kind::CompileTime,
                            types.entity(EntityType::EntityKind::Overload, &overloads,
                                         "overloaded function '" + overloads.name + "'"));
  }
  case ModuleValue::Kind::Type:
    // A type made at module level or captured (a record type for
    // cuda.shared.array(n, dtype=dt)), used as a dtype.
    return Resolution::make(Resolution::Kind::CompileTime, types.numberClass(value.typeValue()));
  case ModuleValue::Kind::Array: {
    const ConstantArray &array = value.arrayValue();
    return Resolution::value(types.array(array.elementType, unsigned(array.shape.size()),
                                         array.layout, /*readonly=*/!array.address));
  }
  default:
    return Typing::error(DiagID::err_compile_time_value, {value.describe()});
  }
}

Typing FunctionTyper::typeWithTypedOperands(const Instr *instr) {
  switch (instr->op) {
  case Op::Closure: {
    std::vector<const Type *> captured;
    for (const Instr *operand : instr->operands)
      captured.push_back(typeOf(operand));
    return Resolution::make(Resolution::Kind::CompileTime,
                            types.closure(instr->function, types.tuple(captured), instr->name));
  }
  case Op::Binary:
    return typing::binaryOperator(types, instr->binaryOp, operandType(instr, 0),
                                  operandType(instr, 1));
  case Op::Unary:
    return typing::unaryOperator(types, instr->unaryOp, operandType(instr, 0));
  case Op::Compare:
    return typeCompare(instr);
  case Op::Truth:
    return typing::truth(types, operandType(instr, 0));
  case Op::GetAttr:
    return typeGetAttr(instr);
  case Op::SetAttr:
    return typing::setAttribute(types, operandType(instr, 0), instr->name, operandType(instr, 1));
  case Op::GetItem:
    if (const auto *tuple = llvm::dyn_cast<TupleType>(operandType(instr, 0));
        tuple && instr->operands[1]->op == Op::BuildSlice)
      return typeTupleSlice(instr, *tuple);
    return typing::getItem(types, operandType(instr, 0),
                           typing::integerOfIntEnum(operandType(instr, 1)));
  case Op::SetItem:
    return typing::setItem(types, operandType(instr, 0),
                           typing::integerOfIntEnum(operandType(instr, 1)), operandType(instr, 2));
  case Op::Call:
    return typeCall(instr);
  case Op::BuildTuple:
    return typeBuildTuple(instr);
  case Op::BuildSlice: {
    for (size_t i = 0; i < 3; ++i) {
      const Type *part = operandType(instr, i);
      if (part != types.none() && !llvm::isa<IntegerType>(part) &&
          !llvm::isa<IntegerLiteralType>(part))
        return Typing::error(DiagID::err_bad_array_index, {"a slice", part->str()},
                             instr->operands[i]->range);
    }
    bool hasStep = operandType(instr, 2) != types.none();
    Resolution resolution = Resolution::make(Resolution::Kind::Value, types.slice(hasStep));
    resolution.operandTypes = {types.int64(), types.int64(), types.int64()};
    return resolution;
  }
  case Op::TupleGet: {
    const auto *tuple = llvm::dyn_cast<TupleType>(operandType(instr, 0));
    if (!tuple)
      return Typing::error(DiagID::err_unpack_non_tuple, {operandType(instr, 0)->str()});
    if (std::to_string(tuple->size()) != instr->name)
      return Typing::error(DiagID::err_unpack_count,
                           {tuple->str(), countOf(std::stoul(instr->name), "value")});
    Resolution resolution =
        Resolution::make(Resolution::Kind::TupleItem, tuple->elementTypes()[instr->index]);
    resolution.index = instr->index;
    return resolution;
  }
  case Op::IterCount:
    return typing::iterCount(types, operandType(instr, 0));
  case Op::IterItem:
    return typing::iterItem(types, operandType(instr, 0), operandType(instr, 1));
  case Op::LoopStart:
  case Op::LoopNext: {
    Resolution resolution =
        Resolution::make(Resolution::Kind::LoopOperation, operandType(instr, 0));
    return resolution;
  }
  case Op::LoopTest:
    return Resolution::make(Resolution::Kind::LoopOperation, types.boolean());
  case Op::Assert: {
    Typing test = typing::truth(types, operandType(instr, 0));
    if (!test)
      return test;
    if (instr->operands.size() > 1 && !isStrLiteral(operandType(instr, 1)) &&
        operandType(instr, 1) != types.none())
      return Typing::error(DiagID::err_expected_string, {operandType(instr, 1)->str()},
                           instr->operands[1]->range);
    return Resolution::make(Resolution::Kind::Assertion, types.none());
  }
  default:
    return Typing::cascade();
  }
}

Typing FunctionTyper::typeCompare(const Instr *instr) {
  Typing typed = typing::compareOperator(types, instr->compareOp, operandType(instr, 0),
                                         operandType(instr, 1));
  // Numba's dead-branch pruning evaluates a comparison of constants
  // (literals, module constants, locals whose reaching assignment is one)
  // before typing: a branch on one is decided (decidedSuccessor).
  // So is one of values typing decided (`len(args) == 2` in a function
  // of `*args`).
  auto known = [&](const Instr *operand) -> const ConstantValue * {
    if (operand->op == Op::Constant)
      return &*operand->constant;
    const Resolution &resolution = spec.resolutions[operand->id];
    bool decided = resolution.kind == Resolution::Kind::Constant && resolution.constant &&
                   resolution.constant->isNumber();
    return decided ? &*resolution.constant : nullptr;
  };
  const ConstantValue *lhs = known(instr->operands[0]);
  const ConstantValue *rhs = known(instr->operands[1]);
  if (typed && typed->kind == Resolution::Kind::Operator && lhs && rhs)
    if (FoldResult folded = foldCompare(instr->compareOp, *lhs, *rhs); folded.value) {
      Resolution decided = Resolution::make(Resolution::Kind::Constant, types.boolean());
      decided.constant = std::move(*folded.value);
      return decided;
    }
  return typed;
}

Typing FunctionTyper::typeGetAttr(const Instr *instr) {
  // Functions of Kiln's prelude modules, as in cuda.random.xoroshiro128p_next.
  if (const Symbol *module = typing::builtinOf(operandType(instr, 0));
      module && module->kind == Symbol::Kind::Module &&
      !BuiltinSymbols::get().member(*module, instr->name))
    if (const FunctionDecl *decl =
            spec.decl.scope->importedFunction(module->qualifiedName, instr->name))
      return Resolution::make(Resolution::Kind::CompileTime,
                              types.entity(EntityType::EntityKind::Function, decl,
                                           decl->kindName().str() + " '" + decl->name + "'"));
  Typing typed = typing::getAttribute(types, operandType(instr, 0), instr->name);
  if (typed && typed->operandTypes.empty())
    typed->operandTypes = {nullptr};
  // Methods numba.extending.overload_method gives the receiver's type,
  // where Numba's own attributes have none of that name.
  if (!typed && !typed.error().silent && spec.decl.scope) {
    const Type *receiver = types.unliteral(operandType(instr, 0));
    if (const OverloadSet *overloads =
            spec.decl.scope->overloadedMethod(typing::numbaTypeNames(receiver), instr->name))
      return Resolution::make(Resolution::Kind::CompileTime,
                              types.overloadedMethod(overloads, receiver, instr->name));
  }
  return typed;
}

Typing FunctionTyper::typeBuildTuple(const Instr *instr) {
  // A tuple of classes (`isinstance(x, (int, float32))`) exists only
  // while typing.
  std::vector<const Type *> classes;
  for (size_t i = 0; i < instr->operands.size(); ++i)
    if (typing::isClass(types, operandType(instr, i)))
      classes.push_back(operandType(instr, i));
  if (!classes.empty() && classes.size() == instr->operands.size())
    return Resolution::make(Resolution::Kind::CompileTime, types.tuple(classes));
  std::vector<const Type *> elements;
  for (size_t i = 0; i < instr->operands.size(); ++i) {
    const Type *element = operandType(instr, i);
    if (element->isCompileTimeOnly() && !llvm::isa<SliceType>(element))
      return Typing::error(DiagID::err_compile_time_value, {element->str()},
                           instr->operands[i]->range);
    elements.push_back(element);
  }
  return Resolution::value(types.tuple(elements));
}

Typing FunctionTyper::typePhi(const Instr *phi) {
  // Phis accumulate, as Numba's type variables do: the type only widens.
  const Type *unified = typeOf(phi);
  bool anyUndefined = false;
  for (size_t i = 0; i < phi->operands.size(); ++i) {
    const Instr *incoming = phi->operands[i];
    if (!edgeCanRun(*phi->incoming[i], *currentBlock))
      continue;
    const Type *type = typeOf(incoming);
    anyUndefined |= incoming->op == Op::Undefined;
    if (!type)
      continue; // undefined on that path, or not typed yet
    if (!unified) {
      unified = type;
      continue;
    }
    const Type *next = types.unify(unified, type);
    if (!next) {
      // The value of `a if c else b`, `a or b`, ... is a hidden variable:
      // name the expression instead.
      llvm::StringRef name = phi->name;
      if (name.starts_with("$"))
        return Typing::error(DiagID::err_cannot_unify_expression,
                             {unified->str(), type->str(),
                              name.starts_with("$ifexp") ? "conditional expression"
                              : name.starts_with("$and") ? "'and' expression"
                              : name.starts_with("$or")  ? "'or' expression"
                                                         : "expression"});
      return Typing::error(DiagID::err_cannot_unify, {unified->str(), type->str(), phi->name});
    }
    unified = next;
  }
  if (!unified) {
    // A variable unassigned on some path that gets no type from the others
    // (`total += x` before any `total = ...`) is read before assignment,
    // unless what failed was reported already.
    if (anyUndefined && !llvm::StringRef(phi->name).starts_with("$")) {
      Typing failure = Typing::error(DiagID::err_undefined_variable, {phi->name});
      TypingError error = failure.error();
      error.unlessOtherErrors = true;
      return error;
    }
    return Typing::cascade();
  }
  return Resolution::value(unified);
}

bool FunctionTyper::typeUnassignedRead(const Instr *read) {
  // Numba compiles a read that no assignment reaches where the variable is
  // assigned earlier in the source (in another branch): the read has that
  // assignment's type, and its value is undefined. Kiln's is zero, for
  // numbers and bools; reads of other values stay errors.
  if (read->deleted)
    return false;
  for (const ssa::VariableDef &variable : spec.ssa->variables) {
    if (variable.name != read->name || variable.value->isPhi() ||
        variable.value->op == Op::Undefined ||
        variable.range.begin.file != read->range.begin.file ||
        variable.range.begin.offset >= read->range.begin.offset)
      continue;
    const Type *type = typeOf(variable.value);
    if (!type)
      return true; // typed once the assignment is
    type = types.unliteral(type);
    if (!type->isScalar())
      return false;
    spec.valueTypes[read->id] = type;
    return true;
  }
  return false;
}

Typing FunctionTyper::typeTupleSlice(const Instr *instr, const TupleType &tuple) {
  // t[a:b:c] with bounds known at compile time, as Numba's static_getitem:
  // a tuple of the elements Python's slice picks.
  const Instr *slice = instr->operands[1];
  std::optional<int64_t> bounds[3];
  for (size_t i = 0; i < 3; ++i) {
    const Type *part = typeOf(slice->operands[i]);
    if (const auto *literal = llvm::dyn_cast<IntegerLiteralType>(part);
        literal && !literal->isUnsigned())
      bounds[i] = literal->bits();
    else if (part != types.none())
      return Typing::error(DiagID::err_bad_array_index, {tuple.str(), "a slice of " + part->str()});
  }
  auto size = static_cast<int64_t>(tuple.size());
  int64_t step = bounds[2].value_or(1);
  if (step == 0)
    return Typing::error(DiagID::err_tuple_slice_step_zero);
  auto clamp = [&](std::optional<int64_t> bound, int64_t whenAbsent) {
    if (!bound)
      return whenAbsent;
    int64_t value = *bound < 0 ? *bound + size : *bound;
    return step > 0 ? std::clamp<int64_t>(value, 0, size)
                    : std::clamp<int64_t>(value, -1, size - 1);
  };
  int64_t start = clamp(bounds[0], step > 0 ? 0 : size - 1);
  int64_t stop = clamp(bounds[1], step > 0 ? size : -1);
  std::vector<const Type *> elements;
  std::vector<ConstantValue> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    elements.push_back(tuple.elementTypes()[static_cast<size_t>(i)]);
    picked.push_back(ConstantValue::integer(i));
  }
  const TupleType *result = types.tuple(elements);
  if (tuple.isCompileTimeOnly() && !result->isCompileTimeOnly())
    return Typing::error(DiagID::err_compile_time_value, {tuple.str()});
  Resolution resolution = Resolution::make(Resolution::Kind::TupleSlice, result);
  resolution.constant = ConstantValue::tuple(std::move(picked));
  return resolution;
}

} // namespace kiln
