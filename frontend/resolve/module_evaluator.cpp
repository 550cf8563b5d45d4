//===- frontend/resolve/module_evaluator.cpp - Module-level expressions ---===//

#include "frontend/resolve/module_evaluator.h"

#include "frontend/parse/parser.h"

#include <llvm/ADT/StringExtras.h>

#include <cmath>

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// The scalar type a DType symbol names, or the xoroshiro128p record.
const Type *dtypeOfSymbol(const Symbol &symbol, TypeContext &types) {
  if (symbol.detail == "xoroshiro128p_type")
    return types.xoroshiro128pState();
  return types.scalarByName(symbol.detail);
}

bool isNumpySymbol(const Symbol &symbol) {
  return symbol.qualifiedName.starts_with("numpy.");
}

/// The Numba type Python's int, float and complex stand for in NumPy.
std::optional<llvm::StringRef> numbaTypeForPythonType(llvm::StringRef name) {
  if (name == "int")
    return llvm::StringRef("int64");
  if (name == "float")
    return llvm::StringRef("float64");
  if (name == "complex")
    return llvm::StringRef("complex128");
  return std::nullopt;
}

} // namespace

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
  if (inSignatureString) {
    // Numba evaluates signature strings with numba.types as the namespace.
    if (const Symbol *symbol = BuiltinSymbols::get().lookup(("numba.types." + name->id).str()))
      return ModuleValue::symbol(symbol);
    // Python's builtins are in scope too: "void(int)" names Python's int,
    // which Numba cannot use as a type.
    if (!scope.bindingRange(name->id).isValid() && isPythonBuiltinName(name->id)) {
      DiagnosticBuilder error =
          diags.report(DiagID::err_not_a_type, name->range(), {"'" + name->id.str() + "'"});
      if (std::optional<llvm::StringRef> numbaName = numbaTypeForPythonType(name->id))
        error.note(DiagID::note_python_type_in_signature, name->range(), {name->id, *numbaName});
      return std::nullopt;
    }
    DiagnosticBuilder error =
        diags.report(DiagID::err_undefined_in_signature_string, name->range(), {name->id});
    if (scope.lookup(name->id)) {
      error.note(DiagID::note_signature_string_scope, name->range(), {name->id});
    } else {
      // Most likely a misspelt type name.
      llvm::StringRef best;
      unsigned bestDistance = 3;
      for (llvm::StringRef candidate :
           {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
            "uint32", "uint64", "boolean", "complex64", "complex128", "void", "intp", "uintp"}) {
        unsigned distance = name->id.edit_distance(candidate, true, bestDistance);
        if (distance < bestDistance) {
          best = candidate;
          bestDistance = distance;
        }
      }
      if (!best.empty())
        error.note(DiagID::note_did_you_mean, name->range(), {best});
    }
    return std::nullopt;
  }
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

const Type *ModuleEvaluator::asType(const ModuleValue &value, SourceRange range, bool report) {
  if (value.kind() == ModuleValue::Kind::Type)
    return value.typeValue();
  if (value.kind() == ModuleValue::Kind::Symbol) {
    const Symbol &symbol = *value.symbolValue();
    if (symbol.kind == Symbol::Kind::DType)
      return dtypeOfSymbol(symbol, types);
    if (symbol.kind == Symbol::Kind::TypeMaker && symbol.detail == "none")
      return types.none();
  }
  if (value.kind() == ModuleValue::Kind::Constant &&
      value.constantValue().kind() == ConstantValue::Kind::None)
    return types.none();
  if (report) {
    DiagnosticBuilder error = diags.report(DiagID::err_not_a_type, range, {value.describe()});
    if (value.kind() == ModuleValue::Kind::Symbol &&
        value.symbolValue()->qualifiedName.starts_with("builtins."))
      if (std::optional<llvm::StringRef> numbaName =
              numbaTypeForPythonType(value.symbolValue()->name()))
        error.note(DiagID::note_python_type_in_signature, range,
                   {value.symbolValue()->name(), *numbaName});
  }
  return nullptr;
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
  const Type *dtype = asType(*base, sub->value->range(), /*report=*/false);
  if (!dtype || dtype == types.none()) {
    diags.report(DiagID::err_module_expression_unsupported, sub->range());
    return std::nullopt;
  }
  if (base->kind() == ModuleValue::Kind::Symbol && isNumpySymbol(*base->symbolValue())) {
    diags.report(DiagID::err_numpy_type_in_signature, sub->value->range(),
                 {base->symbolValue()->displayName(), dtype->str()});
    return std::nullopt;
  }
  llvm::SmallVector<const SliceExpr *, 4> slices;
  bool isTuple = false;
  if (const auto *tuple = dyn_cast<SequenceExpr>(sub->index);
      tuple && tuple->kind() == Expr::Kind::Tuple) {
    isTuple = true;
    for (const Expr *element : tuple->elements)
      slices.push_back(dyn_cast<SliceExpr>(element));
  } else {
    slices.push_back(dyn_cast<SliceExpr>(sub->index));
  }
  // The step, when written, must be a constant; only a step of 1 matters.
  auto stepIsOne = [&](const SliceExpr *slice) -> std::optional<bool> {
    if (!slice->step)
      return false;
    std::optional<ModuleValue> step = evaluate(slice->step);
    if (!step)
      return std::nullopt;
    if (step->kind() != ModuleValue::Kind::Constant) {
      diags.report(DiagID::err_bad_array_type_index, sub->index->range());
      return std::nullopt;
    }
    const ConstantValue &value = step->constantValue();
    return value.kind() == ConstantValue::Kind::Int && value.intValue128() == 1;
  };
  std::vector<bool> unitSteps;
  for (const SliceExpr *slice : slices) {
    if (!slice || slice->lower || slice->upper) {
      diags.report(DiagID::err_bad_array_type_index, sub->index->range());
      return std::nullopt;
    }
    std::optional<bool> unit = stepIsOne(slice);
    if (!unit)
      return std::nullopt;
    unitSteps.push_back(*unit);
  }
  if (slices.empty()) {
    diags.report(DiagID::err_bad_array_type_index, sub->index->range());
    return std::nullopt;
  }
  ArrayLayout layout = ArrayLayout::A;
  if (isTuple && unitSteps.front())
    layout = ArrayLayout::F;
  else if (unitSteps.back())
    layout = ArrayLayout::C;
  if (!dtype->isScalar() && !isa<RecordType, CharSequenceType, DateTimeType>(dtype)) {
    diags.report(DiagID::err_bad_array_dtype, sub->value->range(), {dtype->str()});
    return std::nullopt;
  }
  return ModuleValue::type(types.array(types.unliteral(dtype), slices.size(), layout));
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

bool ModuleEvaluator::nestedArrayField(const Expr *expr, RecordType::Field &field) {
  // NestedArray(dtype, (extents...)): a field that holds a C array.
  const auto *call = dyn_cast<CallExpr>(expr);
  if (!call || call->args.size() != 2)
    return false;
  std::optional<ModuleValue> callee = evaluate(call->callee);
  if (!callee || callee->kind() != ModuleValue::Kind::Symbol ||
      callee->symbolValue()->detail != "NestedArray")
    return false;
  std::optional<ModuleValue> dtype = evaluate(call->args[0]);
  std::optional<ModuleValue> shape = evaluate(call->args[1]);
  if (!dtype || !shape)
    return false;
  const Type *element = asType(*dtype, call->args[0]->range());
  std::optional<ConstantValue> extents = constantOf(call->args[1], *shape);
  if (!element || !element->isScalar() || !extents ||
      extents->kind() != ConstantValue::Kind::Tuple || extents->elements().empty())
    return false;
  for (const ConstantValue &extent : extents->elements()) {
    if (extent.kind() != ConstantValue::Kind::Int || extent.intValue128() < 1 ||
        extent.intValue128() > (1 << 20))
      return false;
    field.shape.push_back(static_cast<uint64_t>(extent.intValue128()));
  }
  field.type = element;
  return true;
}

std::optional<ModuleValue> ModuleEvaluator::evaluateRecordType(const CallExpr *call) {
  // Numba's Record(fields, size, aligned): fields are (name, {"type": T,
  // "offset": N}) pairs, as numba.types.Record takes them.
  auto unsupported = [&](const Expr *where) {
    diags.report(DiagID::err_bad_record_type, where->range());
    return std::nullopt;
  };
  if (call->args.size() != 3 || !call->keywords.empty())
    return unsupported(call);
  const auto *fieldList = dyn_cast<SequenceExpr>(call->args[0]);
  if (!fieldList)
    return unsupported(call->args[0]);
  std::vector<RecordType::Field> fields;
  unsigned alignment = 1;
  for (const Expr *entry : fieldList->elements) {
    const auto *pair = dyn_cast<SequenceExpr>(entry);
    if (!pair || pair->elements.size() != 2 || !isa<DictExpr>(pair->elements[1]))
      return unsupported(entry);
    std::optional<ModuleValue> name = evaluate(pair->elements[0]);
    if (!name || name->kind() != ModuleValue::Kind::Constant ||
        name->constantValue().kind() != ConstantValue::Kind::String)
      return unsupported(pair->elements[0]);
    RecordType::Field field{name->constantValue().stringValue(), nullptr, 0, {}};
    bool hasOffset = false;
    const auto *properties = cast<DictExpr>(pair->elements[1]);
    for (size_t i = 0; i < properties->keys.size(); ++i) {
      std::optional<ModuleValue> key =
          properties->keys[i] ? evaluate(properties->keys[i]) : std::nullopt;
      if (!key || key->kind() != ModuleValue::Kind::Constant ||
          key->constantValue().kind() != ConstantValue::Kind::String)
        return unsupported(properties);
      llvm::StringRef property = key->constantValue().stringValue();
      if (property == "type" && nestedArrayField(properties->values[i], field))
        continue;
      std::optional<ModuleValue> value = evaluate(properties->values[i]);
      if (!value)
        return std::nullopt;
      if (property == "type") {
        field.type = asType(*value, properties->values[i]->range());
        if (!field.type)
          return std::nullopt;
      } else if (property == "offset") {
        std::optional<ConstantValue> offset = constantOf(properties->values[i], *value);
        if (!offset || offset->kind() != ConstantValue::Kind::Int || offset->intValue128() < 0 ||
            offset->intValue128() > (1 << 30))
          return unsupported(properties->values[i]);
        field.offset = static_cast<unsigned>(offset->intValue128());
        hasOffset = true;
      }
    }
    if (!field.type || !hasOffset ||
        !(field.type->isScalar() || isa<RecordType, CharSequenceType>(field.type)))
      return unsupported(properties);
    alignment = std::max(alignment, static_cast<unsigned>(itemAlignment(field.type)));
    fields.push_back(std::move(field));
  }
  std::optional<ModuleValue> size = evaluate(call->args[1]);
  std::optional<ModuleValue> aligned = evaluate(call->args[2]);
  if (!size || !aligned)
    return std::nullopt;
  std::optional<ConstantValue> sizeValue = constantOf(call->args[1], *size);
  std::optional<ConstantValue> alignedValue = constantOf(call->args[2], *aligned);
  if (!sizeValue || sizeValue->kind() != ConstantValue::Kind::Int || sizeValue->intValue128() < 1 ||
      sizeValue->intValue128() > (1 << 30))
    return unsupported(call->args[1]);
  if (!alignedValue || alignedValue->kind() != ConstantValue::Kind::Bool)
    return unsupported(call->args[2]);
  auto byteSize = static_cast<unsigned>(sizeValue->intValue128());
  for (const RecordType::Field &field : fields)
    if (field.offset + field.byteSize() > byteSize)
      return unsupported(call->args[1]);
  bool isAligned = alignedValue->truthy();
  return ModuleValue::type(
      types.record(std::move(fields), byteSize, isAligned ? alignment : 1, isAligned));
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

std::optional<ModuleValue> ModuleEvaluator::callSymbol(const Symbol &symbol, const CallExpr *call,
                                                       llvm::ArrayRef<ModuleValue> args) {
  // A wrong argument count is reported once, and nothing else about the call.
  bool arityReported = false;
  auto requireArgs = [&](size_t count) {
    if (args.size() == count && call->keywords.empty())
      return true;
    arityReported = true;
    diags.report(
        DiagID::err_wrong_argument_count, call->range(),
        {symbol.displayName(), countOf(count, "argument"), static_cast<unsigned>(args.size())});
    return false;
  };
  if (symbol.kind == Symbol::Kind::DType)
    return callType(dtypeOfSymbol(symbol, types), call, args);
  if (symbol.is(BuiltinId::CffiFfi))
    return requireArgs(0) ? std::optional(ModuleValue::symbol(&symbol)) : std::nullopt;

  if (symbol.kind == Symbol::Kind::TypeMaker) {
    llvm::StringRef maker = symbol.detail;
    if (maker == "none")
      return callType(types.none(), call, args);
    if (maker == "UniTuple") {
      if (!requireArgs(2))
        return std::nullopt;
      const Type *element = asType(args[0], call->args[0]->range());
      std::optional<ConstantValue> count = constantOf(call->args[1], args[1]);
      if (!element || !count)
        return std::nullopt;
      if (count->kind() != ConstantValue::Kind::Int || count->intValue128() < 0 ||
          count->intValue128() > 1024) {
        diags.report(DiagID::err_expected_constant, call->args[1]->range(), {count->repr()});
        return std::nullopt;
      }
      std::vector<const Type *> elements(static_cast<size_t>(count->intValue128()), element);
      return ModuleValue::type(types.tuple(elements));
    }
    if (maker == "NamedTuple") {
      if (!requireArgs(3))
        return std::nullopt;
      std::optional<ModuleValue> elements =
          callSymbol(BuiltinSymbols::get().symbol(BuiltinId::NumbaTypesTuple), call, {args[0]});
      std::optional<ConstantValue> className = constantOf(call->args[1], args[1]);
      std::optional<ConstantValue> fieldNames = constantOf(call->args[2], args[2]);
      if (!elements || !className || !fieldNames)
        return std::nullopt;
      const auto &tuple = llvm::cast<TupleType>(*elements->typeValue());
      std::vector<std::string> fields;
      if (fieldNames->kind() == ConstantValue::Kind::Tuple)
        for (const ConstantValue &field : fieldNames->elements())
          if (field.kind() == ConstantValue::Kind::String)
            fields.push_back(field.stringValue());
      if (className->kind() != ConstantValue::Kind::String ||
          fieldNames->kind() != ConstantValue::Kind::Tuple || fields.size() != tuple.size()) {
        diags.report(DiagID::err_named_tuple_signature, call->range());
        return std::nullopt;
      }
      return ModuleValue::type(
          types.namedTuple(tuple.elementTypes(), className->stringValue(), fields));
    }
    if (maker == "EnumMember" || maker == "IntEnumMember") {
      if (!requireArgs(2))
        return std::nullopt;
      std::optional<ConstantValue> className = constantOf(call->args[0], args[0]);
      const Type *value = asType(args[1], call->args[1]->range());
      if (!className || !value)
        return std::nullopt;
      if (className->kind() != ConstantValue::Kind::String) {
        diags.report(DiagID::err_enum_member_signature, call->range(), {maker.str()});
        return std::nullopt;
      }
      return ModuleValue::type(types.enumMember(className->stringValue(), types.unliteral(value),
                                                maker == "IntEnumMember"));
    }
    if (maker == "Tuple") {
      if (!requireArgs(1))
        return std::nullopt;
      // Tuple(()) is the empty tuple's type, as Numba types `()`.
      if (args[0].kind() == ModuleValue::Kind::Constant &&
          args[0].constantValue().kind() == ConstantValue::Kind::Tuple &&
          args[0].constantValue().elements().empty())
        return ModuleValue::type(types.tuple({}));
      if (args[0].kind() != ModuleValue::Kind::List) {
        diags.report(DiagID::err_not_a_type, call->args[0]->range(), {args[0].describe()});
        return std::nullopt;
      }
      std::vector<const Type *> elements;
      for (const ModuleValue &item : args[0].items()) {
        const Type *element = asType(item, call->args[0]->range());
        if (!element)
          return std::nullopt;
        elements.push_back(element);
      }
      return ModuleValue::type(types.tuple(elements));
    }
    if (maker == "CPointer") {
      if (!requireArgs(1))
        return std::nullopt;
      const Type *pointee = asType(args[0], call->args[0]->range());
      if (!pointee)
        return std::nullopt;
      if (!pointee->isScalar()) {
        diags.report(DiagID::err_pointer_type, call->args[0]->range(), {pointee->str()});
        return std::nullopt;
      }
      return ModuleValue::type(types.pointer(types.unliteral(pointee)));
    }
    if (maker == "NPDatetime" || maker == "NPTimedelta") {
      if (!requireArgs(1))
        return std::nullopt;
      std::optional<ConstantValue> unitName = constantOf(call->args[0], args[0]);
      if (!unitName)
        return std::nullopt;
      std::optional<DateTimeUnit> unit = unitName->kind() == ConstantValue::Kind::String
                                             ? dateTimeUnitNamed(unitName->stringValue())
                                             : std::nullopt;
      if (!unit) {
        diags.report(DiagID::err_datetime_unit, call->args[0]->range(), {unitName->repr()});
        return std::nullopt;
      }
      return ModuleValue::type(maker == "NPDatetime" ? types.datetime(*unit)
                                                     : types.timedelta(*unit));
    }
    if (maker == "CharSeq" || maker == "UnicodeCharSeq") {
      if (!requireArgs(1))
        return std::nullopt;
      std::optional<ConstantValue> count = constantOf(call->args[0], args[0]);
      if (!count)
        return std::nullopt;
      if (count->kind() != ConstantValue::Kind::Int || count->intValue128() < 1 ||
          count->intValue128() > (1 << 20)) {
        diags.report(DiagID::err_expected_constant, call->args[0]->range(), {count->repr()});
        return std::nullopt;
      }
      return ModuleValue::type(types.charSequence(static_cast<unsigned>(count->intValue128()),
                                                  maker == "UnicodeCharSeq"));
    }
    if (maker == "Array") {
      if (!requireArgs(3))
        return std::nullopt;
      const Type *dtype = asType(args[0], call->args[0]->range());
      std::optional<ConstantValue> ndim = constantOf(call->args[1], args[1]);
      std::optional<ConstantValue> layout = constantOf(call->args[2], args[2]);
      if (!dtype || !ndim || !layout)
        return std::nullopt;
      llvm::StringRef layoutText = layout->kind() == ConstantValue::Kind::String
                                       ? llvm::StringRef(layout->stringValue())
                                       : "";
      if (ndim->kind() != ConstantValue::Kind::Int || ndim->intValue128() < 0 ||
          ndim->intValue128() > 32 ||
          (layoutText != "C" && layoutText != "F" && layoutText != "A")) {
        diags.report(DiagID::err_module_expression_unsupported, call->range());
        return std::nullopt;
      }
      ArrayLayout arrayLayout = layoutText == "C"   ? ArrayLayout::C
                                : layoutText == "F" ? ArrayLayout::F
                                                    : ArrayLayout::A;
      return ModuleValue::type(
          types.array(dtype, static_cast<unsigned>(ndim->intValue128()), arrayLayout));
    }
  }

  if (symbol.kind == Symbol::Kind::Function) {
    // The few Python and math functions module constants are built with.
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
    auto allNumbers = [&] {
      return llvm::all_of(values, [](const ConstantValue &v) {
        return v.isNumber() && v.kind() != ConstantValue::Kind::Complex;
      });
    };
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
    if (name == "math.log" && values.size() == 2 && call->keywords.empty() && allNumbers()) {
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
      if (!requireArgs(1))
        return std::nullopt;
      if (!allNumbers()) {
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
    if ((name == "math.floor" || name == "math.ceil" || name == "math.trunc") && requireArgs(1) &&
        allNumbers()) {
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
    if ((name == "math.pow" || name == "math.atan2" || name == "math.hypot") && requireArgs(2) &&
        allNumbers()) {
      double a = values[0].asDouble();
      double b = values[1].asDouble();
      double r = name == "math.pow"     ? std::pow(a, b)
                 : name == "math.atan2" ? std::atan2(a, b)
                                        : std::hypot(a, b);
      return ModuleValue::constant(ConstantValue::floating(r));
    }
    if (name == "builtins.float" && requireArgs(1) && allNumbers())
      return ModuleValue::constant(ConstantValue::floating(values[0].asDouble()));
    if (name == "builtins.int" && requireArgs(1) && allNumbers()) {
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
    if (name == "builtins.bool" && requireArgs(1))
      return ModuleValue::constant(ConstantValue::boolean(values[0].truthy()));
    if (name == "builtins.abs" && requireArgs(1) && allNumbers()) {
      if (values[0].kind() == ConstantValue::Kind::Float)
        return ModuleValue::constant(ConstantValue::floating(std::fabs(values[0].floatValue())));
      Int128 v = values[0].intValue128();
      return ModuleValue::constant(ConstantValue::integer(v < 0 ? -v : v));
    }
    if (name == "builtins.complex" && !values.empty() && values.size() <= 2 && allNumbers())
      return ModuleValue::constant(ConstantValue::complex(
          values[0].asDouble(), values.size() == 2 ? values[1].asDouble() : 0.0));
    if ((name == "builtins.min" || name == "builtins.max") && values.size() >= 2 && allNumbers()) {
      size_t best = 0;
      for (size_t i = 1; i < values.size(); ++i) {
        FoldResult less = foldCompare(CompareOp::Lt, values[i], values[best]);
        bool isLess = less.value && less.value->truthy();
        if (name == "builtins.min" ? isLess : (!isLess && !(values[i] == values[best])))
          best = i;
      }
      return ModuleValue::constant(values[best]);
    }
    if (name == "builtins.len" && requireArgs(1)) {
      if (values[0].kind() == ConstantValue::Kind::Tuple)
        return ModuleValue::constant(
            ConstantValue::integer(static_cast<Int128>(values[0].elements().size())));
      if (values[0].kind() == ConstantValue::Kind::String)
        return ModuleValue::constant(
            ConstantValue::integer(static_cast<Int128>(values[0].stringValue().size())));
    }
    if (name == "builtins.round" && !values.empty() && values.size() <= 2 && allNumbers()) {
      double x = values[0].asDouble();
      if (values.size() == 1) {
        double r = std::nearbyint(x); // ties to even, as Python's round()
        return ModuleValue::constant(ConstantValue::integer(static_cast<Int128>(r)));
      }
      double scale = std::pow(10.0, values[1].asDouble());
      return ModuleValue::constant(ConstantValue::floating(std::nearbyint(x * scale) / scale));
    }
    if (arityReported)
      return std::nullopt;
  }
  if (symbol.kind == Symbol::Kind::HostOnly) {
    diags.report(DiagID::err_host_api_at_module_level, call->range(), {symbol.displayName()});
    return std::nullopt;
  }
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

std::optional<Signature> ModuleEvaluator::signatureFromText(uint32_t file, uint32_t begin,
                                                            uint32_t end) {
  Expr *expr = parseExpression(sources, file, begin, end, astContext, diags);
  if (!expr)
    return std::nullopt;
  bool saved = inSignatureString;
  inSignatureString = true;
  std::optional<ModuleValue> value = evaluate(expr);
  inSignatureString = saved;
  if (!value)
    return std::nullopt;
  // A string holding just argument types, "(float32[:], int32)", or one type.
  return asSignature(*value, expr);
}

std::optional<Signature> ModuleEvaluator::parseSignatureString(const StringLiteralExpr *literal) {
  llvm::StringRef quoted = sources.textOf(literal->range());
  size_t quote = quoted.find_first_of("'\"");
  size_t quoteLength =
      quoted.substr(quote).starts_with("\"\"\"") || quoted.substr(quote).starts_with("'''") ? 3 : 1;
  llvm::StringRef body = quoted.size() >= quote + 2 * quoteLength
                             ? quoted.slice(quote + quoteLength, quoted.size() - quoteLength)
                             : llvm::StringRef();
  if (body == literal->value) {
    // No escapes: parse in place so that diagnostics point into the string.
    uint32_t begin = literal->range().begin.offset + static_cast<uint32_t>(quote + quoteLength);
    return signatureFromText(literal->range().begin.file, begin,
                             begin + static_cast<uint32_t>(body.size()));
  }
  uint32_t file =
      sources.addFile(sources.path(literal->range().begin.file).str() + " (signature string)",
                      literal->value.str());
  return signatureFromText(file, 0, static_cast<uint32_t>(literal->value.size()));
}

std::optional<Signature> ModuleEvaluator::asSignature(const ModuleValue &value, const Expr *expr) {
  SourceRange range = expr ? expr->range() : SourceRange();
  switch (value.kind()) {
  case ModuleValue::Kind::Signature: {
    Signature signature = value.signatureValue();
    if (!signature.range.isValid())
      signature.range = range;
    return signature;
  }
  case ModuleValue::Kind::Constant: {
    const ConstantValue &constant = value.constantValue();
    if (constant.kind() == ConstantValue::Kind::String) {
      if (const auto *literal = llvm::dyn_cast_or_null<StringLiteralExpr>(value.origin()))
        return parseSignatureString(literal);
      // A string the module computes ("void(" + RECORD + "[::1])"): its
      // text is a source of its own, where diagnostics point.
      const std::string &text = constant.stringValue();
      uint32_t file =
          sources.addFile(sources.path(range.begin.file).str() + " (signature string)", text);
      return signatureFromText(file, 0, static_cast<uint32_t>(text.size()));
    }
    if (constant.kind() == ConstantValue::Kind::Tuple && constant.elements().empty()) {
      Signature signature;
      signature.range = range;
      return signature;
    }
    break;
  }
  case ModuleValue::Kind::List: {
    // A tuple of argument types: (float32[:], int64).
    Signature signature;
    signature.range = range;
    for (const ModuleValue &item : value.items()) {
      const Type *arg = asType(item, range);
      if (!arg)
        return std::nullopt;
      signature.args.push_back(arg);
    }
    return signature;
  }
  case ModuleValue::Kind::Type:
  case ModuleValue::Kind::Symbol: {
    if (const Type *type = asType(value, range, /*report=*/false)) {
      Signature signature;
      signature.range = range;
      signature.args.push_back(type);
      return signature;
    }
    break;
  }
  default:
    break;
  }
  diags.report(DiagID::err_bad_signature, range, {value.describe()});
  return std::nullopt;
}

std::optional<std::vector<Signature>> ModuleEvaluator::signatures(const Expr *expr) {
  // A list display is a list of signatures; a tuple display is one
  // signature's argument types.
  if (const auto *list = dyn_cast<SequenceExpr>(expr); list && list->kind() == Expr::Kind::List) {
    std::vector<Signature> result;
    for (const Expr *element : list->elements) {
      std::optional<ModuleValue> value = evaluate(element);
      if (!value)
        return std::nullopt;
      std::optional<Signature> signature = asSignature(*value, element);
      if (!signature)
        return std::nullopt;
      result.push_back(std::move(*signature));
    }
    return result;
  }
  std::optional<ModuleValue> value = evaluate(expr);
  if (!value)
    return std::nullopt;
  if (value->kind() == ModuleValue::Kind::List && expr->kind() != Expr::Kind::Tuple) {
    // A name bound to a list of signatures.
    std::vector<Signature> result;
    for (const ModuleValue &item : value->items()) {
      std::optional<Signature> signature = asSignature(item, item.origin() ? item.origin() : expr);
      if (!signature)
        return std::nullopt;
      result.push_back(std::move(*signature));
    }
    return result;
  }
  std::optional<Signature> signature = asSignature(*value, expr);
  if (!signature)
    return std::nullopt;
  return std::vector<Signature>{std::move(*signature)};
}

} // namespace kiln
