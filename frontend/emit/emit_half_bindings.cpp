//===- frontend/emit/emit_half_bindings.cpp - The float16 and bfloat16 bindings ===//
//
// The functions of cuda_fp16.h and cuda_bf16.h that numba-cuda binds
// (numba.cuda.fp16, numba.cuda.bf16), as typed IR on float16 and bfloat16
// values: arithmetic and comparisons as operators, math as intrinsics
// (computed in float32 and rounded, as the headers do on GPUs without
// half-precision math), conversions as casts. The rest follows the headers:
//   - `_sat` saturates to [0, 1], NaN to 0;
//   - `hmax`/`hmin` return the other operand where one is NaN, the `_nan`
//     forms NaN;
//   - the unordered comparisons (`hequ`, ...) are true where one operand
//     is NaN, and `hne` is false there, unlike Python's `!=`;
//   - bfloat16 to integer conversions round as their suffix says, then
//     saturate, NaN to 0;
//   - conversions to bfloat16 that round toward zero (`_rz`), down (`_rd`)
//     or up (`_ru`) start from the nearest bfloat16 and step to the
//     neighbour on the wanted side where it is on the other; integers are
//     compared through float64, exactly up to 2**53.
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/function_emitter.h"

namespace kiln::emit {

ir::Value *FunctionEmitter::emitHalfBinding(llvm::StringRef name, const Type *result,
                                            llvm::ArrayRef<ir::Value *> args) {
  using I = ir::Intrinsic;
  using Op = ir::Opcode;
  const Type *boolean = types.boolean();
  // A constant of the operands' type (float16 or bfloat16).
  auto halfConstant = [&](double value) {
    return constant(args[0]->type(), ConstantValue::floating(value));
  };
  auto isNan = [&](ir::Value *x) { return intrinsic(I::IsNan, boolean, {x}); };
  // The NaN operand where there is one, else `value`.
  auto nanPropagating = [&](ir::Value *value, ir::Value *a, ir::Value *b) {
    ir::Value *unlessB = emit(Op::Select, result, {isNan(b), b, value});
    return emit(Op::Select, result, {isNan(a), a, unlessB});
  };
  auto saturate = [&](ir::Value *x) {
    ir::Value *atLeastZero = intrinsic(I::Fmax, result, {x, halfConstant(0.0)});
    return intrinsic(I::Fmin, result, {atLeastZero, halfConstant(1.0)});
  };

  static const std::map<llvm::StringRef, Op> operators = {
      {"hadd", Op::Add},    {"hsub", Op::Sub},    {"hmul", Op::Mul},    {"hdiv", Op::TrueDiv},
      {"hadd_rn", Op::Add}, {"hsub_rn", Op::Sub}, {"hmul_rn", Op::Mul}, {"heq", Op::Eq},
      {"hneu", Op::Ne},     {"hgt", Op::Gt},      {"hge", Op::Ge},      {"hlt", Op::Lt},
      {"hle", Op::Le},      {"hneg", Op::Neg}};
  if (auto op = operators.find(name); op != operators.end())
    return emit(op->second, result, args);
  // Unordered comparisons: the negation of the opposite ordered one.
  static const std::map<llvm::StringRef, Op> unordered = {
      {"hgtu", Op::Le}, {"hgeu", Op::Lt}, {"hltu", Op::Ge}, {"hleu", Op::Gt}};
  if (auto op = unordered.find(name); op != unordered.end())
    return emit(Op::Not, boolean, {emit(op->second, boolean, args)});
  if (name == "hne" || name == "hequ") {
    ir::Value *ordered =
        emit(Op::Or, boolean, {emit(Op::Lt, boolean, args), emit(Op::Gt, boolean, args)});
    return name == "hne" ? ordered : emit(Op::Not, boolean, {ordered});
  }
  static const std::map<llvm::StringRef, I> math = {
      {"habs", I::Fabs},    {"hfma", I::Fma},     {"hmax", I::Fmax},    {"hmin", I::Fmin},
      {"htrunc", I::Trunc}, {"hceil", I::Ceil},   {"hfloor", I::Floor}, {"hrint", I::Rint},
      {"hsqrt", I::Sqrt},   {"hrsqrt", I::Rsqrt}, {"hlog", I::Log},     {"hlog2", I::Log2},
      {"hlog10", I::Log10}, {"hcos", I::Cos},     {"hsin", I::Sin},     {"hexp", I::Exp},
      {"hexp2", I::Exp2},   {"hexp10", I::Exp10}, {"htanh", I::Tanh},   {"htanh_approx", I::Tanh},
      {"hisnan", I::IsNan}};
  if (auto op = math.find(name); op != math.end())
    return intrinsic(op->second, result, args);
  if (name == "hrcp")
    return emit(Op::TrueDiv, result, {halfConstant(1.0), args[0]});
  if (name == "hmax_nan" || name == "hmin_nan")
    return nanPropagating(intrinsic(name == "hmax_nan" ? I::Fmax : I::Fmin, result, args), args[0],
                          args[1]);
  if (name.consume_back("_sat")) {
    Op op = name == "hadd" ? Op::Add : name == "hsub" ? Op::Sub : Op::Mul;
    ir::Value *value = name == "hfma" ? intrinsic(I::Fma, result, args) : emit(op, result, args);
    return saturate(value);
  }
  if (name == "hfma_relu") {
    ir::Value *value = intrinsic(I::Fma, result, args);
    return emit(Op::Select, result,
                {isNan(value), value, intrinsic(I::Fmax, result, {value, halfConstant(0.0)})});
  }
  if (name == "hisinf") {
    // -1 for -inf, 1 for +inf, else 0.
    const Type *int32 = types.int32();
    ir::Value *sign = emit(Op::Select, int32,
                           {emit(Op::Lt, boolean, {args[0], halfConstant(0.0)}),
                            intConstant(int32, -1), intConstant(int32, 1)});
    return emit(Op::Select, int32,
                {intrinsic(I::IsInf, boolean, {args[0]}), sign, intConstant(int32, 0)});
  }
  if (name.contains("_as_"))
    return intrinsic(I::Bitcast, result, args);
  // Conversions to bfloat16 that round toward zero, down or up.
  if (auto [conversion, rounding] = name.rsplit('_');
      conversion.ends_with("2bfloat16") && llvm::is_contained({"rz", "rd", "ru"}, rounding))
    return roundToBFloat16(args[0], rounding);
  // bfloat162<int>_<rounding>: round to an integral bfloat16 first.
  if (name.starts_with("bfloat162") && !name.ends_with("float")) {
    static const std::map<llvm::StringRef, I> roundings = {
        {"rn", I::Rint}, {"rd", I::Floor}, {"ru", I::Ceil}};
    ir::Value *value = args[0];
    if (auto rounding = roundings.find(name.rsplit('_').second); rounding != roundings.end())
      value = intrinsic(rounding->second, value->type(), {value});
    return convert(value, result);
  }
  // The other conversions round to nearest even, as casts do.
  return convert(args[0], result);
}

ir::Value *FunctionEmitter::roundToBFloat16(ir::Value *value, llvm::StringRef rounding) {
  using Op = ir::Opcode;
  const Type *bf16 = types.bfloat16();
  const Type *float64 = types.float64();
  const Type *boolean = types.boolean();
  const Type *bits16 = types.integer(16, false);
  ir::Value *exact = convert(value, float64);
  ir::Value *nearest = convert(exact, bf16);
  ir::Value *back = convert(nearest, float64);
  // The neighbours of `nearest` through its bits: a bfloat16's magnitude
  // grows with its bits, and the zeros' neighbours are the smallest
  // subnormals.
  ir::Value *bits = intrinsic(ir::Intrinsic::Bitcast, bits16, {nearest});
  ir::Value *zero = constant(bf16, ConstantValue::floating(0.0));
  ir::Value *isZero = emit(Op::Eq, boolean, {nearest, zero});
  ir::Value *isPositive = emit(Op::Gt, boolean, {nearest, zero});
  ir::Value *larger = emit(Op::Add, bits16, {bits, intConstant(bits16, 1)});
  ir::Value *smaller = emit(Op::Sub, bits16, {bits, intConstant(bits16, 1)});
  auto neighbour = [&](bool up) {
    ir::Value *away =
        emit(Op::Select, bits16, {isPositive, up ? larger : smaller, up ? smaller : larger});
    ir::Value *fromZero = intConstant(bits16, up ? 0x0001 : 0x8001);
    return intrinsic(ir::Intrinsic::Bitcast, bf16,
                     {emit(Op::Select, bits16, {isZero, fromZero, away})});
  };
  ir::Value *roundedUp =
      emit(Op::Select, bf16, {emit(Op::Lt, boolean, {back, exact}), neighbour(true), nearest});
  ir::Value *roundedDown =
      emit(Op::Select, bf16, {emit(Op::Gt, boolean, {back, exact}), neighbour(false), nearest});
  if (rounding == "ru")
    return roundedUp;
  if (rounding == "rd")
    return roundedDown;
  // Toward zero: down from above zero, up from below.
  ir::Value *nonNegative =
      emit(Op::Ge, boolean, {exact, constant(float64, ConstantValue::floating(0.0))});
  return emit(Op::Select, bf16, {nonNegative, roundedDown, roundedUp});
}

} // namespace kiln::emit
