//===- backend/codegen/lower_function.cpp - Blocks, values, casts and calls -------===//

#include "backend/codegen/function_lowering.h"
#include "backend/codegen/kernel_abi.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/ConvertUTF.h>

namespace kiln::backend {

FunctionLowering::FunctionLowering(ModuleLowering &module, const ir::Function &source,
                                   llvm::Function &target)
    : module(module), types(module.types), hooks(module.hooks), source(source), lowered(target),
      builder(lowered.getContext()) {
  if (source.options.fastmath)
    builder.setFastMathFlags(fastMathFlagsOf(source.options));
}

llvm::FastMathFlags fastMathFlagsOf(const JitOptions &options) {
  if (options.fastmathFlags.empty())
    return llvm::FastMathFlags::getFast();
  llvm::FastMathFlags flags;
  for (const std::string &flag : options.fastmathFlags) {
    if (flag == "nnan")
      flags.setNoNaNs();
    else if (flag == "ninf")
      flags.setNoInfs();
    else if (flag == "nsz")
      flags.setNoSignedZeros();
    else if (flag == "arcp")
      flags.setAllowReciprocal();
    else if (flag == "contract")
      flags.setAllowContract();
    else if (flag == "afn")
      flags.setApproxFunc();
    else if (flag == "reassoc")
      flags.setAllowReassoc();
  }
  return flags;
}

HookSite FunctionLowering::site(ir::Location location) {
  return HookSite{builder, source, threadContext, location, currentOperation};
}

void FunctionLowering::run() {
  if (source.kind == ir::Function::Kind::External)
    return; // defined in the CUDA C/C++ or PTX it links with
  if (hooks.passesThreadContext())
    threadContext = lowered.getArg(0);
  debugScope = module.subprogram(source, lowered);
  allocaBlock = llvm::BasicBlock::Create(lowered.getContext(), "entry", &lowered);
  builder.SetInsertPoint(allocaBlock);
  if (source.kind == ir::Function::Kind::Kernel) {
    bindKernelArguments();
  } else {
    unsigned next = hooks.passesThreadContext() ? 1 : 0;
    for (const ir::Argument *argument : source.arguments)
      if (types.value(argument->type()))
        values[argument] = lowered.getArg(next++);
  }

  for (const auto &block : source.blocks)
    blocks[block.get()] =
        llvm::BasicBlock::Create(lowered.getContext(), "bb" + llvm::Twine(block->id), &lowered);
  for (const auto &block : source.blocks) {
    builder.SetInsertPoint(blocks[block.get()]);
    for (const ir::Instruction *instruction : block->instructions)
      if (instruction->opcode == ir::Opcode::Phi)
        if (llvm::Type *type = types.value(instruction->type()))
          values[instruction] =
              builder.CreatePHI(type, static_cast<unsigned>(instruction->operands.size()));
  }
  builder.SetInsertPoint(allocaBlock);
  builder.CreateBr(blocks[source.entry()]);

  for (const auto &block : source.blocks)
    lowerBlock(*block);
  fillPhis();
}

void FunctionLowering::bindKernelArguments() {
  // Consume the flat parameters in the order kernelParameters() lists them.
  unsigned next = hooks.passesThreadContext() ? 1 : 0;
  auto take = [&]() { return lowered.getArg(next++); };
  std::function<llvm::Value *(const Type *)> build = [&](const Type *type) -> llvm::Value * {
    if (llvm::isa<BooleanType>(type))
      return builder.CreateICmpNE(take(), builder.getInt8(0));
    if (llvm::isa<IntegerType, FloatType, RecordType, DateTimeType, PointerType>(type))
      return take();
    if (llvm::isa<ComplexType>(type)) {
      llvm::Value *real = take();
      return makeComplex(real, take());
    }
    if (const auto *array = llvm::dyn_cast<ArrayType>(type)) {
      llvm::Value *result = llvm::PoisonValue::get(types.array(array->rank()));
      result = builder.CreateInsertValue(result, take(), {0});
      for (unsigned d = 0; d < array->rank(); ++d)
        result = builder.CreateInsertValue(result, take(), {1, d});
      for (unsigned d = 0; d < array->rank(); ++d)
        result = builder.CreateInsertValue(result, take(), {2, d});
      return result;
    }
    // An enum member is its value, which the launch passes as the
    // member's only part.
    if (const auto *member = llvm::dyn_cast<EnumMemberType>(type))
      return build(member->valueType());
    if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
      llvm::Value *result = llvm::PoisonValue::get(types.value(type));
      for (size_t i = 0; i < tuple->size(); ++i)
        if (llvm::Value *element = build(tuple->elementTypes()[i]))
          result = builder.CreateInsertValue(result, element, {static_cast<unsigned>(i)});
      return result;
    }
    return nullptr;
  };
  for (const ir::Argument *argument : source.arguments) {
    llvm::Value *value = build(argument->type());
    if (value)
      value->setName(argument->name);
    values[argument] = value;
  }
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::valueOf(const ir::Value *value) {
  if (!value)
    return nullptr;
  switch (value->kind()) {
  case ir::Value::Kind::Constant:
    return lowerConstant(value->type(), llvm::cast<ir::Constant>(value)->value);
  case ir::Value::Kind::Undefined: {
    llvm::Type *type = types.value(value->type());
    return type ? llvm::Constant::getNullValue(type) : nullptr;
  }
  case ir::Value::Kind::Argument:
  case ir::Value::Kind::Instruction:
    break;
  }
  auto found = values.find(value);
  return found == values.end() ? nullptr : found->second;
}

llvm::Value *FunctionLowering::lowerConstant(const Type *type, const ConstantValue &constant) {
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(type))
    return lowerConstant(member->valueType(), constant);
  llvm::Type *llvmType = types.value(type);
  if (!llvmType)
    return nullptr;
  if (llvm::isa<BooleanType>(type))
    return builder.getInt1(constant.truthy());
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
    Int128 value = constant.kind() == ConstantValue::Kind::Float
                       ? static_cast<Int128>(constant.floatValue())
                       : constant.intValue128();
    return llvm::ConstantInt::get(llvmType, static_cast<uint64_t>(value), integer->signedness());
  }
  if (llvm::isa<FloatType>(type))
    return llvm::ConstantFP::get(llvmType, constant.kind() == ConstantValue::Kind::Complex
                                               ? constant.realPart()
                                               : constant.asDouble());
  if (const auto *complex = llvm::dyn_cast<ComplexType>(type)) {
    llvm::Type *part = types.value(complex->elementType());
    bool isComplex = constant.kind() == ConstantValue::Kind::Complex;
    return llvm::ConstantStruct::get(
        llvm::cast<llvm::StructType>(llvmType),
        {llvm::ConstantFP::get(part, isComplex ? constant.realPart() : constant.asDouble()),
         llvm::ConstantFP::get(part, isComplex ? constant.imagPart() : 0.0)});
  }
  if (const auto *chars = llvm::dyn_cast<CharSequenceType>(type))
    return charSequenceConstant(constant, chars);
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
    std::vector<llvm::Constant *> elements;
    for (size_t i = 0; i < tuple->size(); ++i)
      elements.push_back(llvm::cast<llvm::Constant>(
          lowerConstant(tuple->elementTypes()[i], constant.elements()[i])));
    return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(llvmType), elements);
  }
  return llvm::Constant::getNullValue(llvmType);
}

llvm::Constant *FunctionLowering::charSequenceConstant(const ConstantValue &text,
                                                       const CharSequenceType *to) {
  llvm::StringRef value = text.stringValue();
  std::vector<uint32_t> units;
  if (text.kind() == ConstantValue::Kind::Bytes) {
    for (char byte : value)
      units.push_back(static_cast<unsigned char>(byte));
  } else {
    // NumPy's U dtype holds UCS4 code points.
    std::vector<llvm::UTF32> points(value.size());
    const auto *in = reinterpret_cast<const llvm::UTF8 *>(value.data());
    llvm::UTF32 *out = points.data();
    llvm::ConvertUTF8toUTF32(&in, in + value.size(), &out, points.data() + points.size(),
                             llvm::lenientConversion);
    units.assign(points.data(), out);
  }
  units.resize(to->length(), 0);
  llvm::LLVMContext &context = lowered.getContext();
  if (to->isUnicode())
    return llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint32_t>(units));
  std::vector<uint8_t> bytes(units.begin(), units.end());
  return llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint8_t>(bytes));
}

llvm::Value *FunctionLowering::truth(llvm::Value *value, const Type *type) {
  if (llvm::isa<BooleanType>(type))
    return value;
  if (llvm::isa<IntegerType>(type))
    return builder.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
  if (llvm::isa<FloatType>(type)) {
    // NaN is true, as in Python.
    llvm::IRBuilder<>::FastMathFlagGuard guard(builder);
    builder.clearFastMathFlags();
    return builder.CreateFCmpUNE(value, llvm::ConstantFP::get(value->getType(), 0.0));
  }
  if (const auto *complex = llvm::dyn_cast<ComplexType>(type)) {
    llvm::Value *real = truth(builder.CreateExtractValue(value, {0}), complex->elementType());
    llvm::Value *imag = truth(builder.CreateExtractValue(value, {1}), complex->elementType());
    return builder.CreateOr(real, imag);
  }
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type))
    return builder.getInt1(tuple->size() != 0);
  if (llvm::isa<RangeType>(type)) {
    llvm::Value *start = builder.CreateExtractValue(value, {0});
    llvm::Value *stop = builder.CreateExtractValue(value, {1});
    llvm::Value *step = builder.CreateExtractValue(value, {2});
    llvm::Value *zero = llvm::ConstantInt::get(step->getType(), 0);
    return builder.CreateSelect(builder.CreateICmpSGT(step, zero),
                                builder.CreateICmpSLT(start, stop),
                                builder.CreateICmpSGT(start, stop));
  }
  return builder.getInt1(true);
}

llvm::Value *FunctionLowering::fromMachineInteger(llvm::Value *value, bool isSigned,
                                                  const Type *to) {
  if (llvm::isa<BooleanType>(to))
    return value->getType()->isIntegerTy(1)
               ? value
               : builder.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
  llvm::Type *target = types.value(to);
  if (llvm::isa<FloatType>(to))
    return isSigned ? builder.CreateSIToFP(value, target) : builder.CreateUIToFP(value, target);
  return builder.CreateIntCast(value, target, isSigned && !value->getType()->isIntegerTy(1));
}

llvm::Value *FunctionLowering::cast(llvm::Value *value, const Type *from, const Type *to) {
  if (from == to)
    return value;
  if (const auto *optional = llvm::dyn_cast<OptionalType>(to)) {
    // None is no value and a false flag; a value is itself and a true one.
    llvm::Type *target = types.value(to);
    if (llvm::isa<NoneType>(from))
      return llvm::Constant::getNullValue(target);
    const auto *fromOptional = llvm::dyn_cast<OptionalType>(from);
    llvm::Value *held = fromOptional ? builder.CreateExtractValue(value, {0}) : value;
    held = cast(held, fromOptional ? fromOptional->valueType() : from, optional->valueType());
    llvm::Value *present =
        fromOptional ? builder.CreateExtractValue(value, {1}) : builder.getTrue();
    llvm::Value *result = llvm::PoisonValue::get(target);
    if (held)
      result = builder.CreateInsertValue(result, held, {0});
    return builder.CreateInsertValue(result, present, {1});
  }
  if (const auto *optional = llvm::dyn_cast<OptionalType>(from))
    return cast(builder.CreateExtractValue(value, {0}), optional->valueType(), to);
  if (!value)
    return value;
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(from))
    return cast(value, member->valueType(), to);
  // A datetime64 or timedelta64 is its int64 count.
  if (llvm::isa<DateTimeType>(from) && llvm::isa<IntegerType>(to))
    return value;
  if (llvm::isa<BooleanType>(to))
    return truth(value, from);
  llvm::Type *target = types.value(to);

  if (llvm::isa<BooleanType>(from)) {
    if (llvm::isa<IntegerType>(to))
      return builder.CreateZExt(value, target);
    if (llvm::isa<FloatType>(to))
      return builder.CreateUIToFP(value, target);
    if (const auto *complex = llvm::dyn_cast<ComplexType>(to))
      return makeComplex(builder.CreateUIToFP(value, types.value(complex->elementType())),
                         llvm::ConstantFP::get(types.value(complex->elementType()), 0.0));
  }
  if (const auto *integer = llvm::dyn_cast<IntegerType>(from)) {
    bool isSigned = integer->signedness();
    if (llvm::isa<IntegerType>(to))
      return builder.CreateIntCast(value, target, isSigned);
    if (llvm::isa<FloatType>(to)) {
      // To bfloat16 through float64, which holds 32-bit integers exactly:
      // one rounding, as cvt.rn.bf16.s32, where float32 would round twice.
      llvm::Type *exact = target->isBFloatTy() ? builder.getDoubleTy() : target;
      llvm::Value *converted =
          isSigned ? builder.CreateSIToFP(value, exact) : builder.CreateUIToFP(value, exact);
      return builder.CreateFPTrunc(converted, target);
    }
    if (const auto *complex = llvm::dyn_cast<ComplexType>(to))
      return makeComplex(cast(value, from, complex->elementType()),
                         llvm::ConstantFP::get(types.value(complex->elementType()), 0.0));
  }
  if (llvm::isa<FloatType>(from)) {
    if (const auto *integer = llvm::dyn_cast<IntegerType>(to)) {
      // Saturating, NaN to 0: what cvt.rzi does on a GPU, defined on the host.
      return hooks.saturatingFloatToInteger(builder, value, llvm::cast<llvm::IntegerType>(target),
                                            integer->signedness());
    }
    if (llvm::isa<FloatType>(to)) {
      // float16 and bfloat16 have one width and different formats: convert
      // through float32, which holds both exactly.
      if (value->getType()->getPrimitiveSizeInBits() == target->getPrimitiveSizeInBits())
        return builder.CreateFPTrunc(builder.CreateFPExt(value, builder.getFloatTy()), target);
      return builder.CreateFPCast(value, target);
    }
    if (const auto *complex = llvm::dyn_cast<ComplexType>(to))
      return makeComplex(builder.CreateFPCast(value, types.value(complex->elementType())),
                         llvm::ConstantFP::get(types.value(complex->elementType()), 0.0));
  }
  if (llvm::isa<ComplexType>(from)) {
    if (const auto *complex = llvm::dyn_cast<ComplexType>(to)) {
      llvm::Type *part = types.value(complex->elementType());
      return makeComplex(builder.CreateFPCast(builder.CreateExtractValue(value, {0}), part),
                         builder.CreateFPCast(builder.CreateExtractValue(value, {1}), part));
    }
    // Numba never converts a complex number to a real one implicitly; an
    // explicit real part is what remains meaningful.
    const Type *part = llvm::cast<ComplexType>(from)->elementType();
    return cast(builder.CreateExtractValue(value, {0}), part, to);
  }
  // An array becomes a CPointer (cffi's from_buffer) as the address of its
  // data; to another array, only its layout changes.
  if (llvm::isa<ArrayType>(from))
    return llvm::isa<PointerType>(to) ? builder.CreateExtractValue(value, {0}) : value;
  if (const auto *fromTuple = llvm::dyn_cast<TupleType>(from)) {
    const auto *toTuple = llvm::cast<TupleType>(to);
    llvm::Value *result = llvm::PoisonValue::get(target);
    for (unsigned i = 0; i < toTuple->size(); ++i) {
      llvm::Value *element = cast(builder.CreateExtractValue(value, {i}),
                                  fromTuple->elementTypes()[i], toTuple->elementTypes()[i]);
      if (element)
        result = builder.CreateInsertValue(result, element, {i});
    }
    return result;
  }
  return value;
}

llvm::AllocaInst *FunctionLowering::entryAlloca(llvm::Type *type, uint64_t alignment,
                                                const llvm::Twine &name) {
  llvm::IRBuilder<> entry(allocaBlock, allocaBlock->begin());
  llvm::AllocaInst *slot = entry.CreateAlloca(type, nullptr, name);
  slot->setAlignment(llvm::Align(alignment));
  return slot;
}

llvm::BasicBlock *FunctionLowering::newBlock(const llvm::Twine &name) {
  llvm::BasicBlock *block = llvm::BasicBlock::Create(lowered.getContext(), name, &lowered);
  builder.SetInsertPoint(block);
  return block;
}

llvm::Value *FunctionLowering::makeComplex(llvm::Value *real, llvm::Value *imag) {
  llvm::Type *type =
      llvm::StructType::get(lowered.getContext(), {real->getType(), imag->getType()});
  llvm::Value *result = builder.CreateInsertValue(llvm::PoisonValue::get(type), real, {0});
  return builder.CreateInsertValue(result, imag, {1});
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

void FunctionLowering::lowerBlock(const ir::Block &block) {
  builder.SetInsertPoint(blocks[&block]);
  for (const ir::Instruction *instruction : block.instructions) {
    if (instruction->opcode == ir::Opcode::Phi)
      continue;
    currentLocation = instruction->location;
    currentOperation = module.operations.siteOf(*instruction);
    builder.SetCurrentDebugLocation(module.location(instruction->location, debugScope));
    if (llvm::Value *value = lowerInstruction(*instruction))
      values[instruction] = value;
  }
  currentLocation = block.terminator.location;
  currentOperation = module.operations.siteOf(block);
  builder.SetCurrentDebugLocation(module.location(block.terminator.location, debugScope));
  blockEnds[&block] = builder.GetInsertBlock();
  lowerTerminator(block);
}

llvm::Value *FunctionLowering::lowerInstruction(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  switch (instruction.opcode) {
  case Op::Phi:
    return nullptr;
  case Op::Cast: {
    // An optional value that is None has no value to convert: Numba's
    // optional_to_any raises TypeError.
    const Type *from = instruction.operands[0]->type();
    if (const auto *optional = llvm::dyn_cast<OptionalType>(from);
        optional && !llvm::isa<OptionalType>(instruction.type()))
      raiseUnless(builder.CreateExtractValue(valueOf(instruction.operands[0]), {1}), "TypeError",
                  "expected " + optional->valueType()->str() + ", got None", instruction.location);
    return cast(valueOf(instruction.operands[0]), from, instruction.type());
  }
  case Op::Neg:
  case Op::Not:
  case Op::Invert:
    return lowerUnary(instruction);
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::TrueDiv:
  case Op::FloorDiv:
  case Op::Mod:
  case Op::Pow:
  case Op::Shl:
  case Op::Shr:
  case Op::And:
  case Op::Or:
  case Op::Xor:
    return lowerBinary(instruction);
  case Op::Eq:
  case Op::Ne:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
    return lowerCompare(instruction);
  case Op::Select:
    return builder.CreateSelect(valueOf(instruction.operands[0]), valueOf(instruction.operands[1]),
                                valueOf(instruction.operands[2]));
  case Op::Call:
    return lowerCall(instruction);
  case Op::Intrinsic:
    return lowerIntrinsic(instruction);
  case Op::LibdeviceCall:
    return lowerLibdeviceCall(instruction);
  case Op::Print:
    lowerPrint(instruction);
    return nullptr;
  case Op::Assert:
    lowerAssert(instruction);
    return nullptr;
  default:
    return lowerArrayOperation(instruction);
  }
}

llvm::Value *FunctionLowering::lowerCall(const ir::Instruction &instruction) {
  const ir::Function &callee = *instruction.callee;
  if (callee.kind == ir::Function::Kind::External)
    return lowerExternalCall(instruction);
  llvm::Function *function = module.declare(callee);
  std::vector<llvm::Value *> arguments;
  if (threadContext)
    arguments.push_back(threadContext);
  for (const ir::Value *operand : instruction.operands)
    if (llvm::Value *value = valueOf(operand))
      arguments.push_back(value);
  llvm::CallInst *call = builder.CreateCall(function, arguments);
  return call->getType()->isVoidTy() ? nullptr : call;
}

llvm::Value *FunctionLowering::lowerExternalCall(const ir::Instruction &instruction) {
  const ir::Function &callee = *instruction.callee;
  llvm::Type *resultType = types.value(callee.returnType);
  if (std::optional<std::string> problem = hooks.externalCallProblem(callee.symbol)) {
    // The kernel still runs until it reaches the call.
    HookSite here = site(instruction.location);
    hooks.raiseUnsupported(here, "'" + callee.sourceName + "' ('" + callee.symbol +
                                     "') cannot run on the CPU engine: " + *problem);
    // Code after the call is unreachable; it goes on in a fresh block.
    builder.SetInsertPoint(
        llvm::BasicBlock::Create(lowered.getContext(), "after_unsupported", &lowered));
    return resultType ? llvm::Constant::getNullValue(resultType) : nullptr;
  }
  // Numba's ABI for foreign device functions: `int f(T *result, args...)`,
  // scalars by value, arrays and records as pointers to their data. The C
  // ABI (abi="c") returns the value itself: `T f(args...)`.
  std::vector<llvm::Type *> parameterTypes;
  std::vector<llvm::Value *> arguments;
  llvm::AllocaInst *result = nullptr;
  if (!callee.cAbi) {
    result = entryAlloca(resultType ? types.memory(callee.returnType) : types.i8(), 8, "result");
    parameterTypes.push_back(types.pointer());
    arguments.push_back(result);
  }
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    const Type *type = callee.arguments[i]->type();
    llvm::Value *value = valueOf(instruction.operands[i]);
    if (llvm::isa<ArrayType>(type))
      value = builder.CreateExtractValue(value, {0});
    else if (llvm::isa<BooleanType>(type))
      value = builder.CreateZExt(value, types.i8());
    if (!value)
      continue;
    parameterTypes.push_back(value->getType());
    arguments.push_back(value);
  }
  if (callee.cAbi) {
    llvm::Type *returned = resultType ? resultType : builder.getVoidTy();
    llvm::FunctionCallee function = module.module->getOrInsertFunction(
        callee.symbol, llvm::FunctionType::get(returned, parameterTypes, false));
    llvm::CallInst *call = builder.CreateCall(function, arguments);
    return resultType ? call : nullptr;
  }
  llvm::FunctionCallee function = module.module->getOrInsertFunction(
      callee.symbol, llvm::FunctionType::get(types.i32(), parameterTypes, false));
  builder.CreateCall(function, arguments);
  if (!resultType)
    return nullptr;
  return loadElement(result, callee.returnType);
}

void FunctionLowering::lowerTerminator(const ir::Block &block) {
  const ir::Terminator &terminator = block.terminator;
  switch (terminator.kind) {
  case ir::Terminator::Kind::Jump:
    builder.CreateBr(blocks[terminator.target]);
    return;
  case ir::Terminator::Kind::Branch:
    builder.CreateCondBr(valueOf(terminator.value), blocks[terminator.target],
                         blocks[terminator.falseTarget]);
    return;
  case ir::Terminator::Kind::Return:
    if (llvm::Value *value = valueOf(terminator.value);
        value && source.kind != ir::Function::Kind::Kernel)
      builder.CreateRet(value);
    else
      builder.CreateRetVoid();
    return;
  case ir::Terminator::Kind::Raise: {
    HookSite here = site(terminator.location);
    hooks.raise(here, terminator.exceptionClass, terminator.message);
    return;
  }
  }
}

void FunctionLowering::fillPhis() {
  for (const auto &block : source.blocks)
    for (const ir::Instruction *instruction : block->instructions) {
      if (instruction->opcode != ir::Opcode::Phi)
        continue;
      auto *phi = llvm::dyn_cast_or_null<llvm::PHINode>(values.lookup(instruction));
      if (!phi)
        continue;
      for (size_t i = 0; i < instruction->operands.size(); ++i)
        phi->addIncoming(valueOf(instruction->operands[i]), blockEnds[instruction->incoming[i]]);
    }
}

} // namespace kiln::backend
