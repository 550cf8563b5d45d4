//===- backend/host_target.cpp - Target hooks for the CPU engine ----------===//

#include "backend/host_target.h"

#include "backend/cpu_kernel_abi.h"
#include "backend/math_functions.h"

#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <cstddef>

namespace kiln::backend {

using I = ir::Intrinsic;

std::string threadEntryName(llvm::StringRef kernelName) {
  return kernelName.str() + "_thread";
}
std::string blockEntryName(llvm::StringRef kernelName) {
  return kernelName.str() + "_block";
}

void HostTargetHooks::configureModule(llvm::Module &module, const ir::Function &kernel) {
  module.setTargetTriple(triple);
  module.setDataLayout(dataLayout);
  reportsExceptions = kernel.options.debug;
}

/// A field of the KilnCpuThread the site's function received.
static llvm::Value *threadField(HookSite &site, size_t offset) {
  return site.builder.CreateConstInBoundsGEP1_64(site.builder.getInt8Ty(), site.threadContext,
                                                 offset);
}

static llvm::Value *loadThreadField(HookSite &site, llvm::Type *type, size_t offset) {
  return site.builder.CreateAlignedLoad(type, threadField(site, offset),
                                        llvm::Align(type->isPointerTy() ? 8 : 4));
}

/// Calls the engine service at `offset` in KilnCpuServices with the thread
/// and `arguments`.
static llvm::Value *callService(HookSite &site, size_t offset, llvm::Type *result,
                                llvm::ArrayRef<llvm::Value *> arguments) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Value *services =
      loadThreadField(site, builder.getPtrTy(), offsetof(KilnCpuThread, services));
  llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), services, offset);
  llvm::Value *function = builder.CreateAlignedLoad(builder.getPtrTy(), slot, llvm::Align(8));
  std::vector<llvm::Value *> values{site.threadContext};
  values.insert(values.end(), arguments.begin(), arguments.end());
  std::vector<llvm::Type *> parameterTypes;
  for (llvm::Value *value : values)
    parameterTypes.push_back(value->getType());
  auto *type = llvm::FunctionType::get(result, parameterTypes, false);
  llvm::CallInst *call = builder.CreateCall(type, function, values);
  // Like their NVPTX counterparts: calls that other threads take part in
  // must not be merged across branches or hoisted out of them (activemask
  // tells its call sites apart).
  call->addFnAttr(llvm::Attribute::Convergent);
  return call;
}

llvm::Value *HostTargetHooks::readIndex(HookSite &site, I which, unsigned dimension) {
  llvm::Type *i32 = site.builder.getInt32Ty();
  size_t offset;
  switch (which) {
  case I::ThreadIdx:
    offset = offsetof(KilnCpuThread, threadIdx);
    break;
  case I::BlockIdx:
    offset = offsetof(KilnCpuThread, blockIdx);
    break;
  case I::BlockDim:
    offset = offsetof(KilnCpuThread, blockDim);
    break;
  case I::GridDim:
    offset = offsetof(KilnCpuThread, gridDim);
    break;
  case I::LaneId:
    return loadThreadField(site, i32, offsetof(KilnCpuThread, laneId));
  default:
    return loadThreadField(site, i32, offsetof(KilnCpuThread, warpSize));
  }
  return loadThreadField(site, i32, offset + 4 * dimension);
}

void HostTargetHooks::syncThreads(HookSite &site) {
  callService(site, offsetof(KilnCpuServices, syncthreads), site.builder.getVoidTy(), {});
}

llvm::Value *HostTargetHooks::syncThreadsReduce(HookSite &site, I which, llvm::Value *predicate) {
  uint32_t mode = which == I::SyncThreadsCount ? KILN_BARRIER_COUNT
                  : which == I::SyncThreadsAnd ? KILN_BARRIER_AND
                                               : KILN_BARRIER_OR;
  return callService(site, offsetof(KilnCpuServices, syncthreadsReduce), site.builder.getInt32Ty(),
                     {site.builder.getInt32(mode), predicate});
}

void HostTargetHooks::syncWarp(HookSite &site, llvm::Value *mask) {
  callService(site, offsetof(KilnCpuServices, syncwarp), site.builder.getVoidTy(), {mask});
}

void HostTargetHooks::fence(HookSite &site, I) {
  site.builder.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

void HostTargetHooks::nanosleep(HookSite &site, llvm::Value *nanoseconds) {
  waitsForOthers = true;
  callService(site, offsetof(KilnCpuServices, nanosleep), site.builder.getVoidTy(), {nanoseconds});
}

llvm::Value *HostTargetHooks::shuffle32(HookSite &site, I mode, llvm::Value *mask,
                                        llvm::Value *value, llvm::Value *lane) {
  llvm::IRBuilder<> &builder = site.builder;
  uint32_t which = mode == I::ShflIdx    ? KILN_SHFL_IDX
                   : mode == I::ShflUp   ? KILN_SHFL_UP
                   : mode == I::ShflDown ? KILN_SHFL_DOWN
                                         : KILN_SHFL_BFLY;
  // The same c operand as on the GPU (see NvptxTargetHooks::shuffle32).
  uint32_t clamp = mode == I::ShflUp ? 0 : 0x1f;
  llvm::Value *result =
      callService(site, offsetof(KilnCpuServices, shuffle), builder.getInt64Ty(),
                  {mask, builder.getInt32(which), builder.CreateZExt(value, builder.getInt64Ty()),
                   lane, builder.getInt32(clamp)});
  return builder.CreateTrunc(result, builder.getInt32Ty());
}

llvm::Value *HostTargetHooks::vote(HookSite &site, I which, llvm::Value *mask,
                                   llvm::Value *predicate) {
  llvm::IRBuilder<> &builder = site.builder;
  uint32_t mode = which == I::VoteAll   ? KILN_VOTE_ALL
                  : which == I::VoteAny ? KILN_VOTE_ANY
                  : which == I::VoteUni ? KILN_VOTE_UNI
                                        : KILN_VOTE_BALLOT;
  llvm::Value *result = callService(
      site, offsetof(KilnCpuServices, vote), builder.getInt32Ty(),
      {mask, builder.getInt32(mode), builder.CreateZExt(predicate, builder.getInt32Ty())});
  if (which == I::VoteBallot)
    return result;
  return builder.CreateICmpNE(result, builder.getInt32(0));
}

llvm::Value *HostTargetHooks::matchAny(HookSite &site, llvm::Value *mask, llvm::Value *value) {
  return callService(site, offsetof(KilnCpuServices, matchAny), site.builder.getInt32Ty(),
                     {mask, site.builder.CreateZExt(value, site.builder.getInt64Ty())});
}

std::pair<llvm::Value *, llvm::Value *> HostTargetHooks::matchAll(HookSite &site, llvm::Value *mask,
                                                                  llvm::Value *value) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::AllocaInst *predicate = entry.CreateAlloca(builder.getInt32Ty());
  llvm::Value *lanes =
      callService(site, offsetof(KilnCpuServices, matchAll), builder.getInt32Ty(),
                  {mask, builder.CreateZExt(value, builder.getInt64Ty()), predicate});
  llvm::Value *agreed = builder.CreateICmpNE(builder.CreateLoad(builder.getInt32Ty(), predicate),
                                             builder.getInt32(0));
  return {lanes, agreed};
}

llvm::Value *HostTargetHooks::activeMask(HookSite &site) {
  waitsForOthers = true;
  return callService(site, offsetof(KilnCpuServices, activeMask), site.builder.getInt32Ty(), {});
}

llvm::Value *HostTargetHooks::lanemaskLt(HookSite &site) {
  llvm::IRBuilder<> &builder = site.builder;
  llvm::Value *lane = readIndex(site, I::LaneId, 0);
  return builder.CreateSub(builder.CreateShl(builder.getInt32(1), lane), builder.getInt32(1));
}

llvm::Value *HostTargetHooks::sharedArray(HookSite &site, const SharedSlot &slot) {
  llvm::Value *base =
      loadThreadField(site, site.builder.getPtrTy(), offsetof(KilnCpuThread, sharedMemory));
  return site.builder.CreateConstInBoundsGEP1_64(site.builder.getInt8Ty(), base, slot.offset);
}

std::pair<llvm::Value *, llvm::Value *> HostTargetHooks::dynamicSharedMemory(HookSite &site) {
  return {
      loadThreadField(site, site.builder.getPtrTy(), offsetof(KilnCpuThread, dynamicSharedMemory)),
      loadThreadField(site, site.builder.getInt32Ty(),
                      offsetof(KilnCpuThread, dynamicSharedBytes))};
}

std::optional<std::string> HostTargetHooks::mathFunction(I which, unsigned bits, bool) {
  if (which == I::Rsqrt)
    return std::nullopt; // no C function: 1 / sqrt(x)
  return mathBaseName(which).str() + (bits == 32 ? "f" : "");
}

static llvm::Value *constantString(HookSite &site, llvm::StringRef text) {
  return site.builder.CreateGlobalStringPtr(text, "str", 0,
                                            site.builder.GetInsertBlock()->getModule());
}

void HostTargetHooks::print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) {
  // An array of KilnPrintItem: {u32 kind, u32 reserved, 8-byte value, f64 imag}.
  llvm::IRBuilder<> &builder = site.builder;
  llvm::LLVMContext &context = builder.getContext();
  auto *item = llvm::StructType::get(context, {builder.getInt32Ty(), builder.getInt32Ty(),
                                               builder.getInt64Ty(), builder.getDoubleTy()});
  static_assert(sizeof(KilnPrintItem) == 24, "KilnPrintItem layout");
  auto *arrayType = llvm::ArrayType::get(item, std::max<size_t>(arguments.size(), 1));
  llvm::Function *function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::AllocaInst *items = entry.CreateAlloca(arrayType);
  items->setAlignment(llvm::Align(8));
  for (unsigned i = 0; i < arguments.size(); ++i) {
    const PrintArgument &argument = arguments[i];
    uint32_t kind = KILN_PRINT_STRING;
    llvm::Value *bits = nullptr;
    switch (argument.kind) {
    case PrintArgument::Kind::Text:
      bits = builder.CreatePtrToInt(constantString(site, argument.text), builder.getInt64Ty());
      break;
    case PrintArgument::Kind::Int64:
      kind = KILN_PRINT_INT64;
      bits = argument.value;
      break;
    case PrintArgument::Kind::UInt64:
      kind = KILN_PRINT_UINT64;
      bits = argument.value;
      break;
    case PrintArgument::Kind::Float64:
      kind = KILN_PRINT_FLOAT64;
      bits = builder.CreateBitCast(argument.value, builder.getInt64Ty());
      break;
    case PrintArgument::Kind::Bool:
      kind = KILN_PRINT_BOOL;
      bits = builder.CreateZExt(argument.value, builder.getInt64Ty());
      break;
    }
    llvm::Value *slot = builder.CreateConstInBoundsGEP2_32(arrayType, items, 0, i);
    builder.CreateStore(builder.getInt32(kind), builder.CreateStructGEP(item, slot, 0));
    builder.CreateStore(builder.getInt32(0), builder.CreateStructGEP(item, slot, 1));
    builder.CreateStore(bits, builder.CreateStructGEP(item, slot, 2));
    builder.CreateStore(llvm::ConstantFP::get(builder.getDoubleTy(), 0.0),
                        builder.CreateStructGEP(item, slot, 3));
  }
  callService(site, offsetof(KilnCpuServices, print), builder.getVoidTy(),
              {items, builder.getInt32(static_cast<uint32_t>(arguments.size()))});
}

void HostTargetHooks::raise(HookSite &site, llvm::StringRef exceptionClass,
                            llvm::StringRef message) {
  // As in Numba, where a raise in any function returns an error status up
  // to the kernel, the kernel's debug=True decides whether the launch
  // reports it; otherwise the thread just ends.
  if (reportsExceptions)
    callService(site, offsetof(KilnCpuServices, raiseException), site.builder.getVoidTy(),
                {constantString(site, exceptionClass), constantString(site, message)});
  else
    callService(site, offsetof(KilnCpuServices, exitThread), site.builder.getVoidTy(), {});
  site.builder.CreateUnreachable();
}

//===----------------------------------------------------------------------===//
// Half-precision conversions
//
// Without native half support (x86-64 before AVX512-FP16), LLVM turns every
// conversion to or from `half` into a call of compiler-rt's __extendhfsf2,
// __truncsfhf2 or __truncdfhf2. Neither the C library nor a pre-GCC 12
// libgcc_s has them, so a module that uses half defines them itself:
// hidden, and once per library (linkonce_odr). They follow compiler-rt's
// fp_extend_impl and fp_trunc_impl: exact widening, round-to-nearest-even
// narrowing, NaN payloads kept as far as they fit.
//===----------------------------------------------------------------------===//

static llvm::Function *defineBuiltin(llvm::Module &module, llvm::StringRef name, llvm::Type *result,
                                     llvm::Type *parameter) {
  auto *type = llvm::FunctionType::get(result, {parameter}, false);
  llvm::Function *function =
      llvm::Function::Create(type, llvm::GlobalValue::LinkOnceODRLinkage, name, module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  // Only the code generator calls it, after optimization: keep it alive.
  llvm::appendToCompilerUsed(module, {function});
  return function;
}

static void defineExtendHalfToFloat(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *function = defineBuiltin(module, "__extendhfsf2", llvm::Type::getFloatTy(context),
                                           llvm::Type::getHalfTy(context));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *x =
      b.CreateZExt(b.CreateBitCast(function->getArg(0), b.getInt16Ty()), b.getInt32Ty());
  llvm::Value *sign = b.CreateShl(b.CreateAnd(x, 0x8000), 16);
  llvm::Value *exponent = b.CreateAnd(b.CreateLShr(x, 10), 0x1f);
  llvm::Value *significand = b.CreateAnd(x, 0x3ff);
  // Normal numbers rebias the exponent; infinities and NaNs keep it all ones.
  llvm::Value *wideExponent =
      b.CreateSelect(b.CreateICmpEQ(exponent, b.getInt32(31)), b.getInt32(255),
                     b.CreateAdd(exponent, b.getInt32(112)));
  llvm::Value *normal =
      b.CreateOr(sign, b.CreateOr(b.CreateShl(wideExponent, 23), b.CreateShl(significand, 13)));
  // Zeros and subnormals are significand * 2**-24, exactly a float.
  llvm::Value *small = b.CreateFMul(b.CreateUIToFP(significand, b.getFloatTy()),
                                    llvm::ConstantFP::get(b.getFloatTy(), 0x1p-24));
  small = b.CreateOr(sign, b.CreateBitCast(small, b.getInt32Ty()));
  llvm::Value *bits = b.CreateSelect(b.CreateICmpEQ(exponent, b.getInt32(0)), small, normal);
  b.CreateRet(b.CreateBitCast(bits, b.getFloatTy()));
}

static void defineTruncateToHalf(llvm::Module &module, llvm::StringRef name, llvm::Type *source) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *function = defineBuiltin(module, name, llvm::Type::getHalfTy(context), source);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  const unsigned bits = source->getPrimitiveSizeInBits();
  const unsigned sigBits = bits == 32 ? 23 : 52;
  const uint64_t bias = bits == 32 ? 127 : 1023;
  constexpr unsigned halfSigBits = 10;
  constexpr uint64_t halfBias = 15, halfInfExponent = 31;
  const unsigned dropped = sigBits - halfSigBits;
  llvm::Type *word = b.getIntNTy(bits);
  auto constant = [&](uint64_t value) { return llvm::ConstantInt::get(word, value); };
  const uint64_t signBit = uint64_t(1) << (bits - 1);
  const uint64_t roundMask = (uint64_t(1) << dropped) - 1;
  const uint64_t halfway = uint64_t(1) << (dropped - 1);
  const uint64_t infinity = ((uint64_t(1) << (bits - 1 - sigBits)) - 1) << sigBits;
  const uint64_t underflow = (bias + 1 - halfBias) << sigBits;
  const uint64_t overflow = (bias + halfInfExponent - halfBias) << sigBits;

  llvm::Value *rep = b.CreateBitCast(function->getArg(0), word);
  llvm::Value *magnitude = b.CreateAnd(rep, constant(signBit - 1));
  llvm::Value *sign = b.CreateLShr(b.CreateAnd(rep, constant(signBit)), bits - 16);
  // `value` without its low `dropped` bits, rounded to nearest even.
  auto roundToNearestEven = [&](llvm::Value *value) {
    llvm::Value *kept = b.CreateLShr(value, dropped);
    llvm::Value *rest = b.CreateAnd(value, constant(roundMask));
    llvm::Value *up = b.CreateOr(
        b.CreateICmpUGT(rest, constant(halfway)),
        b.CreateAnd(b.CreateICmpEQ(rest, constant(halfway)), b.CreateTrunc(kept, b.getInt1Ty())));
    return b.CreateAdd(kept, b.CreateZExt(up, word));
  };

  // The exponent fits a normal half: rebias, then round (a carry out of the
  // significand correctly makes the next exponent, or infinity).
  llvm::Value *normal =
      b.CreateSub(roundToNearestEven(magnitude), constant((bias - halfBias) << halfSigBits));
  llvm::Value *inRange = b.CreateICmpULT(b.CreateSub(magnitude, constant(underflow)),
                                         b.CreateSub(magnitude, constant(overflow)));
  // NaN: quiet, with the top of the payload.
  llvm::Value *nan = b.CreateOr(
      constant((halfInfExponent << halfSigBits) | (1u << (halfSigBits - 1))),
      b.CreateAnd(b.CreateLShr(magnitude, dropped), constant((1u << (halfSigBits - 1)) - 1)));
  llvm::Value *isNan = b.CreateICmpUGT(magnitude, constant(infinity));
  llvm::Value *isInfinite = b.CreateICmpUGE(magnitude, constant(overflow));
  // Too small for a normal half: shift the significand (with its implicit
  // bit) into a subnormal, keeping a sticky bit for rounding; beyond
  // sigBits of shift, nothing is left.
  llvm::Value *exponent = b.CreateLShr(magnitude, sigBits);
  llvm::Value *shift = b.CreateSub(constant(bias - halfBias + 1), exponent);
  llvm::Value *vanishes = b.CreateICmpUGT(shift, constant(sigBits));
  // In range [1, sigBits], also where another case applies, so that the
  // shifts below stay defined.
  shift = b.CreateSelect(b.CreateICmpUGT(b.CreateSub(shift, constant(1)), constant(sigBits - 1)),
                         constant(sigBits), shift);
  llvm::Value *significand = b.CreateOr(b.CreateAnd(rep, constant((uint64_t(1) << sigBits) - 1)),
                                        constant(uint64_t(1) << sigBits));
  llvm::Value *sticky =
      b.CreateICmpNE(b.CreateShl(significand, b.CreateSub(constant(bits), shift)), constant(0));
  llvm::Value *denormal = b.CreateOr(b.CreateLShr(significand, shift), b.CreateZExt(sticky, word));
  llvm::Value *subnormal = b.CreateSelect(vanishes, constant(0), roundToNearestEven(denormal));

  llvm::Value *result = b.CreateSelect(
      inRange, normal,
      b.CreateSelect(
          isNan, nan,
          b.CreateSelect(isInfinite, constant(halfInfExponent << halfSigBits), subnormal)));
  result = b.CreateTrunc(b.CreateOr(result, sign), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(result, b.getHalfTy()));
}

static bool usesHalf(const llvm::Module &module) {
  for (const llvm::Function &function : module)
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &instruction : block) {
        if (instruction.getType()->getScalarType()->isHalfTy())
          return true;
        for (const llvm::Value *operand : instruction.operands())
          if (operand->getType()->getScalarType()->isHalfTy())
            return true;
      }
  return false;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

void HostTargetHooks::finishKernel(llvm::Function &kernel, const ir::Function &function,
                                   llvm::ArrayRef<KernelParameter> parameters) {
  llvm::Module &module = *kernel.getParent();
  if (usesHalf(module)) {
    defineExtendHalfToFloat(module);
    defineTruncateToHalf(module, "__truncsfhf2", llvm::Type::getFloatTy(module.getContext()));
    defineTruncateToHalf(module, "__truncdfhf2", llvm::Type::getDoubleTy(module.getContext()));
  }
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  auto *entryType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer, pointer}, false);
  std::string name = kernel.getName().str();
  kernel.setName(name + "_body");
  kernel.setLinkage(llvm::GlobalValue::InternalLinkage);

  // Both entries unpack `args`: one pointer per flat parameter.
  auto unpack = [&](llvm::IRBuilder<> &builder, llvm::Function &entry) {
    std::vector<llvm::Value *> values{entry.getArg(0)};
    for (unsigned i = 0; i < parameters.size(); ++i) {
      llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(pointer, entry.getArg(1), i);
      llvm::Value *address = builder.CreateAlignedLoad(pointer, slot, llvm::Align(8));
      llvm::Type *type = kernel.getFunctionType()->getParamType(i + 1);
      values.push_back(
          builder.CreateAlignedLoad(type, address, llvm::Align(parameters[i].alignment)));
    }
    return values;
  };

  llvm::Function *thread = llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                                                  threadEntryName(name), module);
  thread->addFnAttr(llvm::Attribute::NoUnwind);
  {
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", thread));
    builder.CreateCall(&kernel, unpack(builder, *thread));
    builder.CreateRetVoid();
  }

  if (function.synchronizes || function.raises || waitsForOthers)
    return;
  // The block entry: threads one after the other, x fastest, with laneId
  // the position in the warp of the linear thread index.
  llvm::Function *block = llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                                                 blockEntryName(name), module);
  block->addFnAttr(llvm::Attribute::NoUnwind);
  if (!kernel.hasFnAttribute(llvm::Attribute::NoInline)) // opt=0 keeps calls
    kernel.addFnAttr(llvm::Attribute::AlwaysInline);
  llvm::BasicBlock *entryBlock = llvm::BasicBlock::Create(context, "entry", block);
  llvm::IRBuilder<> builder(entryBlock);
  std::vector<llvm::Value *> values = unpack(builder, *block);
  llvm::Value *thread0 = block->getArg(0);
  llvm::Type *i32 = builder.getInt32Ty();
  auto field = [&](size_t offset) {
    return builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), thread0, offset);
  };
  llvm::Value *dims[3];
  for (unsigned d = 0; d < 3; ++d)
    dims[d] = builder.CreateAlignedLoad(i32, field(offsetof(KilnCpuThread, blockDim) + 4 * d),
                                        llvm::Align(4));

  // for z, for y, for x: nested loops over blockDim.
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "done", block);
  llvm::PHINode *indices[3];
  llvm::BasicBlock *current = entryBlock;
  for (int d = 2; d >= 0; --d) {
    llvm::BasicBlock *header = llvm::BasicBlock::Create(context, "loop", block);
    builder.SetInsertPoint(current);
    builder.CreateBr(header);
    builder.SetInsertPoint(header);
    indices[d] = builder.CreatePHI(i32, 2);
    indices[d]->addIncoming(builder.getInt32(0), current);
    builder.CreateAlignedStore(indices[d], field(offsetof(KilnCpuThread, threadIdx) + 4 * d),
                               llvm::Align(4));
    current = header;
  }
  builder.SetInsertPoint(current);
  llvm::Value *linear = builder.CreateAdd(
      indices[0],
      builder.CreateMul(dims[0],
                        builder.CreateAdd(indices[1], builder.CreateMul(dims[1], indices[2]))));
  // Warps are 32 threads on every GPU Kiln targets, and on the engine.
  builder.CreateAlignedStore(builder.CreateAnd(linear, builder.getInt32(31)),
                             field(offsetof(KilnCpuThread, laneId)), llvm::Align(4));
  builder.CreateCall(&kernel, values);
  for (unsigned d = 0; d < 3; ++d) {
    llvm::Value *next = builder.CreateAdd(indices[d], builder.getInt32(1));
    indices[d]->addIncoming(next, builder.GetInsertBlock());
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(context, "next", block);
    builder.CreateCondBr(builder.CreateICmpULT(next, dims[d]), indices[d]->getParent(), exit);
    builder.SetInsertPoint(exit);
  }
  builder.CreateBr(done);
  builder.SetInsertPoint(done);
  builder.CreateRetVoid();
}

} // namespace kiln::backend
