//===- frontend/typing/calls.cpp - Typing of builtin calls ----------------===//
//
// Python's builtins as Numba types them (typing/builtins.py): abs, min, max,
// len, range, int, float, bool, complex, round, pow, divmod, print; casts
// through dtypes (float32(x), np.int8(x)); and methods of numbers.
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/overloads.h"
#include "frontend/typing/typing_rules.h"
#include "ir/libdevice.h"

#include <llvm/ADT/StringExtras.h>

#include <cmath>
#include <cstdlib>

namespace kiln::typing {

Typing noOverload(const Symbol &function, llvm::ArrayRef<const Type *> args) {
  return Typing::error(DiagID::err_no_call_overload, {function.displayName(), argumentList(args)});
}

Typing fromCases(TypeContext &types, const Symbol &function, llvm::ArrayRef<OverloadCase> cases,
                 llvm::ArrayRef<const Type *> args, bool allowUnsafe) {
  if (const OverloadCase *chosen = resolveOverload(types, cases, args, allowUnsafe)) {
    Resolution resolution = Resolution::make(Resolution::Kind::Builtin, chosen->result);
    resolution.builtin = function.id;
    resolution.operandTypes = chosen->args;
    return resolution;
  }
  return noOverload(function, args);
}

/// Whether a value of `valueType` is an instance of the class `classType`
/// stands for, as Numba's ol_isinstance decides it: a number class is its
/// type exactly, Python's int, float, complex and bool are int64, float64,
/// complex128 and bool, `tuple` and `range` any tuple or range; nothing for
/// a class Kiln cannot judge.
std::optional<bool> isInstanceOfClass(TypeContext &types, const Type *valueType,
                                      const Type *classType) {
  if (const auto *numberClass = llvm::dyn_cast<NumberClassType>(classType))
    return valueType == numberClass->instanceType();
  const Symbol *symbol = builtinOf(classType);
  if (!symbol)
    return std::nullopt;
  switch (symbol->id) {
  case BuiltinId::PyInt:
    return valueType == types.int64();
  case BuiltinId::PyFloat:
    return valueType == types.float64();
  case BuiltinId::PyComplex:
    return valueType == types.complex(128);
  case BuiltinId::PyBool:
    return valueType == types.boolean();
  case BuiltinId::PyTuple:
    return llvm::isa<TupleType>(valueType);
  case BuiltinId::PyRange:
    return llvm::isa<RangeType>(valueType);
  default:
    return std::nullopt;
  }
}

bool isClass(TypeContext &types, const Type *type) {
  return isInstanceOfClass(types, types.none(), type).has_value();
}

namespace {

/// Python's float(text) of a constant string: a decimal number, "inf",
/// "infinity" or "nan" in any case, signed or not, with surrounding
/// whitespace and underscores between digits.
std::optional<double> floatFromString(llvm::StringRef text) {
  text = text.trim();
  llvm::StringRef unsignedText = text;
  bool negative = unsignedText.consume_front("-");
  if (!negative)
    unsignedText.consume_front("+");
  std::string lower = unsignedText.lower();
  if (lower == "inf" || lower == "infinity")
    return negative ? -HUGE_VAL : HUGE_VAL;
  if (lower == "nan")
    return negative ? -NAN : NAN;
  std::string digits;
  bool sawDigit = false;
  bool sawExponent = false;
  for (size_t i = 0; i < unsignedText.size(); ++i) {
    char c = unsignedText[i];
    bool betweenDigits = i > 0 && i + 1 < unsignedText.size() &&
                         llvm::isDigit(unsignedText[i - 1]) && llvm::isDigit(unsignedText[i + 1]);
    if (c == '_' && betweenDigits)
      continue;
    if (llvm::isDigit(c)) {
      sawDigit = true;
    } else if ((c == 'e' || c == 'E') && sawDigit && !sawExponent) {
      sawExponent = true;
    } else if (!((c == '+' || c == '-') && i > 0 && (unsignedText[i - 1] | 0x20) == 'e') &&
               c != '.') {
      return std::nullopt;
    }
    digits += c;
  }
  if (!sawDigit)
    return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size())
    return std::nullopt;
  return negative ? -value : value;
}

Typing builtinResult(const Symbol &function, const Type *result,
                     std::vector<const Type *> operandTypes) {
  Resolution resolution = Resolution::make(Resolution::Kind::Builtin, result);
  resolution.builtin = function.id;
  resolution.operandTypes = std::move(operandTypes);
  return resolution;
}

bool isRealNumber(const Type *type) {
  return type->isNumber() && !llvm::isa<ComplexType>(type);
}

Typing minMax(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  std::vector<const Type *> candidates(args.begin(), args.end());
  if (args.size() == 1) {
    const auto *tuple = llvm::dyn_cast<TupleType>(args[0]);
    if (!tuple || tuple->size() == 0)
      return noOverload(function, args);
    candidates.assign(tuple->elementTypes().begin(), tuple->elementTypes().end());
  }
  if (candidates.size() < 2 && args.size() != 1)
    return noOverload(function, args);
  // Two bools (not more) compare as bools.
  bool twoBools = args.size() == 2 && llvm::all_of(candidates, [](const Type *t) {
                    return llvm::isa<BooleanType>(t) || llvm::isa<BooleanLiteralType>(t);
                  });
  if (twoBools)
    return builtinResult(function, types.boolean(),
                         std::vector<const Type *>(args.size(), nullptr));
  if (!llvm::all_of(candidates, isRealNumber))
    return noOverload(function, args);
  const Type *result = candidates[0];
  for (const Type *candidate : llvm::ArrayRef(candidates).drop_front())
    if (result)
      result = types.unify(result, candidate);
  if (!result)
    return noOverload(function, args);
  result = types.unliteral(result);
  Typing typed = builtinResult(function, result,
                               args.size() == 1 ? std::vector<const Type *>{nullptr}
                                                : std::vector<const Type *>(args.size(), result));
  // numba-cuda lowers min and max of two float32 or float64 values to
  // libdevice's fmin and fmax (cudaimpl.py): a NaN operand gives the other.
  auto isSingleOrDouble = [&](const Type *t) {
    return types.unliteral(t) == types.float32() || types.unliteral(t) == types.float64();
  };
  if (args.size() == 2 && llvm::all_of(args, isSingleOrDouble))
    typed->detail = "ieee_number";
  return typed;
}

/// What numba-cuda's print_item can show: integers, floats, bools, constant
/// strings, tuples of these and cuda.threadIdx and friends. It has no
/// implementation for complex numbers, None or arrays ("printing
/// unimplemented for values of type none").
bool isPrintable(const Type *type) {
  if (const auto *tuple = llvm::dyn_cast<TupleType>(type)) {
    // A tuple holding a string has no run-time value: its numbers must be
    // known too.
    auto known = [](const Type *t) {
      return t->isLiteral() || llvm::isa<NoneType>(t) ||
             (llvm::isa<TupleType>(t) && t->isCompileTimeOnly());
    };
    return llvm::all_of(tuple->elementTypes(), isPrintable) &&
           (!tuple->isCompileTimeOnly() || llvm::all_of(tuple->elementTypes(), known));
  }
  if (const Symbol *symbol = builtinOf(type))
    return symbol->kind == Symbol::Kind::Dim3;
  return (type->isScalar() && !llvm::isa<ComplexType>(type)) || isStrLiteral(type);
}

Typing print(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const Type *arg = args[i];
    if (!isPrintable(arg))
      return Typing::errorAt(static_cast<int>(i), DiagID::err_bad_print_argument, {arg->str()});
  }
  return builtinResult(function, types.none(), std::vector<const Type *>(args.size(), nullptr));
}

/// isinstance(value, cls) and isinstance(value, (cls, ...)): a constant.
Typing isInstance(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  if (args.size() != 2)
    return noOverload(function, args);
  const Type *valueType = types.unliteral(args[0]);
  bool judged = valueType->isScalar() || llvm::isa<TupleType>(valueType) ||
                llvm::isa<ArrayType>(valueType) || llvm::isa<RangeType>(valueType) ||
                llvm::isa<DateTimeType>(valueType) || valueType == types.none();
  if (!judged)
    return Typing::errorAt(0, DiagID::err_no_call_overload,
                           {function.displayName(), argumentList(args)});
  std::vector<const Type *> classes{args[1]};
  if (const auto *tuple = llvm::dyn_cast<TupleType>(args[1]))
    classes.assign(tuple->elementTypes().begin(), tuple->elementTypes().end());
  bool instance = false;
  for (const Type *classType : classes) {
    std::optional<bool> matches = isInstanceOfClass(types, valueType, classType);
    if (!matches)
      return Typing::errorAt(1, DiagID::err_no_call_overload,
                             {function.displayName(), argumentList(args)});
    instance = instance || *matches;
  }
  Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.boolean());
  resolution.constant = ConstantValue::boolean(instance);
  return resolution;
}

/// arr.view(dtype); arr.copy(); arr.reshape(n), arr.reshape(n, m),
/// arr.reshape((n, m)), as Numba's array_reshape: contiguous arrays only,
/// keeping their layout.
Typing callArrayMethod(TypeContext &types, const ArrayType &array, llvm::StringRef name,
                       llvm::ArrayRef<const Type *> args) {
  std::string spelling = array.str() + "." + name.str();
  if (name == "view") {
    // arr.view(dtype): the same bytes as elements of a scalar dtype.
    const auto *dtype = args.size() == 1 ? llvm::dyn_cast<NumberClassType>(args[0]) : nullptr;
    if (!dtype || !dtype->instanceType()->isScalar())
      return Typing::error(DiagID::err_no_call_overload, {spelling, argumentList(args)});
    Resolution resolution = Resolution::make(
        Resolution::Kind::ArrayMethod,
        types.array(dtype->instanceType(), array.rank(), array.arrayLayout(), array.isReadonly()));
    resolution.detail = "view";
    return resolution;
  }
  if (name == "copy") {
    // A new C-contiguous array of the same elements, writable; where it can
    // live is checked against the receiver (see compile_time_shape.h).
    if (!args.empty())
      return Typing::error(DiagID::err_no_call_overload, {spelling, argumentList(args)});
    Resolution resolution = Resolution::make(
        Resolution::Kind::ArrayMethod,
        types.array(array.elementType(), array.rank(), ArrayLayout::C, /*readonly=*/false));
    resolution.detail = "copy";
    return resolution;
  }
  std::vector<const Type *> extents(args.begin(), args.end());
  if (args.size() == 1)
    if (const auto *tuple = llvm::dyn_cast<TupleType>(args[0]))
      extents.assign(tuple->elementTypes().begin(), tuple->elementTypes().end());
  bool integers = llvm::all_of(extents, [](const Type *t) {
    return llvm::isa<IntegerType>(t) || llvm::isa<IntegerLiteralType>(t);
  });
  if (args.empty() || !integers)
    return Typing::error(DiagID::err_no_call_overload, {spelling, argumentList(args)});
  if (array.arrayLayout() == ArrayLayout::A)
    return Typing::error(DiagID::err_reshape_not_contiguous, {array.str()});
  Resolution resolution = Resolution::make(
      Resolution::Kind::ArrayMethod,
      types.arrayLike(&array, static_cast<unsigned>(extents.size()), array.arrayLayout()));
  resolution.detail = name.str();
  return resolution;
}

} // namespace

std::string argumentList(llvm::ArrayRef<const Type *> args) {
  std::string text;
  for (size_t i = 0; i < args.size(); ++i)
    text += (i ? ", " : "") + args[i]->str();
  return text;
}

/// numba-cuda's FP8 types (cuda_fp8.h): made from any integer or float,
/// converted to any integer, float or bool; never to or from each other.
static Typing callFp8Conversion(const Type *dtype, const Type *arg) {
  const Type *number = llvm::isa<Fp8Type>(dtype) ? arg : dtype;
  bool convertible = llvm::isa<IntegerType, FloatType>(number) ||
                     (number == arg && llvm::isa<IntegerLiteralType>(number)) ||
                     (number == dtype && llvm::isa<BooleanType>(number));
  if (!convertible)
    return Typing::error(DiagID::err_no_call_overload, {dtype->str(), arg->str()});
  return Resolution::make(Resolution::Kind::Cast, dtype);
}

Typing callNumberClass(TypeContext &, const Type *dtype, llvm::ArrayRef<const Type *> args) {
  if (args.size() == 1 && (llvm::isa<Fp8Type>(dtype) || llvm::isa<Fp8Type>(args[0])))
    return callFp8Conversion(dtype, args[0]);
  if (args.size() != 1 || !dtype->isScalar())
    return Typing::error(DiagID::err_no_call_overload, {dtype->str(), argumentList(args)});
  const Type *arg = args[0];
  // A datetime64 or timedelta64 is its int64 count, to 64-bit integers only.
  if (llvm::isa<DateTimeType>(arg)) {
    const auto *integer = llvm::dyn_cast<IntegerType>(dtype);
    if (!integer || integer->bitwidth() != 64)
      return Typing::error(DiagID::err_no_call_overload, {dtype->str(), argumentList(args)});
    return Resolution::make(Resolution::Kind::Cast, dtype);
  }
  if (!arg->isScalar())
    return Typing::error(DiagID::err_no_call_overload, {dtype->str(), argumentList(args)});
  if (llvm::isa<ComplexType>(arg) && !llvm::isa<ComplexType>(dtype) &&
      !llvm::isa<BooleanType>(dtype))
    return Typing::error(DiagID::err_no_call_overload, {dtype->str(), argumentList(args)});
  return Resolution::make(Resolution::Kind::Cast, dtype);
}

Typing callMethod(TypeContext &types, const EntityType &method, llvm::ArrayRef<const Type *> args) {
  const Type *receiver = method.receiverType();
  if (const auto *array = llvm::dyn_cast<ArrayType>(receiver))
    return callArrayMethod(types, *array, method.methodName(), args);
  if (!args.empty())
    return Typing::error(DiagID::err_wrong_argument_count,
                         {method.str(), countOf(0, "argument"), std::to_string(args.size())});
  Resolution resolution;
  resolution.kind = Resolution::Kind::Builtin;
  resolution.detail = method.methodName().str();
  if (method.methodName() == "conjugate") {
    resolution.builtin = BuiltinId::PyComplex;
    resolution.result = receiver;
    return resolution;
  }
  // int.bit_count() is cuda.popc.
  resolution.builtin = BuiltinId::CudaPopc;
  resolution.result = receiver;
  (void)types;
  return resolution;
}

/// operator.add(a, b) and the like: the operator itself (Symbol::detail
/// spells it), its operands after the callee.
Typing callOperator(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args) {
  static const std::pair<llvm::StringLiteral, ast::BinaryOp> binary[] = {
      {"+", ast::BinaryOp::Add},     {"-", ast::BinaryOp::Sub},       {"*", ast::BinaryOp::Mul},
      {"/", ast::BinaryOp::TrueDiv}, {"//", ast::BinaryOp::FloorDiv}, {"%", ast::BinaryOp::Mod},
      {"**", ast::BinaryOp::Pow},    {"<<", ast::BinaryOp::LShift},   {">>", ast::BinaryOp::RShift},
      {"&", ast::BinaryOp::BitAnd},  {"|", ast::BinaryOp::BitOr},     {"^", ast::BinaryOp::BitXor}};
  static const std::pair<llvm::StringLiteral, ast::CompareOp> compare[] = {
      {"<", ast::CompareOp::Lt},     {"<=", ast::CompareOp::LtE}, {"==", ast::CompareOp::Eq},
      {"!=", ast::CompareOp::NotEq}, {">", ast::CompareOp::Gt},   {">=", ast::CompareOp::GtE}};
  static const std::pair<llvm::StringLiteral, ast::UnaryOp> unary[] = {
      {"-x", ast::UnaryOp::Negate},
      {"+x", ast::UnaryOp::Plus},
      {"~x", ast::UnaryOp::Invert},
      {"not x", ast::UnaryOp::Not}};
  llvm::StringRef spelling = function.detail;
  Typing typed = Typing::cascade();
  llvm::StringRef form;
  unsigned op = 0;
  auto named = [&](const auto &entry) { return entry.first == spelling; };
  auto isBinary = llvm::find_if(binary, named);
  auto isCompare = llvm::find_if(compare, named);
  auto isUnary = llvm::find_if(unary, named);
  if (isBinary != std::end(binary) && args.size() == 2) {
    typed = binaryOperator(types, isBinary->second, args[0], args[1]);
    form = "binary";
    op = unsigned(isBinary->second);
  } else if (isCompare != std::end(compare) && args.size() == 2) {
    typed = compareOperator(types, isCompare->second, args[0], args[1]);
    form = "compare";
    op = unsigned(isCompare->second);
  } else if (isUnary != std::end(unary) && args.size() == 1) {
    typed = unaryOperator(types, isUnary->second, args[0]);
    form = "unary";
    op = unsigned(isUnary->second);
  } else {
    return noOverload(function, args);
  }
  // Tuple concatenation and comparison, and what folds to a constant, stay
  // with the operators themselves.
  if (!typed || typed->kind != Resolution::Kind::Operator || !typed->detail.empty())
    return typed ? noOverload(function, args) : typed;
  typed->operandTypes.insert(typed->operandTypes.begin(), nullptr); // the callee
  typed->detail = form.str();
  typed->index = op;
  return typed;
}

/// cuda.libdevice.<name>: libdevice's one signature, to which the arguments
/// convert as to any of Numba's concrete signatures.
Typing callLibdevice(TypeContext &types, const Symbol &function,
                     llvm::ArrayRef<const Type *> args) {
  const ir::LibdeviceFunction &callee = *ir::findLibdeviceFunction(function.name());
  std::vector<const Type *> inputs;
  for (ir::LibdeviceScalar input : callee.inputs())
    inputs.push_back(ir::libdeviceType(types, input));
  CaseList cases(types);
  cases.add(ir::libdeviceCallType(types, callee), inputs);
  return fromCases(types, function, cases, args);
}

namespace {

/// A call of one of Python's builtin functions (abs, len, range, int, ...)
/// without keywords.
Typing callPythonBuiltin(TypeContext &types, const Symbol &function,
                         llvm::ArrayRef<const Type *> args) {
  CaseList cases(types);
  switch (function.id) {
  case BuiltinId::PyAbs:
    if (args.size() == 1 && llvm::isa<DateTimeType>(args[0]) &&
        !llvm::cast<DateTimeType>(args[0])->isDatetime())
      return builtinResult(function, args[0], {});
    for (const Type *t : cases.signedDomain())
      cases.add(t, {t});
    for (const Type *t : cases.unsignedDomain())
      cases.add(t, {t});
    cases.add(types.floating(16), {types.floating(16)});
    for (const Type *t : cases.realDomain())
      cases.add(t, {t});
    cases.add(types.float32(), {types.complex(64)});
    cases.add(types.float64(), {types.complex(128)});
    return fromCases(types, function, cases, args);
  case BuiltinId::PyMin:
  case BuiltinId::PyMax:
    return minMax(types, function, args);
  case BuiltinId::NumpyIsnat:
    if (args.size() != 1 || !llvm::isa<DateTimeType>(args[0]))
      return noOverload(function, args);
    return builtinResult(function, types.boolean(), {});
  case BuiltinId::CffiFromBuffer: {
    const auto *array = args.size() == 1 ? llvm::dyn_cast<ArrayType>(args[0]) : nullptr;
    if (!array)
      return noOverload(function, args);
    if (array->arrayLayout() == ArrayLayout::A)
      return Typing::error(DiagID::err_from_buffer_not_contiguous, {array->str()});
    return builtinResult(function, types.pointer(array->elementType()), {nullptr});
  }
  case BuiltinId::PyLen: {
    if (args.size() != 1)
      return noOverload(function, args);
    if (const auto *tuple = llvm::dyn_cast<TupleType>(args[0])) {
      Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.int64());
      resolution.constant = ConstantValue::integer(static_cast<Int128>(tuple->size()));
      return resolution;
    }
    if (llvm::isa<ArrayType>(args[0]) || llvm::isa<RangeType>(args[0]))
      return builtinResult(function, types.int64(), {nullptr});
    return noOverload(function, args);
  }
  case BuiltinId::PyRange: {
    for (unsigned n = 1; n <= 3; ++n)
      cases.add(types.range(types.int32()), std::vector<const Type *>(n, types.int32()));
    for (unsigned n = 1; n <= 3; ++n)
      cases.add(types.range(types.int64()), std::vector<const Type *>(n, types.int64()));
    for (unsigned n = 1; n <= 3; ++n)
      cases.add(types.range(types.uint64()), std::vector<const Type *>(n, types.uint64()));
    Typing typed = fromCases(types, function, cases, args);
    if (typed)
      typed->kind = Resolution::Kind::RangeValue;
    return typed;
  }
  case BuiltinId::PyInt: {
    if (args.size() != 1 || !args[0]->isScalar() || llvm::isa<ComplexType>(args[0]))
      return noOverload(function, args);
    const Type *arg = args[0];
    const Type *result = llvm::isa<IntegerType>(arg) ? arg : types.int64();
    Resolution resolution = Resolution::make(Resolution::Kind::Cast, result);
    return resolution;
  }
  case BuiltinId::PyFloat: {
    if (const auto *text =
            args.size() == 1 ? llvm::dyn_cast<StringLiteralType>(args[0]) : nullptr) {
      std::optional<double> value = floatFromString(text->stringValue());
      if (!value)
        return Typing::error(DiagID::err_float_from_string, {text->stringValue()});
      Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.float64());
      resolution.constant = ConstantValue::floating(*value);
      return resolution;
    }
    if (args.size() != 1 || !isRealNumber(args[0]))
      return noOverload(function, args);
    const Type *result = llvm::isa<FloatType>(args[0]) ? args[0] : types.float64();
    return Resolution::make(Resolution::Kind::Cast, result);
  }
  case BuiltinId::PyBool:
    if (args.size() != 1)
      return noOverload(function, args);
    return truth(types, args[0]);
  case BuiltinId::PyComplex: {
    auto admissible = [](const Type *t) {
      return t->isNumber() && t != nullptr && !llvm::isa<ComplexType>(t) &&
             !(llvm::isa<FloatType>(t) && llvm::cast<FloatType>(t)->bitwidth() == 16);
    };
    if (args.empty() || args.size() > 2 || !llvm::all_of(args, admissible)) {
      if (args.size() == 1 && llvm::isa<ComplexType>(args[0]))
        return builtinResult(function, types.complex(128), {types.complex(128)});
      return noOverload(function, args);
    }
    bool single = llvm::all_of(args, [&](const Type *t) { return t == types.float32(); });
    const Type *result = types.complex(single ? 64 : 128);
    const Type *part = single ? types.float32() : types.float64();
    return builtinResult(function, result, std::vector<const Type *>(args.size(), part));
  }
  case BuiltinId::PyRound: {
    cases.add(types.int64(), {types.float32()});
    cases.add(types.int64(), {types.float64()});
    cases.add(types.float32(), {types.float32(), types.int64()});
    cases.add(types.float64(), {types.float64(), types.int64()});
    return fromCases(types, function, cases, args);
  }
  case BuiltinId::PyPow: {
    if (args.size() != 2)
      return Typing::error(DiagID::err_unsupported_builtin, {"pow() with three arguments"});
    Typing typed = binaryOperator(types, ast::BinaryOp::Pow, args[0], args[1]);
    if (typed) {
      typed->kind = Resolution::Kind::Builtin;
      typed->builtin = function.id;
    }
    return typed;
  }
  case BuiltinId::PyDivmod: {
    for (const Type *t : std::initializer_list<const Type *>{types.int64(), types.uint64(),
                                                             types.float32(), types.float64()})
      cases.add(types.tuple({t, t}), {t, t});
    return fromCases(types, function, cases, args);
  }
  case BuiltinId::PyPrint:
    return print(types, function, args);
  case BuiltinId::PyIsinstance:
    return isInstance(types, function, args);
  case BuiltinId::PyTuple: {
    // tuple() is the empty tuple; tuple(t) of a tuple is t itself.
    if (args.empty()) {
      Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.tuple({}));
      resolution.constant = ConstantValue::tuple({});
      return resolution;
    }
    if (args.size() == 1 && llvm::isa<TupleType>(args[0]))
      return Resolution::make(Resolution::Kind::Cast, args[0]);
    return noOverload(function, args);
  }
  default:
    return Typing::error(DiagID::err_unsupported_builtin, {function.displayName()});
  }
}

} // namespace

Typing callBuiltin(TypeContext &types, const Symbol &function, llvm::ArrayRef<const Type *> args,
                   llvm::ArrayRef<std::string> keywords) {
  llvm::StringRef qualified = function.qualifiedName;
  if (qualified.starts_with("operator."))
    return keywords.empty() ? callOperator(types, function, args)
                            : Typing::error(DiagID::err_unexpected_keyword_argument,
                                            {function.displayName(), keywords.front()});
  if (qualified.starts_with("math.") || qualified.starts_with("cmath."))
    return keywords.empty() ? callMath(types, function, args)
                            : Typing::error(DiagID::err_unexpected_keyword_argument,
                                            {function.displayName(), keywords.front()});
  if (function.detail == "libdevice")
    return keywords.empty() ? callLibdevice(types, function, args)
                            : Typing::error(DiagID::err_unexpected_keyword_argument,
                                            {function.displayName(), keywords.front()});
  if (qualified.starts_with("numba.cuda."))
    return callCuda(types, function, args, keywords);
  if (function.isUfunc())
    return callUfunc(types, function, args, keywords);
  if (function.kind == Symbol::Kind::HostOnly)
    return Typing::error(DiagID::err_host_api_in_kernel, {function.displayName()});
  if (function.kind == Symbol::Kind::DType) {
    const Type *dtype = types.scalarByName(function.detail);
    if (!dtype)
      return Typing::error(DiagID::err_not_callable, {function.displayName()});
    return callNumberClass(types, dtype, args);
  }
  if (function.kind == Symbol::Kind::Exception) {
    // An exception instance: its message, if constant, is kept for the
    // host to report when the kernel raises it (debug=True).
    for (const Type *arg : args)
      if (!isStrLiteral(arg) && !arg->isScalar())
        return Typing::error(DiagID::err_bad_print_argument, {arg->str()});
    Resolution resolution = Resolution::make(
        Resolution::Kind::CompileTime,
        types.entity(EntityType::EntityKind::Builtin, &function, function.displayName()));
    if (args.size() == 1 && isStrLiteral(args[0]))
      resolution.detail = llvm::cast<StringLiteralType>(args[0])->stringValue();
    return resolution;
  }
  if (function.kind != Symbol::Kind::Function)
    return Typing::error(DiagID::err_not_callable, {function.displayName()});
  if (!keywords.empty())
    return Typing::error(DiagID::err_unexpected_keyword_argument,
                         {function.displayName(), keywords.front()});
  return callPythonBuiltin(types, function, args);
}

} // namespace kiln::typing
