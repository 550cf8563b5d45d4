//===- backend/codegen/lower_intrinsics.cpp - Target operations of the typed IR ---===//
//
// Thread indices, barriers and warp collectives go to the target hooks;
// atomics are LLVM atomics on both targets (with Numba's compare-and-swap
// loops for float min/max); bit operations and the exactly rounded math
// functions are LLVM intrinsics; the rest of math calls the target's
// library (libdevice or the C library) through the hooks.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/function_lowering.h"
#include "ir/libdevice.h"

#include <llvm/IR/Intrinsics.h>

namespace kiln::backend {

using I = ir::Intrinsic;

llvm::Value *FunctionLowering::lowerIntrinsic(const ir::Instruction &instruction) {
  HookSite here = site(instruction.location);
  auto operand = [&](size_t i) { return valueOf(instruction.operands[i]); };
  auto resultOf = [&](llvm::Value *value, bool isSigned) {
    return fromMachineInteger(value, isSigned, instruction.type());
  };

  switch (instruction.intrinsic) {
  case I::ThreadIdx:
  case I::BlockIdx:
  case I::BlockDim:
  case I::GridDim:
  case I::LaneId:
  case I::WarpSize:
    return resultOf(hooks.readIndex(here, instruction.intrinsic, instruction.index), true);
  case I::SyncThreads:
    hooks.syncThreads(here);
    return nullptr;
  case I::SyncThreadsCount:
  case I::SyncThreadsAnd:
  case I::SyncThreadsOr:
    return resultOf(hooks.syncThreadsReduce(here, instruction.intrinsic, operand(0)), true);
  case I::SyncWarp:
    hooks.syncWarp(here, operand(0));
    return nullptr;
  case I::GridSync:
    hooks.gridSync(here);
    return nullptr;
  case I::ThreadFence:
  case I::ThreadFenceBlock:
  case I::ThreadFenceSystem:
    hooks.fence(here, instruction.intrinsic);
    return nullptr;
  case I::Nanosleep:
    hooks.nanosleep(here, operand(0));
    return nullptr;

  case I::AtomicAdd:
  case I::AtomicSub:
  case I::AtomicAnd:
  case I::AtomicOr:
  case I::AtomicXor:
  case I::AtomicInc:
  case I::AtomicDec:
  case I::AtomicExch:
  case I::AtomicMax:
  case I::AtomicMin:
  case I::AtomicNanMax:
  case I::AtomicNanMin:
  case I::AtomicCas:
    return lowerAtomic(instruction);
  case I::LoadCa:
  case I::LoadCg:
  case I::LoadCs:
  case I::LoadLu:
  case I::LoadCv:
  case I::StoreCg:
  case I::StoreCs:
  case I::StoreWb:
  case I::StoreWt:
    return lowerCacheHinted(instruction);

  case I::ShflIdx:
  case I::ShflUp:
  case I::ShflDown:
  case I::ShflXor:
  case I::VoteAll:
  case I::VoteAny:
  case I::VoteUni:
  case I::VoteBallot:
  case I::MatchAny:
  case I::MatchAll:
    return lowerWarpCollective(instruction);
  case I::ActiveMask:
    return resultOf(hooks.activeMask(here), false);
  case I::LanemaskLt:
    return resultOf(hooks.lanemaskLt(here), false);

  case I::Popc:
  case I::Clz: {
    llvm::Value *x = operand(0);
    const auto *from = llvm::cast<IntegerType>(instruction.operands[0]->type());
    llvm::Value *count =
        instruction.intrinsic == I::Popc
            ? builder.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x)
            : builder.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, builder.getFalse());
    return resultOf(count, from->signedness());
  }
  case I::Bitcast:
    return builder.CreateBitCast(operand(0), types.value(instruction.type()));
  case I::Brev:
    return cast(builder.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, operand(0)),
                instruction.operands[0]->type(), instruction.type());
  case I::Ffs: {
    // 1 + the position of the lowest set bit; 0 for 0.
    llvm::Value *x = operand(0);
    llvm::Type *type = x->getType();
    llvm::Value *trailing =
        builder.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, x, builder.getFalse());
    llvm::Value *position = builder.CreateSelect(
        builder.CreateICmpEQ(x, llvm::ConstantInt::get(type, 0)), llvm::ConstantInt::get(type, 0),
        builder.CreateAdd(trailing, llvm::ConstantInt::get(type, 1)));
    return cast(position, instruction.operands[0]->type(), instruction.type());
  }
  default:
    return lowerMath(instruction);
  }
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

/// Numba's float atomic max/min (and nan- variants) as a compare-and-swap
/// loop: plain max/min leave memory alone when either value is NaN;
/// nanmax/nanmin ignore a NaN operand and replace a NaN in memory. As in
/// Numba's loop, each value a swap finds is checked again (after a swap
/// that succeeded it is `value` itself, which ends the loop), and the
/// result is the value first read: nothing but the value memory holds is
/// carried around the loop.
static llvm::Value *floatMinMaxLoop(FunctionLowering &lowering, llvm::Value *address,
                                    llvm::Value *value, bool isMax, bool nanAware) {
  llvm::IRBuilder<> &builder = lowering.builder;
  llvm::Type *floatType = value->getType();
  llvm::Type *bitsType = builder.getIntNTy(floatType->getPrimitiveSizeInBits());
  llvm::Align alignment(floatType->getPrimitiveSizeInBits() / 8);
  llvm::LoadInst *initial = builder.CreateAlignedLoad(floatType, address, alignment);
  initial->setVolatile(true);
  llvm::Value *skip =
      nanAware ? builder.CreateFCmpUNO(value, value) : builder.CreateFCmpUNO(value, initial);
  llvm::BasicBlock *entry = builder.GetInsertBlock();
  llvm::Function *function = entry->getParent();
  llvm::LLVMContext &context = function->getContext();
  llvm::BasicBlock *check = llvm::BasicBlock::Create(context, "atomic.check", function);
  llvm::BasicBlock *attempt = llvm::BasicBlock::Create(context, "atomic.attempt", function);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "atomic.done", function);
  builder.CreateCondBr(skip, done, check);

  builder.SetInsertPoint(check);
  llvm::PHINode *current = builder.CreatePHI(floatType, 2);
  current->addIncoming(initial, entry);
  // Keep trying while the value would improve on memory (or memory holds
  // NaN, for the nan- variants).
  llvm::CmpInst::Predicate improves =
      isMax ? (nanAware ? llvm::CmpInst::FCMP_ULT : llvm::CmpInst::FCMP_OLT)
            : (nanAware ? llvm::CmpInst::FCMP_UGT : llvm::CmpInst::FCMP_OGT);
  builder.CreateCondBr(builder.CreateFCmp(improves, current, value), attempt, done);

  builder.SetInsertPoint(attempt);
  llvm::Value *expected = builder.CreateBitCast(current, bitsType);
  llvm::Value *replacement = builder.CreateBitCast(value, bitsType);
  llvm::Value *exchange =
      builder.CreateAtomicCmpXchg(address, expected, replacement, alignment,
                                  llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  llvm::Value *seen = builder.CreateBitCast(builder.CreateExtractValue(exchange, {0}), floatType);
  current->addIncoming(seen, attempt);
  builder.CreateBr(check);

  builder.SetInsertPoint(done);
  return initial;
}

llvm::Value *FunctionLowering::indexedElementAddress(const ir::Instruction &instruction) {
  const auto *arrayType = llvm::cast<ArrayType>(instruction.operands[0]->type());
  std::vector<llvm::Value *> indices;
  for (unsigned i = 1; i <= instruction.index; ++i)
    indices.push_back(valueOf(instruction.operands[i]));
  return elementAddress(valueOf(instruction.operands[0]), arrayType, indices, instruction);
}

llvm::Value *FunctionLowering::lowerCacheHinted(const ir::Instruction &instruction) {
  const Type *element = llvm::cast<ArrayType>(instruction.operands[0]->type())->elementType();
  llvm::Value *address = indexedElementAddress(instruction);
  llvm::Align alignment(itemAlignment(element));
  HookSite here = site(instruction.location);
  if (instruction.operands.size() == instruction.index + 2) {
    hooks.cacheHintedStore(here, instruction.intrinsic, address,
                           valueOf(instruction.operands.back()), alignment);
    return nullptr;
  }
  return hooks.cacheHintedLoad(here, instruction.intrinsic, address, types.memory(element),
                               alignment);
}

llvm::Value *FunctionLowering::lowerAtomic(const ir::Instruction &instruction) {
  const Type *element = llvm::cast<ArrayType>(instruction.operands[0]->type())->elementType();
  llvm::Value *address = indexedElementAddress(instruction);
  llvm::Value *value = valueOf(instruction.operands[instruction.index + 1]);
  llvm::Align alignment(itemAlignment(element));
  bool isFloat = llvm::isa<FloatType>(element);
  bool isSigned = !isFloat && llvm::cast<IntegerType>(element)->signedness();
  auto rmw = [&](llvm::AtomicRMWInst::BinOp op, llvm::Value *operand) -> llvm::Value * {
    return builder.CreateAtomicRMW(op, address, operand, alignment,
                                   llvm::AtomicOrdering::Monotonic);
  };
  using Op = llvm::AtomicRMWInst::BinOp;
  llvm::Value *old = nullptr;
  switch (instruction.intrinsic) {
  case I::AtomicAdd:
    old = rmw(isFloat ? Op::FAdd : Op::Add, value);
    break;
  case I::AtomicSub:
    old = isFloat ? rmw(Op::FAdd, builder.CreateFNeg(value)) : rmw(Op::Sub, value);
    break;
  case I::AtomicAnd:
    old = rmw(Op::And, value);
    break;
  case I::AtomicOr:
    old = rmw(Op::Or, value);
    break;
  case I::AtomicXor:
    old = rmw(Op::Xor, value);
    break;
  case I::AtomicInc:
    old = rmw(Op::UIncWrap, value);
    break;
  case I::AtomicDec:
    old = rmw(Op::UDecWrap, value);
    break;
  case I::AtomicExch:
    old = rmw(Op::Xchg, value);
    break;
  case I::AtomicMax:
  case I::AtomicMin:
  case I::AtomicNanMax:
  case I::AtomicNanMin: {
    bool isMax = instruction.intrinsic == I::AtomicMax || instruction.intrinsic == I::AtomicNanMax;
    if (isFloat) {
      bool nanAware =
          instruction.intrinsic == I::AtomicNanMax || instruction.intrinsic == I::AtomicNanMin;
      old = floatMinMaxLoop(*this, address, value, isMax, nanAware);
    } else {
      old = rmw(isMax ? (isSigned ? Op::Max : Op::UMax) : (isSigned ? Op::Min : Op::UMin), value);
    }
    break;
  }
  case I::AtomicCas: {
    llvm::Value *replacement = valueOf(instruction.operands[instruction.index + 2]);
    llvm::Value *expected = value;
    llvm::Type *bitsType = builder.getIntNTy(value->getType()->getPrimitiveSizeInBits());
    if (isFloat) {
      expected = builder.CreateBitCast(expected, bitsType);
      replacement = builder.CreateBitCast(replacement, bitsType);
    }
    llvm::Value *exchange = builder.CreateAtomicCmpXchg(address, expected, replacement, alignment,
                                                        llvm::AtomicOrdering::Monotonic,
                                                        llvm::AtomicOrdering::Monotonic);
    old = builder.CreateExtractValue(exchange, {0});
    if (isFloat)
      old = builder.CreateBitCast(old, value->getType());
    break;
  }
  default:
    return nullptr;
  }
  return cast(old, element, instruction.type());
}

//===----------------------------------------------------------------------===//
// Warp collectives
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::lowerWarpCollective(const ir::Instruction &instruction) {
  HookSite here = site(instruction.location);
  llvm::Value *mask = valueOf(instruction.operands[0]);
  llvm::Value *value = valueOf(instruction.operands[1]);
  const Type *valueType = instruction.operands[1]->type();
  switch (instruction.intrinsic) {
  case I::ShflIdx:
  case I::ShflUp:
  case I::ShflDown:
  case I::ShflXor: {
    // 32 bits at a time, as PTX shuffles; wider values in two halves.
    llvm::Value *lane = valueOf(instruction.operands[2]);
    llvm::Type *type = value->getType();
    bool isBool = type->isIntegerTy(1);
    unsigned bits = isBool ? 32 : static_cast<unsigned>(type->getPrimitiveSizeInBits());
    llvm::Value *raw = isBool ? builder.CreateZExt(value, types.i32())
                              : builder.CreateBitCast(value, builder.getIntNTy(bits));
    llvm::Value *result;
    if (bits <= 32) {
      llvm::Value *word = builder.CreateZExtOrTrunc(raw, types.i32());
      result = builder.CreateTrunc(hooks.shuffle32(here, instruction.intrinsic, mask, word, lane),
                                   builder.getIntNTy(bits));
    } else {
      llvm::Value *low = builder.CreateTrunc(raw, types.i32());
      llvm::Value *high = builder.CreateTrunc(builder.CreateLShr(raw, 32), types.i32());
      low = hooks.shuffle32(here, instruction.intrinsic, mask, low, lane);
      high = hooks.shuffle32(here, instruction.intrinsic, mask, high, lane);
      result = builder.CreateOr(builder.CreateZExt(low, types.i64()),
                                builder.CreateShl(builder.CreateZExt(high, types.i64()), 32));
    }
    if (isBool)
      return builder.CreateICmpNE(result, builder.getInt32(0));
    return cast(builder.CreateBitCast(result, type), valueType, instruction.type());
  }
  case I::VoteAll:
  case I::VoteAny:
  case I::VoteUni:
  case I::VoteBallot:
    return fromMachineInteger(hooks.vote(here, instruction.intrinsic, mask, value), false,
                              instruction.type());
  case I::MatchAny:
  case I::MatchAll: {
    llvm::Type *type = value->getType();
    unsigned bits =
        type->isIntegerTy(1) ? 32 : static_cast<unsigned>(type->getPrimitiveSizeInBits());
    llvm::Value *raw = type->isIntegerTy(1) ? builder.CreateZExt(value, types.i32())
                                            : builder.CreateBitCast(value, builder.getIntNTy(bits));
    if (bits < 32)
      raw = builder.CreateZExt(raw, types.i32());
    if (instruction.intrinsic == I::MatchAny)
      return fromMachineInteger(hooks.matchAny(here, mask, raw), false, instruction.type());
    auto [lanes, predicate] = hooks.matchAll(here, mask, raw);
    const auto *tuple = llvm::cast<TupleType>(instruction.type());
    llvm::Value *result = llvm::PoisonValue::get(types.value(tuple));
    result = builder.CreateInsertValue(
        result, fromMachineInteger(lanes, false, tuple->elementTypes()[0]), {0});
    return builder.CreateInsertValue(result, predicate, {1});
  }
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

namespace {
enum class MathShape { Unary, Binary, Ternary, WithInt, WithIntPointer, WithFloatPointer };

MathShape shapeOf(I which) {
  switch (which) {
  case I::Atan2:
  case I::Hypot:
  case I::Copysign:
  case I::Fmod:
  case I::Remainder:
  case I::Nextafter:
  case I::Fmax:
  case I::Fmin:
  case I::PowF:
    return MathShape::Binary;
  case I::Fma:
    return MathShape::Ternary;
  case I::Ldexp:
    return MathShape::WithInt;
  case I::Frexp:
    return MathShape::WithIntPointer;
  case I::Modf:
    return MathShape::WithFloatPointer;
  default:
    return MathShape::Unary;
  }
}

/// Operations that are exactly rounded everywhere: LLVM intrinsics, which
/// both targets implement natively.
std::optional<llvm::Intrinsic::ID> llvmIntrinsicFor(I which) {
  switch (which) {
  case I::Sqrt:
    return llvm::Intrinsic::sqrt;
  case I::Fabs:
    return llvm::Intrinsic::fabs;
  case I::Floor:
    return llvm::Intrinsic::floor;
  case I::Ceil:
    return llvm::Intrinsic::ceil;
  case I::Trunc:
    return llvm::Intrinsic::trunc;
  case I::Rint:
    return llvm::Intrinsic::rint;
  case I::Copysign:
    return llvm::Intrinsic::copysign;
  case I::Fma:
    return llvm::Intrinsic::fma;
  case I::Fmax:
    return llvm::Intrinsic::maxnum;
  case I::Fmin:
    return llvm::Intrinsic::minnum;
  default:
    return std::nullopt;
  }
}
} // namespace

llvm::Value *FunctionLowering::callMathFunction(I which, llvm::ArrayRef<llvm::Value *> arguments,
                                                unsigned bits) {
  llvm::Type *floatType = arguments[0]->getType();
  std::optional<std::string> name = hooks.mathFunction(which, bits, source.options.fastmath);
  if (!name) {
    // The target has no such function: 1/sqrt(x) is the only one.
    llvm::Value *root = builder.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, arguments[0]);
    return builder.CreateFDiv(llvm::ConstantFP::get(floatType, 1.0), root);
  }
  std::vector<llvm::Type *> parameters;
  std::vector<llvm::Value *> callArguments(arguments.begin(), arguments.end());
  switch (shapeOf(which)) {
  case MathShape::Unary:
    parameters = {floatType};
    break;
  case MathShape::Binary:
    parameters = {floatType, floatType};
    break;
  case MathShape::Ternary:
    parameters = {floatType, floatType, floatType};
    break;
  case MathShape::WithInt:
    parameters = {floatType, types.i32()};
    break;
  case MathShape::WithIntPointer:
  case MathShape::WithFloatPointer:
    parameters = {floatType, types.pointer()};
    break;
  }
  llvm::FunctionCallee function = module.module->getOrInsertFunction(
      *name, llvm::FunctionType::get(floatType, parameters, false));
  if (auto *declared = llvm::dyn_cast<llvm::Function>(function.getCallee())) {
    declared->setDoesNotThrow();
    if (shapeOf(which) != MathShape::WithIntPointer &&
        shapeOf(which) != MathShape::WithFloatPointer)
      declared->setDoesNotAccessMemory();
  }
  return builder.CreateCall(function, callArguments);
}

llvm::Value *FunctionLowering::lowerLibdeviceCall(const ir::Instruction &instruction) {
  const ir::LibdeviceFunction &callee = *ir::findLibdeviceFunction(instruction.text);
  auto llvmType = [&](ir::LibdeviceScalar scalar) -> llvm::Type * {
    switch (scalar) {
    case ir::LibdeviceScalar::Void:
      return llvm::Type::getVoidTy(lowered.getContext());
    case ir::LibdeviceScalar::Int16:
      return builder.getInt16Ty();
    case ir::LibdeviceScalar::Int32:
      return builder.getInt32Ty();
    case ir::LibdeviceScalar::Int64:
      return builder.getInt64Ty();
    case ir::LibdeviceScalar::Float32:
      return builder.getFloatTy();
    case ir::LibdeviceScalar::Float64:
      return builder.getDoubleTy();
    }
    return nullptr;
  };
  std::vector<llvm::Type *> parameterTypes;
  std::vector<llvm::Value *> arguments;
  std::vector<std::pair<llvm::AllocaInst *, llvm::Type *>> outputs;
  unsigned input = 0;
  for (const ir::LibdeviceParameter &parameter : callee.parameters) {
    if (parameter.isOutput) {
      llvm::Type *type = llvmType(parameter.type);
      llvm::AllocaInst *slot = entryAlloca(type, 8, "out");
      outputs.emplace_back(slot, type);
      parameterTypes.push_back(types.pointer());
      arguments.push_back(slot);
      continue;
    }
    llvm::Value *value = valueOf(instruction.operands[input++]);
    parameterTypes.push_back(value->getType());
    arguments.push_back(value);
  }
  llvm::FunctionCallee function = module.module->getOrInsertFunction(
      callee.symbol(), llvm::FunctionType::get(llvmType(callee.result), parameterTypes, false));
  llvm::CallInst *call = builder.CreateCall(function, arguments);
  std::vector<llvm::Value *> returned;
  if (callee.result != ir::LibdeviceScalar::Void)
    returned.push_back(call);
  for (auto [slot, type] : outputs)
    returned.push_back(builder.CreateLoad(type, slot));
  if (returned.size() == 1)
    return returned.front();
  llvm::Value *result = llvm::PoisonValue::get(types.value(instruction.type()));
  for (unsigned i = 0; i < returned.size(); ++i)
    result = builder.CreateInsertValue(result, returned[i], {i});
  return result;
}

llvm::Value *FunctionLowering::callMath(I which, llvm::ArrayRef<llvm::Value *> arguments,
                                        unsigned bits) {
  if (bits == 16) {
    // No float16 or bfloat16 math library: compute in float32 and round.
    llvm::Type *narrow = arguments[0]->getType();
    std::vector<llvm::Value *> widened;
    for (llvm::Value *argument : arguments)
      widened.push_back(argument->getType() == narrow
                            ? builder.CreateFPExt(argument, builder.getFloatTy())
                            : argument);
    return builder.CreateFPTrunc(callMath(which, widened, 32), narrow);
  }
  if (std::optional<llvm::Intrinsic::ID> id = llvmIntrinsicFor(which)) {
    llvm::Function *intrinsic =
        llvm::Intrinsic::getDeclaration(module.module.get(), *id, {arguments[0]->getType()});
    return builder.CreateCall(intrinsic, arguments);
  }
  return callMathFunction(which, arguments, bits);
}

llvm::Value *FunctionLowering::lowerMath(const ir::Instruction &instruction) {
  std::vector<llvm::Value *> arguments;
  for (const ir::Value *operand : instruction.operands)
    arguments.push_back(valueOf(operand));
  const auto *floatType = llvm::dyn_cast<FloatType>(instruction.operands[0]->type());
  if (!floatType)
    return nullptr;
  unsigned bits = floatType->bitwidth();
  llvm::Value *x = arguments[0];

  switch (instruction.intrinsic) {
  case I::IsNan:
  case I::IsInf:
  case I::IsFinite: {
    // Exact even under fastmath, whose no-NaN assumption would fold these.
    llvm::IRBuilder<>::FastMathFlagGuard guard(builder);
    builder.clearFastMathFlags();
    if (instruction.intrinsic == I::IsNan)
      return builder.CreateFCmpUNO(x, x);
    llvm::Value *magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *infinity = llvm::ConstantFP::getInfinity(x->getType());
    return instruction.intrinsic == I::IsInf ? builder.CreateFCmpOEQ(magnitude, infinity)
                                             : builder.CreateFCmpOLT(magnitude, infinity);
  }
  case I::Frexp:
  case I::Modf: {
    bool isFrexp = instruction.intrinsic == I::Frexp;
    llvm::Value *input = bits == 16 ? builder.CreateFPExt(x, builder.getFloatTy()) : x;
    unsigned callBits = bits == 16 ? 32 : bits;
    llvm::Type *slotType = isFrexp ? types.i32() : input->getType();
    llvm::AllocaInst *slot = entryAlloca(slotType, 8, isFrexp ? "exponent" : "integral");
    llvm::Value *first = callMathFunction(instruction.intrinsic, {input, slot}, callBits);
    llvm::Value *second = builder.CreateLoad(slotType, slot);
    if (bits == 16) {
      first = builder.CreateFPTrunc(first, x->getType());
      if (!isFrexp)
        second = builder.CreateFPTrunc(second, x->getType());
    }
    const auto *tuple = llvm::cast<TupleType>(instruction.type());
    llvm::Value *result = llvm::PoisonValue::get(types.value(tuple));
    result = builder.CreateInsertValue(result, first, {0});
    result = builder.CreateInsertValue(
        result, isFrexp ? fromMachineInteger(second, true, tuple->elementTypes()[1]) : second, {1});
    return result;
  }
  case I::Ldexp:
    return callMath(I::Ldexp, {x, builder.CreateIntCast(arguments[1], types.i32(), true)}, bits);
  case I::RoundDigits:
    return roundDigits(x, arguments[1]);
  case I::Fmax:
  case I::Fmin:
    return minMaxNumber(instruction.intrinsic == I::Fmax, x, arguments[1], bits);
  default:
    return callMath(instruction.intrinsic, arguments, bits);
  }
}

llvm::Value *FunctionLowering::minMaxNumber(bool isMax, llvm::Value *a, llvm::Value *b,
                                            unsigned bits) {
  // IEEE 754-2019's maximumNumber and minimumNumber, as PTX's max and min:
  // NaN only where both are, and -0 below +0.
  I which = isMax ? I::Fmax : I::Fmin;
  if (hooks.minMaxOrdersSignedZeros())
    return callMath(which, {a, b}, bits);
  if (bits == 16) {
    llvm::Type *narrow = a->getType();
    llvm::Value *wide = minMaxNumber(isMax, builder.CreateFPExt(a, builder.getFloatTy()),
                                     builder.CreateFPExt(b, builder.getFloatTy()), 32);
    return builder.CreateFPTrunc(wide, narrow);
  }
  llvm::IRBuilder<>::FastMathFlagGuard guard(builder);
  builder.clearFastMathFlags();
  // Equal operands are equal numbers, and the AND (max) or OR (min) of their
  // bits is the one wanted where they are zeros. Otherwise a wins where it
  // compares so or b is NaN. (LLVM's maxnum and minnum may give either zero,
  // which lets it drop the equal case; and nested selects of a NaN test and
  // a compare met an InstCombine fold of LLVM 19 that, for min(0.0, abs(x)),
  // tests x > 0 where |x| > 0 is meant.)
  llvm::Type *word = builder.getIntNTy(bits);
  llvm::Value *aBits = builder.CreateBitCast(a, word);
  llvm::Value *bBits = builder.CreateBitCast(b, word);
  llvm::Value *equal = builder.CreateBitCast(
      isMax ? builder.CreateAnd(aBits, bBits) : builder.CreateOr(aBits, bBits), a->getType());
  llvm::Value *aWins = isMax ? builder.CreateFCmpOGT(a, b) : builder.CreateFCmpOLT(a, b);
  llvm::Value *number =
      builder.CreateSelect(builder.CreateOr(builder.CreateFCmpUNO(b, b), aWins), a, b);
  return builder.CreateSelect(builder.CreateFCmpOEQ(a, b), equal, number);
}

llvm::Value *FunctionLowering::roundDigits(llvm::Value *x, llvm::Value *digits) {
  // Numba's round_to_impl (CPython's fallback double_round): in float64
  // whatever x's type, with 10.0 ** n by squaring, and beyond 22 digits
  // scaled in two steps so that the scale itself cannot overflow. A scaled
  // value that overflows, an infinity and a NaN give x back.
  llvm::Type *doubleType = builder.getDoubleTy();
  auto real = [&](double v) { return llvm::ConstantFP::get(doubleType, v); };
  llvm::Value *value = builder.CreateFPCast(x, doubleType);
  llvm::Value *n = builder.CreateSExtOrTrunc(digits, types.i64());
  llvm::Value *nonNegative = builder.CreateICmpSGE(n, i64(0));
  llvm::Value *split = builder.CreateICmpSGT(n, i64(22));
  llvm::Value *exponent = builder.CreateSelect(
      nonNegative, builder.CreateSelect(split, builder.CreateSub(n, i64(22)), n),
      builder.CreateNeg(n));
  llvm::Value *scale = integerPower(real(10.0), exponent, false, true);
  llvm::Value *extra = builder.CreateSelect(split, real(1e22), real(1.0));
  llvm::Value *scaled =
      builder.CreateSelect(nonNegative, builder.CreateFMul(builder.CreateFMul(value, scale), extra),
                           builder.CreateFDiv(value, scale));
  llvm::Value *rounded = callMath(I::Rint, {scaled}, 64);
  llvm::Value *result = builder.CreateSelect(
      nonNegative, builder.CreateFDiv(builder.CreateFDiv(rounded, extra), scale),
      builder.CreateFMul(rounded, scale));
  llvm::IRBuilder<>::FastMathFlagGuard guard(builder);
  builder.clearFastMathFlags();
  llvm::Value *infinity = llvm::ConstantFP::getInfinity(doubleType);
  llvm::Value *finite =
      builder.CreateFCmpOLT(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value), infinity);
  llvm::Value *overflows =
      builder.CreateFCmpOEQ(builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, scaled), infinity);
  llvm::Value *keep = builder.CreateOr(builder.CreateNot(finite), overflows);
  return builder.CreateFPCast(builder.CreateSelect(keep, value, result), x->getType());
}

//===----------------------------------------------------------------------===//
// print and assert
//===----------------------------------------------------------------------===//

void FunctionLowering::lowerPrint(const ir::Instruction &instruction) {
  std::vector<PrintArgument> arguments;
  size_t next = 0;
  for (const ir::PrintItem &item : instruction.printItems) {
    if (item.kind == ir::PrintItem::Kind::Text) {
      arguments.push_back({PrintArgument::Kind::Text, nullptr, item.text, item.joined});
      continue;
    }
    const ir::Value *operand = instruction.operands[next++];
    llvm::Value *value = valueOf(operand);
    const Type *type = operand->type();
    if (llvm::isa<BooleanType>(type)) {
      arguments.push_back({PrintArgument::Kind::Bool, value, "", item.joined});
    } else if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
      bool isSigned = integer->signedness();
      arguments.push_back({isSigned ? PrintArgument::Kind::Int64 : PrintArgument::Kind::UInt64,
                           builder.CreateIntCast(value, types.i64(), isSigned), "", item.joined});
    } else if (llvm::isa<FloatType>(type)) {
      arguments.push_back({PrintArgument::Kind::Float64,
                           builder.CreateFPExt(value, builder.getDoubleTy()), "", item.joined});
    }
  }
  HookSite here = site(instruction.location);
  hooks.print(here, arguments);
}

void FunctionLowering::lowerAssert(const ir::Instruction &instruction) {
  // As in Numba, asserts are checked only in debug builds.
  if (!source.options.debug)
    return;
  raiseUnless(valueOf(instruction.operands[0]), "AssertionError", instruction.text,
              instruction.location);
}

void FunctionLowering::raiseUnless(llvm::Value *condition, llvm::StringRef exceptionClass,
                                   llvm::StringRef message, ir::Location location) {
  llvm::BasicBlock *fail = llvm::BasicBlock::Create(lowered.getContext(), "raise", &lowered);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(lowered.getContext(), "continue", &lowered);
  builder.CreateCondBr(condition, next, fail);
  builder.SetInsertPoint(fail);
  HookSite here = site(location);
  hooks.raise(here, exceptionClass, message);
  builder.SetInsertPoint(next);
}

} // namespace kiln::backend
