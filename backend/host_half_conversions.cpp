//===- backend/host_half_conversions.cpp - float16 conversions on the host ===//

#include "backend/host_half_conversions.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

namespace kiln::backend {

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

bool usesHalf(const llvm::Module &module) {
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

void defineHalfConversions(llvm::Module &module) {
  defineExtendHalfToFloat(module);
  defineTruncateToHalf(module, "__truncsfhf2", llvm::Type::getFloatTy(module.getContext()));
  defineTruncateToHalf(module, "__truncdfhf2", llvm::Type::getDoubleTy(module.getContext()));
}

} // namespace kiln::backend
