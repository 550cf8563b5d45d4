//===- frontend/emit/emit_fp8_conversions.cpp - Converting FP8 values -----===//
//
// The conversions between numbers and numba-cuda's FP8 types, as the
// constructors and conversion operators of cuda_fp8.h define them, through
// the functions of Kiln's prelude module numba.cuda._internal.cuda_fp8
// (frontend/prelude/numba_cuda_fp8.py), on the 8 storage bits:
//   - to E4M3 and E5M2, from any number: rounded to nearest, ties to even,
//     saturating to the largest finite value (an integer is exact as a
//     float64 wherever it does not saturate);
//   - to E8M0, from a float: rounded up to a power of two (the magnitude's),
//     saturating; from an integer: the same, computed on the integer;
//   - from FP8 to a float: exactly through float32, then rounded to the
//     nearest value of the target;
//   - from FP8 to an integer: truncated toward zero and saturated, NaN to 0;
//   - to bool: E4M3 and E5M2 are true unless zero, E8M0 always (it has no
//     zero).
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/function_emitter.h"

namespace kiln::emit {

namespace {

constexpr llvm::StringLiteral fp8Module = "numba.cuda._internal.cuda_fp8";
// saturation_t::SATFINITE, and cudaRoundMode::cudaRoundPosInf.
constexpr int64_t saturateFinite = 1;
constexpr int64_t roundUp = 2;

/// fp8_interpretation_t's value for an E4M3 or E5M2 type.
int64_t interpretationOf(const Fp8Type *type) {
  return type->format() == Fp8Type::Format::E4M3 ? 0 : 1;
}

} // namespace

ir::Value *FunctionEmitter::callFp8Prelude(llvm::StringRef name, llvm::ArrayRef<ir::Value *> args) {
  return callPrelude(fp8Module, name, args);
}

ir::Value *FunctionEmitter::convertToFp8(ir::Value *value, const Fp8Type *type) {
  const Type *int64 = types.int64();
  const Type *source = types.unliteral(value->type());
  value = convert(value, source);
  ir::Value *bits = nullptr;
  if (type->format() != Fp8Type::Format::E8M0) {
    bits = callFp8Prelude("cvt_double_to_fp8",
                          {convert(value, types.float64()), intConstant(int64, saturateFinite),
                           intConstant(int64, interpretationOf(type))});
  } else if (llvm::isa<IntegerType>(source)) {
    bits = callFp8Prelude("integer_to_e8m0", {value});
  } else {
    const auto *real = llvm::cast<FloatType>(source);
    bool isDouble = real->bitwidth() == 64;
    bits = callFp8Prelude(isDouble ? "cvt_double_to_e8m0" : "cvt_float_to_e8m0",
                          {convert(value, isDouble ? types.float64() : types.float32()),
                           intConstant(int64, saturateFinite), intConstant(int64, roundUp)});
  }
  if (!bits)
    return nullptr;
  return intrinsic(ir::Intrinsic::Bitcast, type, {convert(bits, types.integer(8, false))});
}

ir::Value *FunctionEmitter::convertFromFp8(ir::Value *value, const Type *type) {
  const auto *fp8 = llvm::cast<Fp8Type>(value->type());
  bool isE8M0 = fp8->format() == Fp8Type::Format::E8M0;
  ir::Value *bits = intrinsic(ir::Intrinsic::Bitcast, types.integer(8, false), {value});
  if (llvm::isa<BooleanType>(type)) {
    if (isE8M0)
      return constant(type, ConstantValue::boolean(true));
    return callFp8Prelude("fp8_is_nonzero", {bits});
  }
  ir::Value *real = isE8M0
                        ? callFp8Prelude("e8m0_to_float32", {bits})
                        : callFp8Prelude("fp8_to_float32",
                                         {bits, intConstant(types.int64(), interpretationOf(fp8))});
  if (!real)
    return nullptr;
  const auto *integer = llvm::dyn_cast<IntegerType>(type);
  if (!integer)
    return convert(real, type);
  unsigned bitwidth = integer->bitwidth();
  ir::Value *saturated = nullptr;
  if (integer->signedness()) {
    Int128 high = (static_cast<Int128>(1) << (bitwidth - 1)) - 1;
    saturated = callFp8Prelude("to_signed", {real, intConstant(types.int64(), int64_t(-high - 1)),
                                             intConstant(types.int64(), int64_t(high))});
  } else {
    Int128 high = (static_cast<Int128>(1) << bitwidth) - 1;
    saturated = callFp8Prelude("to_unsigned",
                               {real, constant(types.uint64(), ConstantValue::integer(high))});
  }
  return saturated ? convert(saturated, type) : nullptr;
}

} // namespace kiln::emit
