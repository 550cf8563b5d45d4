//===- frontend/resolve/module_evaluator.cpp - Module-level expressions ---===//
//
// Evaluates module-level expressions: literals, names, attributes, constant
// arithmetic and comparisons, NumPy scalar constructors and the Python and
// math functions constants are built with. Numba types and signatures are
// in module_evaluator_signatures.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/module_evaluator.h"

#include <llvm/ADT/StringExtras.h>

#include <cmath>

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::isa;

std::optional<ModuleValue> ModuleEvaluator::reportFoldError(FoldError error, const Expr *expr) {
  switch (error) {
  case FoldError::DivisionByZero:
    diags.report(DiagID::err_constant_division_by_zero, expr->range());
    break;
  case FoldError::Overflow:
    diags.report(DiagID::err_constant_overflow, expr->range());
    break;
  default:
    diags.report(DiagID::err_module_expression_unsupported, expr->range());
    break;
  }
  return std::nullopt;
}

namespace {

/// Constants of math, cmath and numpy (math.pi, np.inf) are plain values.
ModuleValue valueOfSymbol(const Symbol *symbol) {
  if (symbol->kind != Symbol::Kind::Constant)
    return ModuleValue::symbol(symbol);
  llvm::StringRef text = symbol->detail;
  if (text == "None")
    return ModuleValue::constant(ConstantValue::none());
  if (text == "infj" || text == "nanj")
    return ModuleValue::constant(ConstantValue::complex(0.0, text == "infj" ? INFINITY : NAN));
  double value = text == "inf"   ? INFINITY
                 : text == "nan" ? NAN
                                 : std::strtod(text.str().c_str(), nullptr);
  return ModuleValue::constant(ConstantValue::floating(value));
}

} // namespace

std::optional<ModuleValue> ModuleEvaluator::evaluate(const Expr *expr) {
  std::optional<ModuleValue> result;
  switch (expr->kind()) {
  case Expr::Kind::IntLiteral: {
    const auto *literal = cast<IntLiteralExpr>(expr);
    if (literal->tooLarge) {
      diags.report(DiagID::err_integer_literal_too_large, expr->range(),
                   {sources.textOf(expr->range())});
      return std::nullopt;
    }
    result = ModuleValue::constant(ConstantValue::integer(literal->value));
    break;
  }
  case Expr::Kind::FloatLiteral:
    result = ModuleValue::constant(ConstantValue::floating(cast<FloatLiteralExpr>(expr)->value));
    break;
  case Expr::Kind::ImaginaryLiteral:
    result =
        ModuleValue::constant(ConstantValue::complex(0.0, cast<ImaginaryLiteralExpr>(expr)->imag));
    break;
  case Expr::Kind::BoolLiteral:
    result = ModuleValue::constant(ConstantValue::boolean(cast<BoolLiteralExpr>(expr)->value));
    break;
  case Expr::Kind::NoneLiteral:
    result = inSignatureString ? ModuleValue::type(types.none())
                               : ModuleValue::constant(ConstantValue::none());
    break;
  case Expr::Kind::StringLiteral: {
    const auto *literal = cast<StringLiteralExpr>(expr);
    if (literal->isBytes || literal->isFormatted) {
      diags.report(DiagID::err_module_expression_unsupported, expr->range());
      return std::nullopt;
    }
    result = ModuleValue::constant(ConstantValue::string(literal->value.str()));
    break;
  }
  case Expr::Kind::Name:
    result = evaluateName(cast<NameExpr>(expr));
    break;
  case Expr::Kind::Attribute:
    result = evaluateAttribute(cast<AttributeExpr>(expr));
    break;
  case Expr::Kind::Subscript:
    result = evaluateSubscript(cast<SubscriptExpr>(expr));
    break;
  case Expr::Kind::Call:
    result = evaluateCall(cast<CallExpr>(expr));
    break;
  case Expr::Kind::Binary:
    result = evaluateBinary(cast<BinaryExpr>(expr));
    break;
  case Expr::Kind::Unary:
    result = evaluateUnary(cast<UnaryExpr>(expr));
    break;
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
  case Expr::Kind::Set: {
    std::vector<ModuleValue> items;
    bool allConstants = true;
    for (const Expr *element : cast<SequenceExpr>(expr)->elements) {
      std::optional<ModuleValue> item = evaluate(element);
      if (!item)
        return std::nullopt;
      allConstants &= item->kind() == ModuleValue::Kind::Constant;
      items.push_back(std::move(*item));
    }
    if (expr->kind() == Expr::Kind::Tuple && allConstants) {
      std::vector<ConstantValue> elements;
      for (const ModuleValue &item : items)
        elements.push_back(item.constantValue());
      result = ModuleValue::constant(ConstantValue::tuple(std::move(elements)));
    } else {
      result = ModuleValue::list(std::move(items));
    }
    break;
  }
  case Expr::Kind::Compare: {
    const auto *compare = cast<CompareExpr>(expr);
    std::optional<ModuleValue> left = evaluate(compare->left);
    if (!left)
      return std::nullopt;
    bool all = true;
    for (size_t i = 0; i < compare->ops.size(); ++i) {
      std::optional<ModuleValue> right = evaluate(compare->comparators[i]);
      if (!right)
        return std::nullopt;
      if (left->kind() != ModuleValue::Kind::Constant ||
          right->kind() != ModuleValue::Kind::Constant) {
        diags.report(DiagID::err_module_expression_unsupported, expr->range());
        return std::nullopt;
      }
      FoldResult folded =
          foldCompare(compare->ops[i], left->constantValue(), right->constantValue());
      if (!folded.value)
        return reportFoldError(folded.error, expr);
      all = all && folded.value->truthy();
      left = right;
    }
    result = ModuleValue::constant(ConstantValue::boolean(all));
    break;
  }
  case Expr::Kind::BoolOp: {
    const auto *boolOp = cast<BoolOpExpr>(expr);
    for (size_t i = 0; i < boolOp->values.size(); ++i) {
      std::optional<ModuleValue> value = evaluate(boolOp->values[i]);
      if (!value)
        return std::nullopt;
      if (value->kind() != ModuleValue::Kind::Constant) {
        diags.report(DiagID::err_module_expression_unsupported, expr->range());
        return std::nullopt;
      }
      bool truth = value->constantValue().truthy();
      bool last = i + 1 == boolOp->values.size();
      if (last || (boolOp->op == BoolOpKind::And ? !truth : truth)) {
        result = value;
        break;
      }
    }
    break;
  }
  case Expr::Kind::IfExp: {
    const auto *ifExp = cast<IfExpExpr>(expr);
    std::optional<ModuleValue> test = evaluate(ifExp->test);
    if (!test)
      return std::nullopt;
    if (test->kind() != ModuleValue::Kind::Constant) {
      diags.report(DiagID::err_module_expression_unsupported, expr->range());
      return std::nullopt;
    }
    result = evaluate(test->constantValue().truthy() ? ifExp->body : ifExp->orelse);
    break;
  }
  default:
    diags.report(DiagID::err_module_expression_unsupported, expr->range());
    return std::nullopt;
  }
  if (result)
    result->withOrigin(expr);
  return result;
}

std::optional<ModuleValue> ModuleEvaluator::evaluateName(const NameExpr *name) {
  if (inSignatureString)
    return evaluateSignatureName(name);
  if (const ModuleValue *value = scope.lookup(name->id)) {
    if (value->kind() == ModuleValue::Kind::Symbol)
      return valueOfSymbol(value->symbolValue());
    if (value->kind() == ModuleValue::Kind::HostValue) {
      diags.report(DiagID::err_host_value_used, name->range(),
                   {name->id, value->hostDescription()});
      return std::nullopt;
    }
    if (value->kind() == ModuleValue::Kind::Invalid) {
      if (!value->ignoredImport().empty())
        diags.report(DiagID::err_ignored_import_used, name->range(),
                     {name->id, value->ignoredImport()});
      return std::nullopt; // otherwise its definition was reported
    }
    return *value;
  }
  if (isPythonBuiltinName(name->id))
    diags.report(DiagID::err_unsupported_builtin, name->range(), {name->id});
  else
    diags.report(DiagID::err_undefined_name, name->range(), {name->id});
  return std::nullopt;
}

std::optional<ModuleValue> ModuleEvaluator::evaluateAttribute(const AttributeExpr *attr) {
  std::optional<ModuleValue> base = evaluate(attr->value);
  if (!base)
    return std::nullopt;
  if (base->kind() == ModuleValue::Kind::Symbol &&
      base->symbolValue()->kind == Symbol::Kind::Module) {
    const Symbol &module = *base->symbolValue();
    if (const Symbol *member = BuiltinSymbols::get().member(module, attr->attr))
      return valueOfSymbol(member);
    diags.report(DiagID::err_unknown_module_member, attr->attrRange,
                 {module.displayName(), attr->attr});
    return std::nullopt;
  }
  if (base->kind() == ModuleValue::Kind::Module) {
    const ModuleValue *member = base->member(attr->attr);
    if (!member) {
      diags.report(DiagID::err_unknown_module_member, attr->attrRange,
                   {base->moduleName(), attr->attr});
      return std::nullopt;
    }
    std::string path = base->moduleName() + "." + attr->attr.str();
    if (member->kind() == ModuleValue::Kind::HostValue) {
      diags.report(DiagID::err_host_value_used, attr->range(), {path, member->hostDescription()});
      return std::nullopt;
    }
    if (member->kind() == ModuleValue::Kind::Invalid) {
      if (!member->ignoredImport().empty())
        diags.report(DiagID::err_ignored_import_used, attr->range(),
                     {path, member->ignoredImport()});
      return std::nullopt;
    }
    return *member;
  }
  if (base->kind() == ModuleValue::Kind::Constant) {
    const ConstantValue &value = base->constantValue();
    if (value.kind() == ConstantValue::Kind::Complex &&
        (attr->attr == "real" || attr->attr == "imag"))
      return ModuleValue::constant(
          ConstantValue::floating(attr->attr == "real" ? value.realPart() : value.imagPart()));
  }
  diags.report(DiagID::err_module_expression_unsupported, attr->range());
  return std::nullopt;
}

std::optional<ModuleValue> ModuleEvaluator::evaluateSubscript(const SubscriptExpr *sub) {
  std::optional<ModuleValue> base = evaluate(sub->value);
  if (!base)
    return std::nullopt;

  // Constant tuples and strings index like Python's.
  if (base->kind() == ModuleValue::Kind::Constant &&
      base->constantValue().kind() == ConstantValue::Kind::Tuple) {
    std::optional<ModuleValue> index = evaluate(sub->index);
    if (!index)
      return std::nullopt;
    const auto &elements = base->constantValue().elements();
    if (index->kind() == ModuleValue::Kind::Constant &&
        index->constantValue().kind() == ConstantValue::Kind::Int) {
      Int128 i = index->constantValue().intValue128();
      Int128 size = static_cast<Int128>(elements.size());
      if (i < 0)
        i += size;
      if (i >= 0 && i < size)
        return ModuleValue::constant(elements[static_cast<size_t>(i)]);
      diags.report(DiagID::err_constant_index_out_of_range, sub->index->range());
      return std::nullopt;
    }
    diags.report(DiagID::err_module_expression_unsupported, sub->range());
    return std::nullopt;
  }

  // float32[:, ::1]: an array type (Numba's Type.__getitem__).
  return evaluateArrayType(*base, sub);
}

std::optional<ModuleValue> ModuleEvaluator::evaluateBinary(const BinaryExpr *binary) {
  std::optional<ModuleValue> lhs = evaluate(binary->lhs);
  if (!lhs)
    return std::nullopt;
  std::optional<ModuleValue> rhs = evaluate(binary->rhs);
  if (!rhs)
    return std::nullopt;
  if (lhs->kind() != ModuleValue::Kind::Constant || rhs->kind() != ModuleValue::Kind::Constant) {
    diags.report(DiagID::err_module_expression_unsupported, binary->range());
    return std::nullopt;
  }
  FoldResult folded = foldBinary(binary->op, lhs->constantValue(), rhs->constantValue(), types);
  if (!folded.value)
    return reportFoldError(folded.error, binary);
  return ModuleValue::constant(std::move(*folded.value));
}

std::optional<ModuleValue> ModuleEvaluator::evaluateUnary(const UnaryExpr *unary) {
  std::optional<ModuleValue> operand = evaluate(unary->operand);
  if (!operand)
    return std::nullopt;
  if (operand->kind() != ModuleValue::Kind::Constant) {
    diags.report(DiagID::err_module_expression_unsupported, unary->range());
    return std::nullopt;
  }
  FoldResult folded = foldUnary(unary->op, operand->constantValue(), types);
  if (!folded.value)
    return reportFoldError(folded.error, unary);
  return ModuleValue::constant(std::move(*folded.value));
}

std::optional<ModuleValue> ModuleEvaluator::evaluateCall(const CallExpr *call) {
  std::optional<ModuleValue> callee = evaluate(call->callee);
  if (!callee)
    return std::nullopt;
  // Decorators are evaluated by the module scope, which needs their AST.
  if (callee->kind() == ModuleValue::Kind::Symbol &&
      callee->symbolValue()->kind == Symbol::Kind::Decorator)
    return ModuleValue::decorator(callee->symbolValue(), call);
  if (callee->kind() == ModuleValue::Kind::Symbol && callee->symbolValue()->detail == "Record" &&
      callee->symbolValue()->kind == Symbol::Kind::TypeMaker)
    return evaluateRecordType(call);
  // A dtype's fields are (name, type) tuples no constant holds.
  if (callee->kind() == ModuleValue::Kind::Symbol &&
      callee->symbolValue()->kind == Symbol::Kind::TypeMaker &&
      callee->symbolValue()->detail == "dtype")
    return makeNumpyDtype(call);

  for (const Expr *arg : call->args)
    if (isa<StarredExpr>(arg)) {
      diags.report(DiagID::err_module_expression_unsupported, arg->range());
      return std::nullopt;
    }
  std::vector<ModuleValue> args;
  for (const Expr *arg : call->args) {
    std::optional<ModuleValue> value = evaluate(arg);
    if (!value)
      return std::nullopt;
    args.push_back(std::move(*value));
  }
  if (callee->kind() == ModuleValue::Kind::Symbol)
    return callSymbol(*callee->symbolValue(), call, args);
  if (callee->kind() == ModuleValue::Kind::Type)
    return callType(callee->typeValue(), call, args);
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

std::optional<ConstantValue> ModuleEvaluator::constantOf(const Expr *expr,
                                                         const ModuleValue &value) {
  if (value.kind() == ModuleValue::Kind::Constant)
    return value.constantValue();
  diags.report(DiagID::err_expected_constant, expr->range(), {value.describe()});
  return std::nullopt;
}

bool ModuleEvaluator::checkScalarConversion(const ConstantValue &value, const Type *type,
                                            const CallExpr *call) {
  // NumPy scalars convert to each other as C casts do (np.int8(np.int64(300))
  // wraps), but Python numbers go through Python's int() and float(), which
  // NumPy 2 checks: np.int8(300) raises OverflowError.
  if (value.numpyType() || llvm::isa<BooleanType>(type))
    return true;
  if (value.kind() == ConstantValue::Kind::Complex && !llvm::isa<ComplexType>(type)) {
    diags.report(DiagID::err_constant_conversion, call->range(), {value.repr(), type->str()});
    return false;
  }
  const auto *integer = llvm::dyn_cast<IntegerType>(type);
  if (!integer)
    return true;
  Int128 number = value.intValue128();
  if (value.kind() == ConstantValue::Kind::Float) {
    double real = value.floatValue();
    if (!std::isfinite(real) || std::fabs(real) >= 1e38) {
      diags.report(DiagID::err_constant_conversion, call->range(), {value.repr(), type->str()});
      return false;
    }
    number = static_cast<Int128>(std::trunc(real));
  }
  unsigned bits = integer->bitwidth();
  Int128 low = integer->signedness() ? -(static_cast<Int128>(1) << (bits - 1)) : 0;
  Int128 high = integer->signedness() ? (static_cast<Int128>(1) << (bits - 1)) - 1
                                      : (static_cast<Int128>(1) << bits) - 1;
  if (number < low || number > high) {
    diags.report(DiagID::err_constant_out_of_bounds, call->range(),
                 {ConstantValue::integer(number).repr(), type->str()});
    return false;
  }
  return true;
}

std::optional<ModuleValue> ModuleEvaluator::callType(const Type *type, const CallExpr *call,
                                                     llvm::ArrayRef<ModuleValue> args) {
  if (!call->keywords.empty()) {
    diags.report(DiagID::err_module_expression_unsupported, call->range());
    return std::nullopt;
  }
  // float32(float32, float32) makes a signature; float32(2.5) a NumPy scalar.
  bool allTypes = llvm::all_of(args, [&](const ModuleValue &arg) {
    return asType(arg, SourceRange(), /*report=*/false) != nullptr;
  });
  if (allTypes) {
    Signature signature;
    signature.returnType = type;
    for (size_t i = 0; i < args.size(); ++i)
      signature.args.push_back(asType(args[i], call->args[i]->range()));
    signature.range = call->range();
    return ModuleValue::signature(std::move(signature));
  }
  if (args.size() == 1 && type->isScalar()) {
    std::optional<ConstantValue> value = constantOf(call->args[0], args[0]);
    if (!value)
      return std::nullopt;
    if (!value->isNumber()) {
      diags.report(DiagID::err_module_expression_unsupported, call->range());
      return std::nullopt;
    }
    if (!checkScalarConversion(*value, type, call))
      return std::nullopt;
    return ModuleValue::constant(ConstantValue::numpyScalar(*value, type));
  }
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

bool ModuleEvaluator::requireArgs(const Symbol &symbol, const CallExpr *call,
                                  llvm::ArrayRef<ModuleValue> args, size_t count) {
  if (args.size() == count && call->keywords.empty())
    return true;
  diags.report(
      DiagID::err_wrong_argument_count, call->range(),
      {symbol.displayName(), countOf(count, "argument"), static_cast<unsigned>(args.size())});
  return false;
}

std::optional<ModuleValue> ModuleEvaluator::callSymbol(const Symbol &symbol, const CallExpr *call,
                                                       llvm::ArrayRef<ModuleValue> args) {
  if (symbol.kind == Symbol::Kind::DType)
    return callType(dtypeOf(symbol), call, args);
  if (symbol.is(BuiltinId::CffiFfi))
    return requireArgs(symbol, call, args, 0) ? std::optional(ModuleValue::symbol(&symbol))
                                              : std::nullopt;
  if (symbol.kind == Symbol::Kind::TypeMaker)
    return callTypeMaker(symbol, call, args);
  if (symbol.kind == Symbol::Kind::Function)
    return callConstantFunction(symbol, call, args);
  if (symbol.kind == Symbol::Kind::HostOnly) {
    diags.report(DiagID::err_host_api_at_module_level, call->range(), {symbol.displayName()});
    return std::nullopt;
  }
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

namespace {

/// Whether `values` are all ints, floats or bools: numbers math takes.
bool allRealNumbers(llvm::ArrayRef<ConstantValue> values) {
  return llvm::all_of(values, [](const ConstantValue &v) {
    return v.isNumber() && v.kind() != ConstantValue::Kind::Complex;
  });
}

} // namespace

std::optional<ModuleValue> ModuleEvaluator::callConstantFunction(const Symbol &symbol,
                                                                 const CallExpr *call,
                                                                 llvm::ArrayRef<ModuleValue> args) {
  std::vector<ConstantValue> values;
  for (size_t i = 0; i < args.size(); ++i) {
    std::optional<ConstantValue> value = constantOf(call->args[i], args[i]);
    if (!value)
      return std::nullopt;
    values.push_back(std::move(*value));
  }
  if (!call->keywords.empty()) {
    diags.report(DiagID::err_module_expression_unsupported, call->range());
    return std::nullopt;
  }
  if (symbol.qualifiedName.starts_with("math."))
    return foldMathCall(symbol, call, args, values);
  return foldBuiltinCall(symbol, call, args, values);
}

std::optional<ModuleValue> ModuleEvaluator::foldMathCall(const Symbol &symbol, const CallExpr *call,
                                                         llvm::ArrayRef<ModuleValue> args,
                                                         llvm::ArrayRef<ConstantValue> values) {
  llvm::StringRef name = symbol.qualifiedName;
  using UnaryFn = double (*)(double);
  static const std::pair<llvm::StringLiteral, UnaryFn> unaryMath[] = {
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.log2", [](double x) { return std::log2(x); }},
      {"math.log10", [](double x) { return std::log10(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.tan", [](double x) { return std::tan(x); }},
      {"math.atan", [](double x) { return std::atan(x); }},
      {"math.fabs", [](double x) { return std::fabs(x); }},
      {"math.radians", [](double x) { return x * (M_PI / 180.0); }},
      {"math.degrees", [](double x) { return x * (180.0 / M_PI); }},
  };
  if (name == "math.log" && values.size() == 2 && call->keywords.empty() &&
      allRealNumbers(values)) {
    // math.log(x, base), as Python computes it.
    double x = values[0].asDouble();
    double base = values[1].asDouble();
    if (x <= 0 || base <= 0) {
      diags.report(DiagID::err_constant_math_domain, call->range(), {symbol.displayName()});
      return std::nullopt;
    }
    if (base == 1) {
      diags.report(DiagID::err_constant_division_by_zero, call->range());
      return std::nullopt;
    }
    return ModuleValue::constant(ConstantValue::floating(std::log(x) / std::log(base)));
  }
  for (const auto &[fnName, fn] : unaryMath) {
    if (name != fnName)
      continue;
    if (!requireArgs(symbol, call, args, 1))
      return std::nullopt;
    if (!allRealNumbers(values)) {
      diags.report(DiagID::err_module_expression_unsupported, call->range());
      return std::nullopt;
    }
    double x = values[0].asDouble();
    if ((name == "math.sqrt" && x < 0) || (name.starts_with("math.log") && x <= 0)) {
      diags.report(DiagID::err_constant_math_domain, call->range(), {symbol.displayName()});
      return std::nullopt;
    }
    return ModuleValue::constant(ConstantValue::floating(fn(x)));
  }
  // A wrong argument count is reported once, and nothing else about the call.
  bool rounds = name == "math.floor" || name == "math.ceil" || name == "math.trunc";
  bool binary = name == "math.pow" || name == "math.atan2" || name == "math.hypot";
  if ((rounds || binary) && !requireArgs(symbol, call, args, rounds ? 1 : 2))
    return std::nullopt;
  if (rounds && allRealNumbers(values)) {
    double x = values[0].asDouble();
    double rounded = name == "math.floor"  ? std::floor(x)
                     : name == "math.ceil" ? std::ceil(x)
                                           : std::trunc(x);
    if (!std::isfinite(rounded)) {
      diags.report(DiagID::err_constant_math_domain, call->range(), {symbol.displayName()});
      return std::nullopt;
    }
    return ModuleValue::constant(ConstantValue::integer(static_cast<Int128>(rounded)));
  }
  if (binary && allRealNumbers(values)) {
    double a = values[0].asDouble();
    double b = values[1].asDouble();
    double r = name == "math.pow"     ? std::pow(a, b)
               : name == "math.atan2" ? std::atan2(a, b)
                                      : std::hypot(a, b);
    return ModuleValue::constant(ConstantValue::floating(r));
  }
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

std::optional<ModuleValue> ModuleEvaluator::foldBuiltinCall(const Symbol &symbol,
                                                            const CallExpr *call,
                                                            llvm::ArrayRef<ModuleValue> args,
                                                            llvm::ArrayRef<ConstantValue> values) {
  llvm::StringRef name = symbol.qualifiedName;
  // A wrong argument count is reported once, and nothing else about the call.
  bool takesOne = name == "builtins.float" || name == "builtins.int" || name == "builtins.bool" ||
                  name == "builtins.abs" || name == "builtins.len";
  if (takesOne && !requireArgs(symbol, call, args, 1))
    return std::nullopt;
  bool numbers = allRealNumbers(values);
  if (name == "builtins.float" && numbers)
    return ModuleValue::constant(ConstantValue::floating(values[0].asDouble()));
  if (name == "builtins.int" && numbers) {
    if (values[0].kind() == ConstantValue::Kind::Float) {
      double x = values[0].floatValue();
      if (!std::isfinite(x)) {
        diags.report(DiagID::err_constant_math_domain, call->range(), {symbol.displayName()});
        return std::nullopt;
      }
      return ModuleValue::constant(ConstantValue::integer(static_cast<Int128>(std::trunc(x))));
    }
    return ModuleValue::constant(ConstantValue::integer(values[0].intValue128()));
  }
  if (name == "builtins.bool")
    return ModuleValue::constant(ConstantValue::boolean(values[0].truthy()));
  if (name == "builtins.abs" && numbers) {
    if (values[0].kind() == ConstantValue::Kind::Float)
      return ModuleValue::constant(ConstantValue::floating(std::fabs(values[0].floatValue())));
    Int128 v = values[0].intValue128();
    return ModuleValue::constant(ConstantValue::integer(v < 0 ? -v : v));
  }
  if (name == "builtins.complex" && !values.empty() && values.size() <= 2 && numbers)
    return ModuleValue::constant(ConstantValue::complex(
        values[0].asDouble(), values.size() == 2 ? values[1].asDouble() : 0.0));
  if ((name == "builtins.min" || name == "builtins.max") && values.size() >= 2 && numbers) {
    size_t best = 0;
    for (size_t i = 1; i < values.size(); ++i) {
      FoldResult less = foldCompare(CompareOp::Lt, values[i], values[best]);
      bool isLess = less.value && less.value->truthy();
      if (name == "builtins.min" ? isLess : (!isLess && !(values[i] == values[best])))
        best = i;
    }
    return ModuleValue::constant(values[best]);
  }
  if (name == "builtins.len") {
    if (values[0].kind() == ConstantValue::Kind::Tuple)
      return ModuleValue::constant(
          ConstantValue::integer(static_cast<Int128>(values[0].elements().size())));
    if (values[0].kind() == ConstantValue::Kind::String)
      return ModuleValue::constant(
          ConstantValue::integer(static_cast<Int128>(values[0].stringValue().size())));
  }
  if (name == "builtins.round" && !values.empty() && values.size() <= 2 && numbers) {
    double x = values[0].asDouble();
    if (values.size() == 1) {
      double r = std::nearbyint(x); // ties to even, as Python's round()
      return ModuleValue::constant(ConstantValue::integer(static_cast<Int128>(r)));
    }
    double scale = std::pow(10.0, values[1].asDouble());
    return ModuleValue::constant(ConstantValue::floating(std::nearbyint(x * scale) / scale));
  }
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

} // namespace kiln
