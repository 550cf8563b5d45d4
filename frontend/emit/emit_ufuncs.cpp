//===- frontend/emit/emit_ufuncs.cpp - NumPy ufuncs -----------------------===//
//
// A ufunc call on scalars is its loop's element operation. With an output
// array, Kiln writes the loop nest NumPy's ufunc machinery would run: one
// loop per dimension of the output, inputs broadcast onto it (aligned on
// their last dimensions; a dimension of extent 1 repeats its element), each
// element converted to the loop's input types and the result to the
// output's dtype. The element operations are those of Numba's CUDA target
// (numba/cuda/ufuncs.py): libdevice math for floats, Kiln's cmath for
// complex numbers, and NumPy's rules where they differ from Python's
// (lexicographic complex order, NaN-propagating maximum, division without
// ZeroDivisionError).
//
//===----------------------------------------------------------------------===//

#include "frontend/emit/function_emitter.h"

#include <cmath>

namespace kiln::emit {

using B = BuiltinId;
using Op = ir::Opcode;

namespace {

bool isComplex(ir::Value *value) {
  return llvm::isa<ComplexType>(value->type());
}

} // namespace

ir::Value *FunctionEmitter::emitUfunc(const ssa::Instr *instr, const Resolution &resolution) {
  // The resolution's operand types: the callee's (none), then the loop's
  // input types and its output type.
  llvm::ArrayRef<const Type *> loop = llvm::ArrayRef(resolution.operandTypes).drop_front();
  size_t inputCount = loop.size() - 1;
  std::vector<ir::Value *> inputs;
  for (size_t i = 0; i < inputCount; ++i) {
    ir::Value *input = valueOf(instr->operands[i + 1]);
    // Scalars convert once, outside any loop.
    inputs.push_back(llvm::isa<ArrayType>(input->type()) ? input : convert(input, loop[i]));
  }
  if (instr->operands.size() == inputCount + 1)
    return emitUfuncElement(resolution.builtin, inputs, loop.back());

  ir::Value *out = valueOf(instr->operands[inputCount + 1]);
  const auto *outType = llvm::cast<ArrayType>(out->type());
  emitLoopNest(out, [&](llvm::ArrayRef<ir::Value *> index) {
    std::vector<ir::Value *> elements;
    for (size_t i = 0; i < inputCount; ++i) {
      const auto *array = llvm::dyn_cast<ArrayType>(inputs[i]->type());
      if (!array) {
        elements.push_back(inputs[i]);
        continue;
      }
      elements.push_back(convert(broadcastElement(inputs[i], index), loop[i]));
    }
    ir::Value *result = emitUfuncElement(resolution.builtin, elements, loop.back());
    std::vector<ir::Value *> operands{out};
    operands.insert(operands.end(), index.begin(), index.end());
    operands.push_back(convert(result, outType->elementType()));
    emit(Op::ArrayStore, nullptr, operands);
  });
  return out;
}

ir::Value *FunctionEmitter::broadcastElement(ir::Value *array, llvm::ArrayRef<ir::Value *> index) {
  const auto *type = llvm::cast<ArrayType>(array->type());
  std::vector<ir::Value *> operands{array};
  size_t offset = index.size() - type->rank();
  for (unsigned d = 0; d < type->rank(); ++d) {
    ir::Instruction *extent = emit(Op::ArrayShape, types.int64(), {array});
    extent->index = d;
    ir::Value *repeats = emit(Op::Eq, types.boolean(), {extent, intConstant(types.int64(), 1)});
    operands.push_back(emit(Op::Select, types.int64(),
                            {repeats, intConstant(types.int64(), 0), index[offset + d]}));
  }
  return emit(Op::ArrayLoad, type->elementType(), operands);
}

void FunctionEmitter::emitLoopNest(ir::Value *array,
                                   llvm::function_ref<void(llvm::ArrayRef<ir::Value *>)> body) {
  unsigned rank = llvm::cast<ArrayType>(array->type())->rank();
  const Type *int64 = types.int64();
  std::vector<ir::Value *> extents;
  for (unsigned d = 0; d < rank; ++d) {
    ir::Instruction *extent = emit(Op::ArrayShape, int64, {array});
    extent->index = d;
    extents.push_back(extent);
  }
  if (rank == 0) {
    body({});
    return;
  }
  // Blocks in an order where definitions come before uses: the headers
  // from the outermost loop in, the body, the latches from the innermost
  // loop out, then the code after the call.
  ir::Block *entry = current, *place = current;
  auto next = [&] { return place = function.insertBlockAfter(place); };
  std::vector<ir::Block *> headers, latches(rank);
  for (unsigned d = 0; d < rank; ++d)
    headers.push_back(next());
  ir::Block *inner = next();
  for (unsigned d = rank; d-- > 0;)
    latches[d] = next();
  ir::Block *exit = next();

  ir::jump(current, headers[0]);
  std::vector<ir::Value *> counters;
  for (unsigned d = 0; d < rank; ++d) {
    current = headers[d];
    ir::Instruction *counter = emit(Op::Phi, int64, {});
    counter->operands.push_back(intConstant(int64, 0));
    counter->incoming.push_back(d == 0 ? entry : headers[d - 1]);
    counters.push_back(counter);
    ir::branch(current, emit(Op::Lt, types.boolean(), {counter, extents[d]}),
               d + 1 < rank ? headers[d + 1] : inner, d == 0 ? exit : latches[d - 1]);
  }
  current = inner;
  body(counters);
  ir::jump(current, latches[rank - 1]);
  for (unsigned d = 0; d < rank; ++d) {
    current = latches[d];
    ir::Value *following = emit(Op::Add, int64, {counters[d], intConstant(int64, 1)});
    auto *counter = llvm::cast<ir::Instruction>(counters[d]);
    counter->operands.push_back(following);
    counter->incoming.push_back(latches[d]);
    ir::jump(current, headers[d]);
  }
  current = exit;
}

ir::Value *FunctionEmitter::isNanOf(ir::Value *x) {
  const Type *boolean = types.boolean();
  if (const auto *complex = llvm::dyn_cast<ComplexType>(x->type())) {
    const Type *part = complex->elementType();
    return emit(Op::Or, boolean,
                {intrinsic(ir::Intrinsic::IsNan, boolean, {emit(Op::ComplexReal, part, {x})}),
                 intrinsic(ir::Intrinsic::IsNan, boolean, {emit(Op::ComplexImag, part, {x})})});
  }
  if (llvm::isa<FloatType>(x->type()))
    return intrinsic(ir::Intrinsic::IsNan, boolean, {x});
  return constant(boolean, ConstantValue::boolean(false)); // integers and booleans
}

ir::Value *FunctionEmitter::emitUfuncCompare(Op op, ir::Value *a, ir::Value *b) {
  const Type *boolean = types.boolean();
  const auto *left = llvm::dyn_cast<IntegerType>(a->type());
  const auto *right = llvm::dyn_cast<IntegerType>(b->type());
  if (left && right && left->signedness() != right->signedness()) {
    // int64 against uint64: a negative side is the smaller one.
    bool leftNegativeResult = op == Op::Lt || op == Op::Le || op == Op::Ne;
    bool rightNegativeResult = op == Op::Gt || op == Op::Ge || op == Op::Ne;
    ir::Value *signedSide = left->signedness() ? a : b;
    ir::Value *negative = emit(Op::Lt, boolean, {signedSide, intConstant(signedSide->type(), 0)});
    const Type *unsignedType = left->signedness() ? b->type() : a->type();
    ir::Value *compared = emit(op, boolean, {convert(a, unsignedType), convert(b, unsignedType)});
    bool whenNegative = left->signedness() ? leftNegativeResult : rightNegativeResult;
    return emit(Op::Select, boolean,
                {negative, constant(boolean, ConstantValue::boolean(whenNegative)), compared});
  }
  const auto *complex = llvm::dyn_cast<ComplexType>(a->type());
  if (!complex || op == Op::Eq || op == Op::Ne)
    return emit(op, boolean, {a, b});
  // NumPy orders complex numbers by real part, then imaginary part; a NaN
  // imaginary part makes the real parts' order void.
  const Type *part = complex->elementType();
  ir::Value *ar = emit(Op::ComplexReal, part, {a}), *ai = emit(Op::ComplexImag, part, {a});
  ir::Value *br = emit(Op::ComplexReal, part, {b}), *bi = emit(Op::ComplexImag, part, {b});
  Op strict = op == Op::Lt || op == Op::Le ? Op::Lt : Op::Gt;
  ir::Value *ordered = emit(Op::And, boolean,
                            {emit(strict, boolean, {ar, br}),
                             emit(Op::Not, boolean,
                                  {emit(Op::Or, boolean,
                                        {intrinsic(ir::Intrinsic::IsNan, boolean, {ai}),
                                         intrinsic(ir::Intrinsic::IsNan, boolean, {bi})})})});
  ir::Value *tied =
      emit(Op::And, boolean, {emit(Op::Eq, boolean, {ar, br}), emit(op, boolean, {ai, bi})});
  return emit(Op::Or, boolean, {ordered, tied});
}

ir::Value *FunctionEmitter::emitUfuncExtremum(bool isMax, bool preferNumbers, ir::Value *a,
                                              ir::Value *b) {
  const Type *type = a->type();
  const Type *boolean = types.boolean();
  if (llvm::isa<BooleanType>(type))
    return emit(isMax ? Op::Or : Op::And, boolean, {a, b});
  ir::Value *keepsFirst = emitUfuncCompare(isMax ? Op::Ge : Op::Le, a, b);
  ir::Value *ordered = emit(Op::Select, type, {keepsFirst, a, b});
  if (llvm::isa<IntegerType>(type))
    return ordered;
  // maximum and minimum return a NaN operand (the first, if both are);
  // fmax and fmin return the other operand.
  ir::Value *firstNan = isNanOf(a), *secondNan = isNanOf(b);
  ir::Value *anyNan = emit(Op::Or, boolean, {firstNan, secondNan});
  ir::Value *withNan = preferNumbers ? emit(Op::Select, type, {secondNan, a, b})
                                     : emit(Op::Select, type, {firstNan, a, b});
  return emit(Op::Select, type, {anyNan, withNan, ordered});
}

ir::Value *FunctionEmitter::emitFloatDivide(ir::Value *a, ir::Value *b) {
  const Type *type = a->type();
  if (!function.options.debug)
    return emit(Op::TrueDiv, type, {a, b});
  // With debug=True, `/` raises ZeroDivisionError; NumPy's division gives
  // a signed infinity (NaN for 0/0) instead.
  const Type *boolean = types.boolean();
  ir::Value *zero = constant(type, ConstantValue::floating(0));
  ir::Value *one = constant(type, ConstantValue::floating(1));
  ir::Value *byZero = emit(Op::Eq, boolean, {b, zero});
  ir::Value *quotient = emit(Op::TrueDiv, type, {a, emit(Op::Select, type, {byZero, one, b})});
  ir::Value *infinity = intrinsic(ir::Intrinsic::Copysign, type,
                                  {constant(type, ConstantValue::floating(INFINITY)), b});
  return emit(Op::Select, type, {byZero, emit(Op::Mul, type, {a, infinity}), quotient});
}

ir::Value *FunctionEmitter::emitComplexDivide(ir::Value *a, ir::Value *b) {
  // NumPy's complex division (Smith's method), which gives infinities and
  // NaNs for a zero divisor rather than raising.
  const auto *complex = llvm::cast<ComplexType>(a->type());
  const Type *part = complex->elementType();
  const Type *boolean = types.boolean();
  auto arithmetic = [&](Op op, ir::Value *x, ir::Value *y) {
    return op == Op::TrueDiv ? emitFloatDivide(x, y) : emit(op, part, {x, y});
  };
  ir::Value *ar = emit(Op::ComplexReal, part, {a}), *ai = emit(Op::ComplexImag, part, {a});
  ir::Value *br = emit(Op::ComplexReal, part, {b}), *bi = emit(Op::ComplexImag, part, {b});
  ir::Value *absBr = intrinsic(ir::Intrinsic::Fabs, part, {br});
  ir::Value *absBi = intrinsic(ir::Intrinsic::Fabs, part, {bi});
  ir::Value *zero = constant(part, ConstantValue::floating(0));
  ir::Value *one = constant(part, ConstantValue::floating(1));

  ir::Value *realWider = emit(Op::Ge, boolean, {absBr, absBi});
  ir::Value *divisorZero =
      emit(Op::And, boolean,
           {emit(Op::Eq, boolean, {absBr, zero}), emit(Op::Eq, boolean, {absBi, zero})});
  // |br| >= |bi|
  ir::Value *ratio1 = arithmetic(Op::TrueDiv, bi, br);
  ir::Value *scale1 =
      arithmetic(Op::TrueDiv, one, arithmetic(Op::Add, br, arithmetic(Op::Mul, bi, ratio1)));
  ir::Value *real1 =
      arithmetic(Op::Mul, arithmetic(Op::Add, ar, arithmetic(Op::Mul, ai, ratio1)), scale1);
  ir::Value *imag1 =
      arithmetic(Op::Mul, arithmetic(Op::Sub, ai, arithmetic(Op::Mul, ar, ratio1)), scale1);
  // |br| < |bi|
  ir::Value *ratio2 = arithmetic(Op::TrueDiv, br, bi);
  ir::Value *scale2 =
      arithmetic(Op::TrueDiv, one, arithmetic(Op::Add, bi, arithmetic(Op::Mul, br, ratio2)));
  ir::Value *real2 =
      arithmetic(Op::Mul, arithmetic(Op::Add, arithmetic(Op::Mul, ar, ratio2), ai), scale2);
  ir::Value *imag2 =
      arithmetic(Op::Mul, arithmetic(Op::Sub, arithmetic(Op::Mul, ai, ratio2), ar), scale2);
  // A zero divisor: each part divided by zero.
  ir::Value *realZero = arithmetic(Op::TrueDiv, ar, absBr);
  ir::Value *imagZero = arithmetic(Op::TrueDiv, ai, absBi);

  auto pick = [&](ir::Value *first, ir::Value *zeroCase, ir::Value *second) {
    return emit(Op::Select, part,
                {realWider, emit(Op::Select, part, {divisorZero, zeroCase, first}), second});
  };
  return emit(Op::ComplexMake, complex,
              {pick(real1, realZero, real2), pick(imag1, imagZero, imag2)});
}

ir::Value *FunctionEmitter::emitUfuncElement(BuiltinId ufunc, llvm::ArrayRef<ir::Value *> x,
                                             const Type *result) {
  const Type *boolean = types.boolean();
  auto math = [&](BuiltinId real, BuiltinId complex) {
    return emitMath(isComplex(x[0]) ? complex : real, result, x);
  };
  switch (ufunc) {
  case B::Numpy_sin:
    return math(B::Math_sin, B::Cmath_sin);
  case B::Numpy_cos:
    return math(B::Math_cos, B::Cmath_cos);
  case B::Numpy_tan:
    return math(B::Math_tan, B::Cmath_tan);
  case B::Numpy_arcsin:
    return math(B::Math_asin, B::Cmath_asin);
  case B::Numpy_arccos:
    return math(B::Math_acos, B::Cmath_acos);
  case B::Numpy_arctan:
    return math(B::Math_atan, B::Cmath_atan);
  case B::Numpy_sinh:
    return math(B::Math_sinh, B::Cmath_sinh);
  case B::Numpy_cosh:
    return math(B::Math_cosh, B::Cmath_cosh);
  case B::Numpy_tanh:
    return math(B::Math_tanh, B::Cmath_tanh);
  case B::Numpy_arcsinh:
    return math(B::Math_asinh, B::Cmath_asinh);
  case B::Numpy_arccosh:
    return math(B::Math_acosh, B::Cmath_acosh);
  case B::Numpy_arctanh:
    return math(B::Math_atanh, B::Cmath_atanh);
  case B::Numpy_log:
    return math(B::Math_log, B::Cmath_log);
  case B::Numpy_log10:
    return math(B::Math_log10, B::Cmath_log10);
  case B::Numpy_log2: {
    if (!isComplex(x[0]))
      return emitMath(B::Math_log2, result, x);
    // log(z) / log(2), part by part.
    ir::Value *log = emitMath(B::Cmath_log, result, x);
    const Type *part = llvm::cast<ComplexType>(result)->elementType();
    ir::Value *factor = constant(part, ConstantValue::floating(1.0 / std::log(2.0)));
    return emit(Op::ComplexMake, result,
                {emit(Op::Mul, part, {emit(Op::ComplexReal, part, {log}), factor}),
                 emit(Op::Mul, part, {emit(Op::ComplexImag, part, {log}), factor})});
  }
  case B::Numpy_arctan2:
    return emitMath(B::Math_atan2, result, x);
  case B::Numpy_hypot:
    return emitMath(B::Math_hypot, result, x);
  case B::Numpy_deg2rad:
  case B::Numpy_radians:
    return emitMath(B::Math_radians, result, x);
  case B::Numpy_rad2deg:
  case B::Numpy_degrees:
    return emitMath(B::Math_degrees, result, x);
  case B::Numpy_greater:
    return emitUfuncCompare(Op::Gt, x[0], x[1]);
  case B::Numpy_greater_equal:
    return emitUfuncCompare(Op::Ge, x[0], x[1]);
  case B::Numpy_less:
    return emitUfuncCompare(Op::Lt, x[0], x[1]);
  case B::Numpy_less_equal:
    return emitUfuncCompare(Op::Le, x[0], x[1]);
  case B::Numpy_equal:
    return emitUfuncCompare(Op::Eq, x[0], x[1]);
  case B::Numpy_not_equal:
    return emitUfuncCompare(Op::Ne, x[0], x[1]);
  case B::Numpy_logical_and:
    return emit(Op::And, boolean, {convert(x[0], boolean), convert(x[1], boolean)});
  case B::Numpy_logical_or:
    return emit(Op::Or, boolean, {convert(x[0], boolean), convert(x[1], boolean)});
  case B::Numpy_logical_xor:
    return emit(Op::Xor, boolean, {convert(x[0], boolean), convert(x[1], boolean)});
  case B::Numpy_logical_not:
    return emit(Op::Not, boolean, {convert(x[0], boolean)});
  case B::Numpy_maximum:
    return emitUfuncExtremum(true, false, x[0], x[1]);
  case B::Numpy_minimum:
    return emitUfuncExtremum(false, false, x[0], x[1]);
  case B::Numpy_fmax:
    return emitUfuncExtremum(true, true, x[0], x[1]);
  case B::Numpy_fmin:
    return emitUfuncExtremum(false, true, x[0], x[1]);
  case B::Numpy_bitwise_and:
    return emit(Op::And, result, {x[0], x[1]});
  case B::Numpy_bitwise_or:
    return emit(Op::Or, result, {x[0], x[1]});
  case B::Numpy_bitwise_xor:
    return emit(Op::Xor, result, {x[0], x[1]});
  case B::Numpy_invert:
  case B::Numpy_bitwise_not:
    return emit(llvm::isa<BooleanType>(result) ? Op::Not : Op::Invert, result, {x[0]});
  case B::Numpy_left_shift:
    return emit(Op::Shl, result, {x[0], x[1]});
  case B::Numpy_right_shift:
    return emit(Op::Shr, result, {x[0], x[1]});
  case B::Numpy_isnan:
    return isNanOf(x[0]);
  case B::Numpy_conjugate:
  case B::Numpy_conj: {
    if (!isComplex(x[0]))
      return x[0];
    const Type *part = llvm::cast<ComplexType>(result)->elementType();
    return emit(Op::ComplexMake, result,
                {emit(Op::ComplexReal, part, {x[0]}),
                 emit(Op::Neg, part, {emit(Op::ComplexImag, part, {x[0]})})});
  }
  case B::Numpy_divide:
  case B::Numpy_true_divide:
    return isComplex(x[0]) ? emitComplexDivide(x[0], x[1]) : emitFloatDivide(x[0], x[1]);
  default:
    return nullptr;
  }
}

} // namespace kiln::emit
