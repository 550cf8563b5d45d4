//===- backend/codegen/lower_arithmetic.cpp - Operators with Python's rules -------===//
//
// Integers wrap (CUDA semantics, as Numba); division and modulo floor as in
// Python and give 0 when dividing by zero, as Numba's NumPy error model does
// (with debug=True, its Python error model raises ZeroDivisionError); shifts
// by the width or more give what Python gives; `**` with an integer exponent
// multiplies by squaring, or calls pow beyond 2**16 (Numba's int_power_impl);
// complex arithmetic is CPython's.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/function_lowering.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>

namespace kiln::backend {

namespace {
bool isSignedInteger(const Type *type) {
  const auto *integer = llvm::dyn_cast<IntegerType>(type);
  return integer && integer->signedness();
}
} // namespace

llvm::Value *FunctionLowering::lowerUnary(const ir::Instruction &instruction) {
  llvm::Value *value = valueOf(instruction.operands[0]);
  const Type *type = instruction.type();
  const Type *operandType = instruction.operands[0]->type();
  switch (instruction.opcode) {
  case ir::Opcode::Neg:
    if (llvm::isa<FloatType>(type))
      return builder.CreateFNeg(value);
    if (llvm::isa<ComplexType>(type))
      return makeComplex(builder.CreateFNeg(builder.CreateExtractValue(value, {0})),
                         builder.CreateFNeg(builder.CreateExtractValue(value, {1})));
    // Numba negates in the operand's width, then widens (int_negate_impl):
    // -uint32(1) is 0xffffffff and -int8(-128) is -128. A bool widens first.
    if (llvm::isa<BooleanType>(operandType))
      return builder.CreateNeg(cast(value, operandType, type));
    return cast(builder.CreateNeg(value), operandType, type);
  case ir::Opcode::Not:
    return builder.CreateNot(value);
  case ir::Opcode::Invert:
    // Likewise inverted in the operand's width (int_invert_impl).
    return cast(builder.CreateNot(value), operandType, type);
  default:
    return nullptr;
  }
}

llvm::Value *FunctionLowering::lowerCompare(const ir::Instruction &instruction) {
  if (llvm::isa<DateTimeType>(instruction.operands[0]->type()))
    return lowerDateTimeOperation(instruction);
  llvm::Value *a = valueOf(instruction.operands[0]);
  llvm::Value *b = valueOf(instruction.operands[1]);
  const Type *type = instruction.operands[0]->type();
  using Op = ir::Opcode;
  Op op = instruction.opcode;
  if (llvm::isa<ComplexType>(type)) {
    llvm::Value *real =
        builder.CreateFCmp(op == Op::Eq ? llvm::CmpInst::FCMP_OEQ : llvm::CmpInst::FCMP_UNE,
                           builder.CreateExtractValue(a, {0}), builder.CreateExtractValue(b, {0}));
    llvm::Value *imag =
        builder.CreateFCmp(op == Op::Eq ? llvm::CmpInst::FCMP_OEQ : llvm::CmpInst::FCMP_UNE,
                           builder.CreateExtractValue(a, {1}), builder.CreateExtractValue(b, {1}));
    return op == Op::Eq ? builder.CreateAnd(real, imag) : builder.CreateOr(real, imag);
  }
  if (llvm::isa<FloatType>(type)) {
    static const std::map<Op, llvm::CmpInst::Predicate> predicates = {
        {Op::Eq, llvm::CmpInst::FCMP_OEQ}, {Op::Ne, llvm::CmpInst::FCMP_UNE},
        {Op::Lt, llvm::CmpInst::FCMP_OLT}, {Op::Le, llvm::CmpInst::FCMP_OLE},
        {Op::Gt, llvm::CmpInst::FCMP_OGT}, {Op::Ge, llvm::CmpInst::FCMP_OGE}};
    return builder.CreateFCmp(predicates.at(op), a, b);
  }
  bool isSigned = isSignedInteger(type);
  static const std::map<Op, std::pair<llvm::CmpInst::Predicate, llvm::CmpInst::Predicate>>
      predicates = {{Op::Eq, {llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ}},
                    {Op::Ne, {llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE}},
                    {Op::Lt, {llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT}},
                    {Op::Le, {llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE}},
                    {Op::Gt, {llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT}},
                    {Op::Ge, {llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE}}};
  auto [signedPredicate, unsignedPredicate] = predicates.at(op);
  return builder.CreateICmp(isSigned ? signedPredicate : unsignedPredicate, a, b);
}

/// Numba's Python error model (debug=True) raises ZeroDivisionError where
/// its NumPy model returns 0, an infinity or NaN; complex division raises in
/// both (without debug, the thread just stops). The messages are Numba's.
static void raiseOnZeroDivisor(FunctionLowering &lowering, const ir::Instruction &instruction,
                               llvm::Value *a, llvm::Value *b) {
  using Op = ir::Opcode;
  llvm::IRBuilder<> &builder = lowering.builder;
  const Type *type = instruction.type();
  bool isInteger = !llvm::isa<FloatType>(type) && !llvm::isa<ComplexType>(type);
  auto isScalarZero = [&](llvm::Value *v) -> llvm::Value * {
    if (v->getType()->isFloatingPointTy())
      return builder.CreateFCmpOEQ(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return builder.CreateICmpEQ(v, llvm::ConstantInt::get(v->getType(), 0));
  };
  auto isZero = [&](llvm::Value *v) {
    if (!llvm::isa<ComplexType>(type))
      return isScalarZero(v);
    return builder.CreateAnd(isScalarZero(builder.CreateExtractValue(v, {0})),
                             isScalarZero(builder.CreateExtractValue(v, {1})));
  };
  llvm::Value *fails = nullptr;
  llvm::StringRef message;
  switch (instruction.opcode) {
  case Op::TrueDiv:
    fails = isZero(b);
    message = llvm::isa<ComplexType>(type) ? "complex division by zero" : "division by zero";
    break;
  case Op::FloorDiv:
    fails = isZero(b);
    message = isInteger ? "integer division by zero" : "division by zero";
    break;
  case Op::Mod:
    fails = isZero(b);
    message = isInteger ? "integer modulo by zero" : "modulo by zero";
    break;
  case Op::Pow:
    if (!llvm::isa<IntegerType>(type) || !isSignedInteger(instruction.operands[1]->type()))
      return;
    fails = builder.CreateAnd(isZero(a),
                              builder.CreateICmpSLT(b, llvm::ConstantInt::get(b->getType(), 0)));
    message = "0 cannot be raised to a negative power";
    break;
  default:
    return;
  }
  lowering.raiseUnless(builder.CreateNot(fails), "ZeroDivisionError", message,
                       instruction.location);
}

llvm::Value *FunctionLowering::lowerBinary(const ir::Instruction &instruction) {
  using Op = ir::Opcode;
  if (llvm::isa<DateTimeType>(instruction.operands[0]->type()) ||
      llvm::isa<DateTimeType>(instruction.operands[1]->type()))
    return lowerDateTimeOperation(instruction);
  llvm::Value *a = valueOf(instruction.operands[0]);
  llvm::Value *b = valueOf(instruction.operands[1]);
  const Type *type = instruction.type();
  Op op = instruction.opcode;
  if (source.options.debug || (op == Op::TrueDiv && llvm::isa<ComplexType>(type)))
    raiseOnZeroDivisor(*this, instruction, a, b);

  if (op == Op::Pow)
    return power(a, b, type, instruction.operands[1]->type());

  if (llvm::isa<ComplexType>(type)) {
    switch (op) {
    case Op::Add:
    case Op::Sub: {
      auto part = [&](unsigned i) {
        llvm::Value *x = builder.CreateExtractValue(a, {i});
        llvm::Value *y = builder.CreateExtractValue(b, {i});
        return op == Op::Add ? builder.CreateFAdd(x, y) : builder.CreateFSub(x, y);
      };
      return makeComplex(part(0), part(1));
    }
    case Op::Mul:
      return complexMultiply(a, b);
    default:
      return complexDivide(a, b);
    }
  }

  if (llvm::isa<FloatType>(type)) {
    switch (op) {
    case Op::Add:
      return builder.CreateFAdd(a, b);
    case Op::Sub:
      return builder.CreateFSub(a, b);
    case Op::Mul:
      return builder.CreateFMul(a, b);
    case Op::TrueDiv:
      return builder.CreateFDiv(a, b);
    case Op::FloorDiv:
      return floorDivide(a, b, type, true);
    case Op::Mod:
      return floorDivide(a, b, type, false);
    default:
      return nullptr;
    }
  }

  // Integers and bools.
  bool isSigned = isSignedInteger(type);
  unsigned width = a->getType()->getIntegerBitWidth();
  switch (op) {
  case Op::Add:
    return builder.CreateAdd(a, b);
  case Op::Sub:
    return builder.CreateSub(a, b);
  case Op::Mul:
    return builder.CreateMul(a, b);
  case Op::FloorDiv:
    return floorDivide(a, b, type, true);
  case Op::Mod:
    return floorDivide(a, b, type, false);
  case Op::And:
    return builder.CreateAnd(a, b);
  case Op::Or:
    return builder.CreateOr(a, b);
  case Op::Xor:
    return builder.CreateXor(a, b);
  case Op::Shl: {
    llvm::Value *tooFar = builder.CreateICmpUGE(b, llvm::ConstantInt::get(b->getType(), width));
    return builder.CreateSelect(tooFar, llvm::ConstantInt::get(a->getType(), 0),
                                builder.CreateShl(a, b));
  }
  case Op::Shr: {
    llvm::Value *last = llvm::ConstantInt::get(b->getType(), width - 1);
    if (isSigned) {
      // Shifting a signed value right by the width or more leaves its sign.
      llvm::Value *count = builder.CreateSelect(builder.CreateICmpUGT(b, last), last, b);
      return builder.CreateAShr(a, count);
    }
    return builder.CreateSelect(builder.CreateICmpUGT(b, last),
                                llvm::ConstantInt::get(a->getType(), 0), builder.CreateLShr(a, b));
  }
  default:
    return nullptr;
  }
}

llvm::Value *FunctionLowering::floorDivide(llvm::Value *a, llvm::Value *b, const Type *type,
                                           bool wantQuotient) {
  if (llvm::isa<FloatType>(type)) {
    // CPython's float_floor_div and float_rem; by zero, NumPy's answers
    // (x / 0 for the quotient, NaN for the remainder).
    unsigned bits = llvm::cast<FloatType>(type)->bitwidth();
    llvm::Type *floatType = a->getType();
    llvm::Constant *zero = llvm::ConstantFP::get(floatType, 0.0);
    llvm::Constant *one = llvm::ConstantFP::get(floatType, 1.0);
    llvm::Value *mod = callMath(ir::Intrinsic::Fmod, {a, b}, bits);
    llvm::Value *div = builder.CreateFDiv(builder.CreateFSub(a, mod), b);
    llvm::Value *modNonZero = builder.CreateFCmpUNE(mod, zero);
    llvm::Value *signsDiffer =
        builder.CreateXor(builder.CreateFCmpOLT(b, zero), builder.CreateFCmpOLT(mod, zero));
    llvm::Value *adjust = builder.CreateAnd(modNonZero, signsDiffer);
    llvm::Value *signedZero = builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b);
    mod = builder.CreateSelect(adjust, builder.CreateFAdd(mod, b),
                               builder.CreateSelect(modNonZero, mod, signedZero));
    div = builder.CreateSelect(adjust, builder.CreateFSub(div, one), div);
    llvm::Value *byZero = builder.CreateFCmpOEQ(b, zero);
    if (!wantQuotient)
      return builder.CreateSelect(byZero, llvm::ConstantFP::getNaN(floatType), mod);
    llvm::Value *floored = builder.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
    llvm::Value *roundUp = builder.CreateFCmpOGT(builder.CreateFSub(div, floored),
                                                 llvm::ConstantFP::get(floatType, 0.5));
    floored = builder.CreateSelect(roundUp, builder.CreateFAdd(floored, one), floored);
    llvm::Value *zeroQuotient =
        builder.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, builder.CreateFDiv(a, b));
    llvm::Value *quotient =
        builder.CreateSelect(builder.CreateFCmpUNE(div, zero), floored, zeroQuotient);
    return builder.CreateSelect(byZero, builder.CreateFDiv(a, b), quotient);
  }

  if (!wantQuotient)
    return flooredRemainder(a, b, isSignedInteger(type));
  llvm::Type *intType = a->getType();
  llvm::Constant *zero = llvm::ConstantInt::get(intType, 0);
  llvm::Constant *one = llvm::ConstantInt::get(intType, 1);
  llvm::Value *byZero = builder.CreateICmpEQ(b, zero);
  if (!isSignedInteger(type)) {
    llvm::Value *divisor = builder.CreateSelect(byZero, one, b);
    return builder.CreateSelect(byZero, zero, builder.CreateUDiv(a, divisor));
  }
  // The minimum divided by -1 overflows (and traps on x86); Numba's
  // int_divmod_signed gives 0 then, as for division by 0.
  llvm::Value *minimum = llvm::ConstantInt::get(
      intType, llvm::APInt::getSignedMinValue(intType->getIntegerBitWidth()));
  llvm::Value *overflows =
      builder.CreateAnd(builder.CreateICmpEQ(a, minimum),
                        builder.CreateICmpEQ(b, llvm::ConstantInt::getSigned(intType, -1)));
  llvm::Value *special = builder.CreateOr(byZero, overflows);
  llvm::Value *divisor = builder.CreateSelect(special, one, b);
  llvm::Value *quotient = builder.CreateSDiv(a, divisor);
  llvm::Value *remainder = builder.CreateSRem(a, divisor);
  // C truncates; Python floors: step down when the remainder's sign differs
  // from the divisor's.
  llvm::Value *adjust =
      builder.CreateAnd(builder.CreateICmpNE(remainder, zero),
                        builder.CreateICmpSLT(builder.CreateXor(remainder, b), zero));
  llvm::Value *result = builder.CreateSub(quotient, builder.CreateZExt(adjust, intType));
  return builder.CreateSelect(special, zero, result);
}

llvm::Value *FunctionLowering::flooredRemainder(llvm::Value *a, llvm::Value *b, bool isSigned) {
  // No select on the divisor alone: in a loop whose divisor is invariant
  // (`(i + j) % n`), LLVM's loop unswitching would copy the loop for each
  // such select (n == 0, n == -1), doubling the code it compiles each time.
  // The remainder by |b| is the remainder by b, by 1 it is 0: Numba's answer
  // for a zero divisor, and Python's for -1, whose remainder of the minimum
  // would overflow (and trap on x86).
  llvm::Type *intType = a->getType();
  llvm::Constant *zero = llvm::ConstantInt::get(intType, 0);
  llvm::Value *byZero = builder.CreateZExt(builder.CreateICmpEQ(b, zero), intType);
  if (!isSigned)
    return builder.CreateURem(a, builder.CreateOr(b, byZero));
  llvm::Value *magnitude =
      builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, b, builder.getFalse());
  llvm::Value *remainder = builder.CreateSRem(a, builder.CreateOr(magnitude, byZero));
  // C truncates; Python floors: step towards the divisor's sign when the
  // remainder's sign differs from it.
  llvm::Value *adjust =
      builder.CreateAnd(builder.CreateICmpNE(remainder, zero),
                        builder.CreateICmpSLT(builder.CreateXor(remainder, b), zero));
  return builder.CreateSelect(adjust, builder.CreateAdd(remainder, b), remainder);
}

//===----------------------------------------------------------------------===//
// Powers
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::power(llvm::Value *base, llvm::Value *exponent, const Type *baseType,
                                     const Type *exponentType) {
  if (const auto *complex = llvm::dyn_cast<ComplexType>(baseType))
    return complexPower(base, exponent, complex->elementType());
  if (llvm::isa<FloatType>(baseType) && llvm::isa<FloatType>(exponentType))
    return callMath(ir::Intrinsic::PowF, {base, exponent},
                    llvm::cast<FloatType>(baseType)->bitwidth());
  return integerPower(base, exponent, isSignedInteger(baseType), isSignedInteger(exponentType));
}

namespace {
/// Numba's int_power multiplies by squaring up to this exponent, and calls
/// math.pow beyond it.
constexpr int64_t SquaringCutoff = 0x10000;
} // namespace

/// math.pow(base, float(exponent)) converted back to the base's type, as
/// Numba's int_power computes powers beyond SquaringCutoff (integers
/// saturate, as on a GPU).
static llvm::Value *powerByLibrary(FunctionLowering &lowering, llvm::Value *base,
                                   llvm::Value *exponent, bool baseSigned, bool exponentSigned) {
  llvm::IRBuilder<> &builder = lowering.builder;
  llvm::Type *doubleType = builder.getDoubleTy();
  bool isFloat = base->getType()->isFloatingPointTy();
  llvm::Value *x = isFloat      ? builder.CreateFPCast(base, doubleType)
                   : baseSigned ? builder.CreateSIToFP(base, doubleType)
                                : builder.CreateUIToFP(base, doubleType);
  llvm::Value *y = exponentSigned ? builder.CreateSIToFP(exponent, doubleType)
                                  : builder.CreateUIToFP(exponent, doubleType);
  llvm::Value *result = lowering.callMath(ir::Intrinsic::PowF, {x, y}, 64);
  if (isFloat)
    return builder.CreateFPCast(result, base->getType());
  return lowering.hooks.saturatingFloatToInteger(
      builder, result, llvm::cast<llvm::IntegerType>(base->getType()), baseSigned);
}

llvm::Value *FunctionLowering::integerPower(llvm::Value *base, llvm::Value *exponent,
                                            bool baseSigned, bool exponentSigned) {
  bool isFloat = base->getType()->isFloatingPointTy();
  llvm::Type *type = base->getType();
  auto one = [&]() -> llvm::Value * {
    return isFloat ? llvm::ConstantFP::get(type, 1.0) : llvm::ConstantInt::get(type, 1);
  };
  auto multiply = [&](llvm::Value *x, llvm::Value *y) {
    return isFloat ? builder.CreateFMul(x, y) : builder.CreateMul(x, y);
  };
  // A constant exponent (x**2) multiplies out at compile time, as Numba's
  // static_power_impl does.
  if (auto *known = llvm::dyn_cast<llvm::ConstantInt>(exponent)) {
    int64_t value =
        exponentSigned ? known->getSExtValue() : static_cast<int64_t>(known->getZExtValue());
    if (value >= 0 && value <= 64) {
      llvm::Value *result = nullptr;
      llvm::Value *square = base;
      for (uint64_t e = static_cast<uint64_t>(value); e; e >>= 1) {
        if (e & 1)
          result = result ? multiply(result, square) : square;
        if (e > 1)
          square = multiply(square, square);
      }
      return result ? result : one();
    }
  }

  llvm::Value *wide = builder.CreateIntCast(exponent, types.i64(), exponentSigned);
  llvm::Value *negative =
      exponentSigned ? builder.CreateICmpSLT(wide, i64(0)) : builder.getInt1(false);
  llvm::Value *magnitude = builder.CreateSelect(negative, builder.CreateNeg(wide), wide);
  llvm::Value *huge = builder.CreateICmpUGT(magnitude, i64(SquaringCutoff));

  llvm::BasicBlock *viaLibrary =
      llvm::BasicBlock::Create(lowered.getContext(), "pow.libm", &lowered);
  llvm::BasicBlock *squaring =
      llvm::BasicBlock::Create(lowered.getContext(), "pow.squaring", &lowered);
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(lowered.getContext(), "pow.loop", &lowered);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(lowered.getContext(), "pow.done", &lowered);
  builder.CreateCondBr(huge, viaLibrary, squaring);

  builder.SetInsertPoint(viaLibrary);
  llvm::Value *byLibrary = powerByLibrary(*this, base, exponent, baseSigned, exponentSigned);
  llvm::BasicBlock *libraryEnd = builder.GetInsertBlock();
  builder.CreateBr(done);

  builder.SetInsertPoint(squaring);
  builder.CreateCondBr(builder.CreateICmpEQ(magnitude, i64(0)), done, loop);

  builder.SetInsertPoint(loop);
  llvm::PHINode *result = builder.CreatePHI(type, 2);
  llvm::PHINode *square = builder.CreatePHI(type, 2);
  llvm::PHINode *remaining = builder.CreatePHI(types.i64(), 2);
  llvm::Value *odd = builder.CreateTrunc(remaining, types.i1());
  llvm::Value *nextResult = builder.CreateSelect(odd, multiply(result, square), result);
  llvm::Value *nextSquare = multiply(square, square);
  llvm::Value *nextRemaining = builder.CreateLShr(remaining, i64(1));
  result->addIncoming(one(), squaring);
  result->addIncoming(nextResult, loop);
  square->addIncoming(base, squaring);
  square->addIncoming(nextSquare, loop);
  remaining->addIncoming(magnitude, squaring);
  remaining->addIncoming(nextRemaining, loop);
  builder.CreateCondBr(builder.CreateICmpEQ(nextRemaining, i64(0)), done, loop);

  builder.SetInsertPoint(done);
  llvm::PHINode *power = builder.CreatePHI(type, 3);
  power->addIncoming(byLibrary, libraryEnd);
  power->addIncoming(one(), squaring);
  power->addIncoming(nextResult, loop);
  if (isFloat) {
    // math.pow took the exponent's sign into account already.
    llvm::Value *invert = builder.CreateAnd(negative, builder.CreateNot(huge));
    return builder.CreateSelect(invert, builder.CreateFDiv(one(), power), power);
  }
  // An integer to a negative power: only 1 and -1 give non-zero integers,
  // and 0 gives the minimum value (Numba's _get_power_zerodiv_return).
  llvm::Value *baseIsOne = builder.CreateICmpEQ(base, one());
  llvm::Value *baseIsMinusOne = builder.CreateICmpEQ(base, llvm::ConstantInt::getSigned(type, -1));
  llvm::Value *baseIsZero = builder.CreateICmpEQ(base, llvm::ConstantInt::get(type, 0));
  llvm::Value *oddExponent = builder.CreateTrunc(magnitude, types.i1());
  llvm::Value *minimum =
      llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(type->getIntegerBitWidth()));
  llvm::Value *inverse = builder.CreateSelect(
      baseIsOne, one(),
      builder.CreateSelect(
          baseIsMinusOne,
          builder.CreateSelect(oddExponent, llvm::ConstantInt::getSigned(type, -1), one()),
          builder.CreateSelect(baseIsZero, minimum, llvm::ConstantInt::get(type, 0))));
  // Beyond the cutoff, Numba lets math.pow decide for 1 and -1 too: the
  // exponent's parity is that of its float64 rounding.
  llvm::Value *unitBase = builder.CreateOr(baseIsOne, baseIsMinusOne);
  inverse = builder.CreateSelect(builder.CreateAnd(huge, unitBase), power, inverse);
  return builder.CreateSelect(negative, inverse, power);
}

//===----------------------------------------------------------------------===//
// Complex numbers
//===----------------------------------------------------------------------===//

llvm::Value *FunctionLowering::complexMultiply(llvm::Value *a, llvm::Value *b) {
  llvm::Value *ar = builder.CreateExtractValue(a, {0});
  llvm::Value *ai = builder.CreateExtractValue(a, {1});
  llvm::Value *br = builder.CreateExtractValue(b, {0});
  llvm::Value *bi = builder.CreateExtractValue(b, {1});
  return makeComplex(builder.CreateFSub(builder.CreateFMul(ar, br), builder.CreateFMul(ai, bi)),
                     builder.CreateFAdd(builder.CreateFMul(ar, bi), builder.CreateFMul(ai, br)));
}

llvm::Value *FunctionLowering::complexDivide(llvm::Value *a, llvm::Value *b) {
  // CPython's _Py_c_quot (Smith's method), with both branches computed and
  // selected; a zero divisor raised before (raiseOnZeroDivisor).
  llvm::Value *ar = builder.CreateExtractValue(a, {0});
  llvm::Value *ai = builder.CreateExtractValue(a, {1});
  llvm::Value *br = builder.CreateExtractValue(b, {0});
  llvm::Value *bi = builder.CreateExtractValue(b, {1});
  llvm::Value *absBr = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, br);
  llvm::Value *absBi = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, bi);

  llvm::Value *ratio1 = builder.CreateFDiv(bi, br);
  llvm::Value *denominator1 = builder.CreateFAdd(br, builder.CreateFMul(bi, ratio1));
  llvm::Value *real1 =
      builder.CreateFDiv(builder.CreateFAdd(ar, builder.CreateFMul(ai, ratio1)), denominator1);
  llvm::Value *imag1 =
      builder.CreateFDiv(builder.CreateFSub(ai, builder.CreateFMul(ar, ratio1)), denominator1);

  llvm::Value *ratio2 = builder.CreateFDiv(br, bi);
  llvm::Value *denominator2 = builder.CreateFAdd(builder.CreateFMul(br, ratio2), bi);
  llvm::Value *real2 =
      builder.CreateFDiv(builder.CreateFAdd(builder.CreateFMul(ar, ratio2), ai), denominator2);
  llvm::Value *imag2 =
      builder.CreateFDiv(builder.CreateFSub(builder.CreateFMul(ai, ratio2), ar), denominator2);

  llvm::Value *nan = llvm::ConstantFP::getNaN(ar->getType());
  llvm::Value *first = builder.CreateFCmpOGE(absBr, absBi);
  llvm::Value *second = builder.CreateFCmpOGE(absBi, absBr);
  llvm::Value *real = builder.CreateSelect(first, real1, builder.CreateSelect(second, real2, nan));
  llvm::Value *imag = builder.CreateSelect(first, imag1, builder.CreateSelect(second, imag2, nan));
  return makeComplex(real, imag);
}

llvm::Value *FunctionLowering::complexPower(llvm::Value *a, llvm::Value *b,
                                            const FloatType *partType) {
  // CPython's _Py_c_pow, branching as numba-cuda's port does: a zero
  // exponent or base is decided before any library call, and exp and log
  // run only for an exponent with an imaginary part, so that nothing of the
  // paths not taken is live across the others.
  unsigned bits = partType->bitwidth();
  llvm::Value *ar = builder.CreateExtractValue(a, {0});
  llvm::Value *ai = builder.CreateExtractValue(a, {1});
  llvm::Value *br = builder.CreateExtractValue(b, {0});
  llvm::Value *bi = builder.CreateExtractValue(b, {1});
  llvm::Type *part = ar->getType();
  llvm::Constant *zero = llvm::ConstantFP::get(part, 0.0);
  llvm::Constant *one = llvm::ConstantFP::get(part, 1.0);

  llvm::LLVMContext &context = lowered.getContext();
  llvm::BasicBlock *nonZeroExponent = llvm::BasicBlock::Create(context, "cpow.exponent", &lowered);
  llvm::BasicBlock *general = llvm::BasicBlock::Create(context, "cpow.general", &lowered);
  llvm::BasicBlock *imaginaryExponent =
      llvm::BasicBlock::Create(context, "cpow.imaginary", &lowered);
  llvm::BasicBlock *polar = llvm::BasicBlock::Create(context, "cpow.polar", &lowered);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "cpow.done", &lowered);
  llvm::PHINode *real = llvm::PHINode::Create(part, 3, "cpow.real", done);
  llvm::PHINode *imag = llvm::PHINode::Create(part, 3, "cpow.imag", done);

  // x**0 is 1.
  llvm::Value *exponentZero =
      builder.CreateAnd(builder.CreateFCmpOEQ(br, zero), builder.CreateFCmpOEQ(bi, zero));
  real->addIncoming(one, builder.GetInsertBlock());
  imag->addIncoming(zero, builder.GetInsertBlock());
  builder.CreateCondBr(exponentZero, done, nonZeroExponent);

  // 0**y is 0, or NaN where CPython raises ZeroDivisionError (as Numba's
  // numba_cpow).
  builder.SetInsertPoint(nonZeroExponent);
  llvm::Value *baseZero =
      builder.CreateAnd(builder.CreateFCmpOEQ(ar, zero), builder.CreateFCmpOEQ(ai, zero));
  llvm::Value *hasImaginaryExponent = builder.CreateFCmpUNE(bi, zero);
  llvm::Value *undefined = builder.CreateOr(hasImaginaryExponent, builder.CreateFCmpOLT(br, zero));
  llvm::Value *zeroResult = builder.CreateSelect(undefined, llvm::ConstantFP::getNaN(part), zero);
  real->addIncoming(zeroResult, nonZeroExponent);
  imag->addIncoming(zeroResult, nonZeroExponent);
  builder.CreateCondBr(baseZero, done, general);

  builder.SetInsertPoint(general);
  llvm::Value *magnitude = callMath(ir::Intrinsic::Hypot, {ar, ai}, bits);
  llvm::Value *length = callMath(ir::Intrinsic::PowF, {magnitude, br}, bits);
  llvm::Value *angle = callMath(ir::Intrinsic::Atan2, {ai, ar}, bits);
  llvm::Value *phase = builder.CreateFMul(angle, br);
  llvm::BasicBlock *generalEnd = builder.GetInsertBlock();
  builder.CreateCondBr(hasImaginaryExponent, imaginaryExponent, polar);

  builder.SetInsertPoint(imaginaryExponent);
  llvm::Value *shrunk = builder.CreateFDiv(
      length, callMath(ir::Intrinsic::Exp, {builder.CreateFMul(angle, bi)}, bits));
  llvm::Value *turned = builder.CreateFAdd(
      phase, builder.CreateFMul(bi, callMath(ir::Intrinsic::Log, {magnitude}, bits)));
  llvm::BasicBlock *imaginaryEnd = builder.GetInsertBlock();
  builder.CreateBr(polar);

  builder.SetInsertPoint(polar);
  llvm::PHINode *finalLength = builder.CreatePHI(part, 2);
  finalLength->addIncoming(length, generalEnd);
  finalLength->addIncoming(shrunk, imaginaryEnd);
  llvm::PHINode *finalPhase = builder.CreatePHI(part, 2);
  finalPhase->addIncoming(phase, generalEnd);
  finalPhase->addIncoming(turned, imaginaryEnd);
  llvm::Value *polarReal =
      builder.CreateFMul(finalLength, callMath(ir::Intrinsic::Cos, {finalPhase}, bits));
  llvm::Value *polarImag =
      builder.CreateFMul(finalLength, callMath(ir::Intrinsic::Sin, {finalPhase}, bits));
  real->addIncoming(polarReal, builder.GetInsertBlock());
  imag->addIncoming(polarImag, builder.GetInsertBlock());
  builder.CreateBr(done);

  builder.SetInsertPoint(done);
  return makeComplex(real, imag);
}

} // namespace kiln::backend
