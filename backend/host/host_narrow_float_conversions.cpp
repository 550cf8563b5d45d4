//===- backend/host/host_narrow_float_conversions.cpp - 16-bit floats on the host ===//

#include "backend/host/host_narrow_float_conversions.h"

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

namespace {
/// A 16-bit floating-point format that wider floats round to.
struct NarrowFormat {
  llvm::Type *type;
  unsigned significandBits;
  uint64_t bias;
  uint64_t infinityExponent;
};
} // namespace

/// Defines `name`, which rounds a float or double whose subnormals are all
/// below the narrow format's smallest subnormal (a float to float16, a
/// double to either) to nearest even.
static void defineTruncate(llvm::Module &module, llvm::StringRef name, llvm::Type *source,
                           NarrowFormat narrow) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *function = defineBuiltin(module, name, narrow.type, source);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  const unsigned bits = source->getPrimitiveSizeInBits();
  const unsigned sigBits = bits == 32 ? 23 : 52;
  const uint64_t bias = bits == 32 ? 127 : 1023;
  const unsigned narrowSigBits = narrow.significandBits;
  const uint64_t narrowBias = narrow.bias, narrowInfExponent = narrow.infinityExponent;
  const unsigned dropped = sigBits - narrowSigBits;
  llvm::Type *word = b.getIntNTy(bits);
  auto constant = [&](uint64_t value) { return llvm::ConstantInt::get(word, value); };
  const uint64_t signBit = uint64_t(1) << (bits - 1);
  const uint64_t roundMask = (uint64_t(1) << dropped) - 1;
  const uint64_t halfway = uint64_t(1) << (dropped - 1);
  const uint64_t infinity = ((uint64_t(1) << (bits - 1 - sigBits)) - 1) << sigBits;
  const uint64_t underflow = (bias + 1 - narrowBias) << sigBits;
  const uint64_t overflow = (bias + narrowInfExponent - narrowBias) << sigBits;

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

  // The exponent fits a normal narrow float: rebias, then round (a carry out of the
  // significand correctly makes the next exponent, or infinity).
  llvm::Value *normal =
      b.CreateSub(roundToNearestEven(magnitude), constant((bias - narrowBias) << narrowSigBits));
  llvm::Value *inRange = b.CreateICmpULT(b.CreateSub(magnitude, constant(underflow)),
                                         b.CreateSub(magnitude, constant(overflow)));
  // NaN: quiet, with the top of the payload.
  llvm::Value *nan = b.CreateOr(
      constant((narrowInfExponent << narrowSigBits) | (1u << (narrowSigBits - 1))),
      b.CreateAnd(b.CreateLShr(magnitude, dropped), constant((1u << (narrowSigBits - 1)) - 1)));
  llvm::Value *isNan = b.CreateICmpUGT(magnitude, constant(infinity));
  llvm::Value *isInfinite = b.CreateICmpUGE(magnitude, constant(overflow));
  // Too small for a normal narrow float: shift the significand (with its implicit
  // bit) into a subnormal, keeping a sticky bit for rounding; beyond
  // sigBits of shift, nothing is left.
  llvm::Value *exponent = b.CreateLShr(magnitude, sigBits);
  llvm::Value *shift = b.CreateSub(constant(bias - narrowBias + 1), exponent);
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
          b.CreateSelect(isInfinite, constant(narrowInfExponent << narrowSigBits), subnormal)));
  result = b.CreateTrunc(b.CreateOr(result, sign), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(result, narrow.type));
}

/// __truncsfbf2: a bfloat16 is a float's top half, so rounding to nearest
/// even at bit 16 is exact for every float, subnormals and overflow to
/// infinity included; NaNs keep the top of their payload, made quiet.
static void defineTruncateFloatToBFloat16(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Function *function = defineBuiltin(module, "__truncsfbf2", llvm::Type::getBFloatTy(context),
                                           llvm::Type::getFloatTy(context));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *rep = b.CreateBitCast(function->getArg(0), b.getInt32Ty());
  llvm::Value *lowestKept = b.CreateAnd(b.CreateLShr(rep, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(rep, b.CreateAdd(lowestKept, b.getInt32(0x7fff))), 16);
  llvm::Value *quietNan = b.CreateOr(b.CreateLShr(rep, 16), 0x40);
  llvm::Value *isNan = b.CreateICmpUGT(b.CreateAnd(rep, 0x7fffffff), b.getInt32(0x7f800000));
  llvm::Value *result = b.CreateTrunc(b.CreateSelect(isNan, quietNan, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(result, b.getBFloatTy()));
}

static bool usesType(const llvm::Module &module, bool (llvm::Type::*isIt)() const) {
  for (const llvm::Function &function : module)
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &instruction : block) {
        if ((instruction.getType()->getScalarType()->*isIt)())
          return true;
        for (const llvm::Value *operand : instruction.operands())
          if ((operand->getType()->getScalarType()->*isIt)())
            return true;
      }
  return false;
}

bool usesHalf(const llvm::Module &module) {
  return usesType(module, &llvm::Type::isHalfTy);
}

void defineHalfConversions(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  NarrowFormat half{llvm::Type::getHalfTy(context), 10, 15, 31};
  defineExtendHalfToFloat(module);
  defineTruncate(module, "__truncsfhf2", llvm::Type::getFloatTy(context), half);
  defineTruncate(module, "__truncdfhf2", llvm::Type::getDoubleTy(context), half);
}

bool usesBFloat16(const llvm::Module &module) {
  return usesType(module, &llvm::Type::isBFloatTy);
}

void defineBFloat16Conversions(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  defineTruncateFloatToBFloat16(module);
  defineTruncate(module, "__truncdfbf2", llvm::Type::getDoubleTy(context),
                 NarrowFormat{llvm::Type::getBFloatTy(context), 7, 127, 255});
}

} // namespace kiln::backend
