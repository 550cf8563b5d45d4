//===- frontend/emit/emit_calls.cpp - Calls and builtins ------------------===//

#include "frontend/emit/function_emitter.h"

#include <cmath>
#include <limits>

namespace kiln::emit {

using ssa::Op;

ir::Value *FunctionEmitter::emitNamedTuple(const ssa::Instr *call, const NamedTupleType *tuple,
                                           llvm::ArrayRef<ir::Value *> args) {
  // Positional arguments in order, then keywords by their fields.
  std::vector<ir::Value *> elements(tuple->size(), nullptr);
  size_t positional = args.size() - call->keywordNames.size();
  for (size_t i = 0; i < args.size(); ++i)
    elements[i < positional ? i : *tuple->fieldIndex(call->keywordNames[i - positional])] = args[i];
  for (size_t i = 0; i < elements.size(); ++i)
    elements[i] = convert(elements[i], tuple->elementTypes()[i]);
  return emit(ir::Opcode::TupleMake, tuple, elements);
}

ir::Value *FunctionEmitter::emitCall(const ssa::Instr *instr, const Resolution &resolution) {
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  std::vector<ir::Value *> args = callArguments(instr, resolution);
  switch (resolution.kind) {
  case Resolution::Kind::Cast:
    if (resolution.detail == "namedtuple")
      return emitNamedTuple(instr, llvm::cast<NamedTupleType>(result), args);
    return convert(args[0], result);
  case Resolution::Kind::DeviceCall: {
    ir::Function *callee = module.functionFor(resolution.callee);
    const std::vector<const Type *> &parameterTypes = resolution.callee->argTypes;
    // Keyword arguments were matched to parameters during typing.
    const FunctionDecl &decl = resolution.callee->decl;
    std::vector<ir::Value *> bySource(parameterTypes.size(), nullptr);
    // A function defined inside another takes its captures after its own
    // parameters.
    size_t declared = parameterTypes.size() - decl.captures.size();
    size_t positional = args.size() - instr->keywordNames.size();
    size_t fixed = decl.variadic ? declared - 1 : positional;
    for (size_t i = 0; i < std::min(positional, fixed); ++i)
      bySource[i] = args[i];
    if (decl.variadic) {
      // `*args`: the arguments after the others, as a tuple.
      const Type *packed = types.unliteral(parameterTypes[declared - 1]);
      if (passesAtRunTime(packed))
        bySource[declared - 1] = emit(ir::Opcode::TupleMake, packed,
                                      llvm::ArrayRef(args).slice(fixed, positional - fixed));
    }
    for (size_t k = 0; k < decl.captures.size(); ++k)
      bySource[declared + k] = capturedValue(instr->operands[0], k, parameterTypes[declared + k]);
    if (const ast::FunctionDefStmt *def = resolution.callee->decl.def)
      for (size_t k = 0; k < instr->keywordNames.size(); ++k)
        for (size_t p = 0; p < def->params.size(); ++p)
          if (def->params[p].name == instr->keywordNames[k])
            bySource[p] = args[positional + k];
    // Arguments the call left out pass their parameter's default value;
    // None, which has no run-time value, passes as a constant none.
    // Compile-time values pass no value at all.
    std::vector<ir::Value *> ordered;
    for (size_t i = 0; i < bySource.size(); ++i) {
      const Type *parameterType = types.unliteral(parameterTypes[i]);
      if (!passesAtRunTime(parameterType))
        continue;
      parameterType = callee->arguments[ordered.size()]->type();
      ir::Value *value = bySource[i];
      if (!value && llvm::isa<NoneType>(parameterType))
        value = constant(parameterType, ConstantValue::none());
      else if (!value && i < decl.defaults.size() && decl.defaults[i])
        value = constant(parameterType, *decl.defaults[i]);
      ordered.push_back(convert(value, parameterType));
    }
    ir::Instruction *call =
        emit(ir::Opcode::Call,
             llvm::isa<NoneType>(callee->returnType) ? nullptr : callee->returnType, ordered);
    call->callee = callee;
    return call;
  }
  case Resolution::Kind::RangeValue: {
    const auto *range = llvm::cast<RangeType>(result);
    const Type *element = range->elementType();
    ir::Value *start = args.size() >= 2 ? args[0] : intConstant(element, 0);
    ir::Value *stop = args.size() >= 2 ? args[1] : args[0];
    ir::Value *step = args.size() == 3 ? args[2] : intConstant(element, 1);
    return emit(ir::Opcode::RangeMake, result, {start, stop, step});
  }
  default:
    return emitBuiltin(instr, resolution, args);
  }
}

ir::Value *FunctionEmitter::capturedValue(const ssa::Instr *closure, size_t k, const Type *type) {
  // Where the function is defined: the variable's current value; passed
  // on: the constant its type says (typing allowed nothing else).
  if (closure->op == Op::Closure)
    return valueOf(closure->operands[k]);
  return literalValue(type);
}

ir::Value *FunctionEmitter::literalValue(const Type *type) {
  if (const auto *integer = llvm::dyn_cast<IntegerLiteralType>(type))
    return constant(plain(type), ConstantValue::integer(integer->bits()));
  if (const auto *boolean = llvm::dyn_cast<BooleanLiteralType>(type))
    return constant(types.boolean(), ConstantValue::boolean(boolean->boolValue()));
  return nullptr;
}

ir::Value *FunctionEmitter::emitPrint(const ssa::Instr *instr) {
  // The values first (a tuple's items, thread indices), then the print.
  PrintLine line;
  for (size_t i = 1; i < instr->operands.size(); ++i) {
    const ssa::Instr *argument = instr->operands[i];
    addPrintItems(line, typeOf(argument), valueOf(argument), /*joined=*/false);
  }
  ir::Instruction *print = emit(ir::Opcode::Print, nullptr, line.values);
  print->printItems = std::move(line.items);
  return nullptr;
}

void FunctionEmitter::addPrintItems(PrintLine &line, const Type *type, ir::Value *value,
                                    bool joined) {
  auto text = [&](std::string shown, bool glued) {
    line.items.push_back({ir::PrintItem::Kind::Text, std::move(shown), glued});
  };
  if (const auto *literal = llvm::dyn_cast<StringLiteralType>(type)) {
    text(literal->stringValue(), joined);
    return;
  }
  if (type == types.none()) {
    text("None", joined);
    return;
  }
  // A tuple prints as Python writes it, "(1, 2.5)" and "(1,)": numba-cuda's
  // format; cuda.threadIdx and friends as the tuple (x, y, z).
  const Symbol *dim3 = typing::builtinOf(type);
  const auto *tuple = llvm::dyn_cast<TupleType>(type);
  if (tuple || dim3) {
    size_t count = tuple ? tuple->size() : 3;
    text("(", joined);
    for (size_t i = 0; i < count; ++i) {
      if (i)
        text(", ", true);
      if (dim3) {
        addPrintItems(
            line, types.int32(),
            intrinsic(dim3Intrinsic(dim3->id), types.int32(), {}, static_cast<unsigned>(i)), true);
        continue;
      }
      const Type *element = tuple->elementTypes()[i];
      ir::Value *item = nullptr;
      if (value && !element->isCompileTimeOnly()) {
        ir::Instruction *get = emit(ir::Opcode::TupleGet, plain(element), {value});
        get->index = static_cast<unsigned>(i);
        item = get;
      }
      addPrintItems(line, element, item, true);
    }
    text(count == 1 ? ",)" : ")", true);
    return;
  }
  // A literal inside a tuple with no run-time value ("a", 1).
  if (!value)
    value = literalValue(type);
  if (!value)
    return;
  line.items.push_back({ir::PrintItem::Kind::Value, "", joined});
  line.values.push_back(convert(value, plain(type)));
}

ir::Value *FunctionEmitter::emitBuiltin(const ssa::Instr *instr, const Resolution &resolution,
                                        llvm::ArrayRef<ir::Value *> args) {
  const Type *result = resolution.result ? plain(resolution.result) : nullptr;
  BuiltinId id = resolution.builtin;
  const Symbol &symbol = BuiltinSymbols::get().symbol(id);
  if (symbol.qualifiedName.starts_with("math.") || symbol.qualifiedName.starts_with("cmath."))
    return emitMath(id, result, args);
  if (symbol.detail == "libdevice") {
    ir::Instruction *call = emit(ir::Opcode::LibdeviceCall, result, args);
    call->text = symbol.name().str();
    return call;
  }
  if (typing::isBFloat16Binding(symbol))
    return emitHalfBinding(symbol.detail, result, args);
  if (symbol.qualifiedName.starts_with("numba.cuda."))
    return emitCuda(instr, id, resolution, args);
  switch (id) {
  case BuiltinId::NumpyIsnat: {
    ir::Value *count = convert(args[0], types.int64());
    return emit(ir::Opcode::Eq, types.boolean(),
                {count, intConstant(types.int64(), std::numeric_limits<int64_t>::min())});
  }
  case BuiltinId::PyAbs: {
    ir::Value *x = args[0];
    if (llvm::isa<DateTimeType>(x->type())) {
      // NaT, the most negative count, stays NaT.
      ir::Value *count = convert(x, types.int64());
      ir::Value *negative =
          emit(ir::Opcode::Lt, types.boolean(), {count, intConstant(types.int64(), 0)});
      return emit(ir::Opcode::Select, result, {negative, emit(ir::Opcode::Neg, result, {x}), x});
    }
    if (const auto *complex = llvm::dyn_cast<ComplexType>(x->type())) {
      const Type *part = complex->elementType();
      return intrinsic(
          ir::Intrinsic::Hypot, part,
          {emit(ir::Opcode::ComplexReal, part, {x}), emit(ir::Opcode::ComplexImag, part, {x})});
    }
    if (llvm::isa<FloatType>(x->type()))
      return intrinsic(ir::Intrinsic::Fabs, result, {x});
    if (!llvm::cast<IntegerType>(x->type())->signedness())
      return x;
    ir::Value *negative = emit(ir::Opcode::Lt, types.boolean(), {x, intConstant(x->type(), 0)});
    return emit(ir::Opcode::Select, result, {negative, emit(ir::Opcode::Neg, result, {x}), x});
  }
  case BuiltinId::PyMin:
  case BuiltinId::PyMax:
    if (resolution.detail == "ieee_number")
      return intrinsic(id == BuiltinId::PyMin ? ir::Intrinsic::Fmin : ir::Intrinsic::Fmax, result,
                       args);
    return emitMinMax(id == BuiltinId::PyMin, result, args);
  case BuiltinId::CffiFromBuffer:
    return emit(ir::Opcode::Cast, result, {args[0]});
  case BuiltinId::PyLen: {
    if (llvm::isa<RangeType>(args[0]->type()))
      return convert(emit(ir::Opcode::RangeLength,
                          llvm::cast<RangeType>(args[0]->type())->elementType(), {args[0]}),
                     types.int64());
    ir::Instruction *length = emit(ir::Opcode::ArrayShape, types.int64(), {args[0]});
    length->index = 0;
    return length;
  }
  case BuiltinId::PyRound:
    if (args.size() == 1)
      return convert(intrinsic(ir::Intrinsic::Rint, args[0]->type(), {args[0]}), result);
    return intrinsic(ir::Intrinsic::RoundDigits, result, {args[0], args[1]});
  case BuiltinId::PyPow:
    return emit(ir::Opcode::Pow, result, {args[0], args[1]});
  case BuiltinId::PyDivmod:
    return emit(ir::Opcode::TupleMake, result,
                {emit(ir::Opcode::FloorDiv, args[0]->type(), {args[0], args[1]}),
                 emit(ir::Opcode::Mod, args[0]->type(), {args[0], args[1]})});
  case BuiltinId::PyPrint:
    return emitPrint(instr);
  case BuiltinId::PyComplex: {
    if (instr->op == Op::Call && resolution.detail.empty()) {
      if (args.size() == 1 && llvm::isa<ComplexType>(args[0]->type()))
        return convert(args[0], result);
      const Type *part = llvm::cast<ComplexType>(result)->elementType();
      ir::Value *imaginary =
          args.size() == 2 ? args[1] : constant(part, ConstantValue::floating(0));
      return emit(ir::Opcode::ComplexMake, result,
                  {convert(args[0], part), convert(imaginary, part)});
    }
    // .real, .imag, .conjugate() of a number.
    ir::Value *x = instr->op == Op::Call ? methodReceiver(instr) : valueOf(instr->operands[0]);
    x = convert(x, resolution.operandTypes.empty() || !resolution.operandTypes[0]
                       ? x->type()
                       : resolution.operandTypes[0]);
    const auto *complex = llvm::dyn_cast<ComplexType>(x->type());
    if (resolution.detail == "real")
      return complex ? emit(ir::Opcode::ComplexReal, result, {x}) : x;
    if (resolution.detail == "imag")
      return complex ? emit(ir::Opcode::ComplexImag, result, {x})
                     : constant(result, ConstantValue::integer(0));
    if (!complex)
      return x;
    const Type *part = complex->elementType();
    return emit(ir::Opcode::ComplexMake, x->type(),
                {emit(ir::Opcode::ComplexReal, part, {x}),
                 emit(ir::Opcode::Neg, part, {emit(ir::Opcode::ComplexImag, part, {x})})});
  }
  default:
    return nullptr;
  }
}

ir::Value *FunctionEmitter::emitMath(BuiltinId id, const Type *result,
                                     llvm::ArrayRef<ir::Value *> arguments) {
  using I = ir::Intrinsic;
  // pow(float32, int32) and pow(float64, int32) are libdevice's powif and
  // powi, as Numba's CUDA target calls them: powers by squaring, which
  // round differently from pow and overflow where a square does.
  if (id == BuiltinId::Math_pow && arguments[1]->type() == types.int32() &&
      llvm::isa_and_nonnull<FloatType>(result)) {
    ir::Instruction *call =
        emit(ir::Opcode::LibdeviceCall, result, {convert(arguments[0], result), arguments[1]});
    call->text = llvm::cast<FloatType>(result)->bitwidth() == 32 ? "powif" : "powi";
    return call;
  }
  // Numba's cases such as float64(int64) compute on the float: integer
  // arguments convert, except ldexp's exponent.
  std::vector<ir::Value *> args(arguments.begin(), arguments.end());
  if (llvm::isa_and_nonnull<FloatType>(result) && id != BuiltinId::Math_ldexp)
    for (ir::Value *&arg : args)
      if (llvm::isa<IntegerType>(arg->type()))
        arg = convert(arg, result);
  static const std::map<BuiltinId, I> direct = {
      {BuiltinId::Math_sin, I::Sin},
      {BuiltinId::Math_cos, I::Cos},
      {BuiltinId::Math_tan, I::Tan},
      {BuiltinId::Math_asin, I::Asin},
      {BuiltinId::Math_acos, I::Acos},
      {BuiltinId::Math_atan, I::Atan},
      {BuiltinId::Math_atan2, I::Atan2},
      {BuiltinId::Math_sinh, I::Sinh},
      {BuiltinId::Math_cosh, I::Cosh},
      {BuiltinId::Math_tanh, I::Tanh},
      {BuiltinId::Math_asinh, I::Asinh},
      {BuiltinId::Math_acosh, I::Acosh},
      {BuiltinId::Math_atanh, I::Atanh},
      {BuiltinId::Math_exp, I::Exp},
      {BuiltinId::Math_exp2, I::Exp2},
      {BuiltinId::Math_expm1, I::Expm1},
      {BuiltinId::Math_log, I::Log},
      {BuiltinId::Math_log2, I::Log2},
      {BuiltinId::Math_log10, I::Log10},
      {BuiltinId::Math_log1p, I::Log1p},
      {BuiltinId::Math_sqrt, I::Sqrt},
      {BuiltinId::Math_fabs, I::Fabs},
      {BuiltinId::Math_floor, I::Floor},
      {BuiltinId::Math_ceil, I::Ceil},
      {BuiltinId::Math_trunc, I::Trunc},
      {BuiltinId::Math_erf, I::Erf},
      {BuiltinId::Math_erfc, I::Erfc},
      {BuiltinId::Math_gamma, I::Tgamma},
      {BuiltinId::Math_lgamma, I::Lgamma},
      {BuiltinId::Math_hypot, I::Hypot},
      {BuiltinId::Math_copysign, I::Copysign},
      {BuiltinId::Math_fmod, I::Fmod},
      {BuiltinId::Math_remainder, I::Remainder},
      {BuiltinId::Math_nextafter, I::Nextafter},
      {BuiltinId::Math_pow, I::PowF},
      {BuiltinId::Math_ldexp, I::Ldexp},
      {BuiltinId::Math_frexp, I::Frexp},
      {BuiltinId::Math_modf, I::Modf},
  };
  auto found = direct.find(id);
  if (found != direct.end()) {
    return intrinsic(found->second, result, args);
  }
  switch (id) {
  case BuiltinId::Math_degrees:
  case BuiltinId::Math_radians: {
    double factor = id == BuiltinId::Math_degrees ? 180.0 / M_PI : M_PI / 180.0;
    return emit(ir::Opcode::Mul, result,
                {args[0], constant(result, ConstantValue::floating(factor))});
  }
  case BuiltinId::Math_isnan:
  case BuiltinId::Math_isinf:
  case BuiltinId::Math_isfinite:
    if (llvm::isa<IntegerType>(args[0]->type()))
      return constant(types.boolean(), ConstantValue::boolean(id == BuiltinId::Math_isfinite));
    return intrinsic(id == BuiltinId::Math_isnan   ? I::IsNan
                     : id == BuiltinId::Math_isinf ? I::IsInf
                                                   : I::IsFinite,
                     types.boolean(), args);
  default:
    break;
  }
  // cmath: Kiln's prelude implements each function in Python.
  const Symbol &symbol = BuiltinSymbols::get().symbol(id);
  // cmath.log(z, base) is log_base: a default base would need the call to
  // be typed with an omitted argument.
  llvm::StringRef name =
      id == BuiltinId::Cmath_log && args.size() == 2 ? llvm::StringRef("log_base") : symbol.name();
  return convert(callPrelude("kiln.cmath", name, args), result);
}

ir::Value *FunctionEmitter::callPrelude(llvm::StringRef preludeModule, llvm::StringRef name,
                                        llvm::ArrayRef<ir::Value *> args) {
  std::vector<const Type *> argTypes;
  for (ir::Value *arg : args)
    argTypes.push_back(arg->type());
  ir::Function *implementation = module.preludeFunction(preludeModule, name, argTypes);
  if (!implementation)
    return nullptr;
  ir::Instruction *call = emit(ir::Opcode::Call, implementation->returnType, args);
  call->callee = implementation;
  return call;
}

} // namespace kiln::emit
