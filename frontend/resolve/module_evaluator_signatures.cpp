//===- frontend/resolve/module_evaluator_signatures.cpp - Numba types -----===//
//
// The module evaluator's Numba types and signatures: type names and array
// types (float32[:, ::1]), numba.types constructors (UniTuple, Record, ...),
// and signatures, written as strings ("void(float32[:])"), as expressions
// (void(float32[:])), as argument tuples or as lists of these.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/parser.h"
#include "frontend/resolve/module_evaluator.h"

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

bool isNumpySymbol(const Symbol &symbol) {
  return symbol.qualifiedName.starts_with("numpy.");
}

} // namespace

std::optional<llvm::StringRef> numbaTypeForPythonType(llvm::StringRef name) {
  if (name == "int")
    return llvm::StringRef("int64");
  if (name == "float")
    return llvm::StringRef("float64");
  if (name == "complex")
    return llvm::StringRef("complex128");
  return std::nullopt;
}

const Type *ModuleEvaluator::dtypeOf(const Symbol &symbol) const {
  if (symbol.detail == "xoroshiro128p_type")
    return types.xoroshiro128pState();
  return types.scalarByName(symbol.detail);
}

std::optional<ModuleValue> ModuleEvaluator::evaluateSignatureName(const NameExpr *name) {
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

const Type *ModuleEvaluator::asType(const ModuleValue &value, SourceRange range, bool report) {
  if (value.kind() == ModuleValue::Kind::Type)
    return value.typeValue();
  if (value.kind() == ModuleValue::Kind::Symbol) {
    const Symbol &symbol = *value.symbolValue();
    if (symbol.kind == Symbol::Kind::DType)
      return dtypeOf(symbol);
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

std::optional<ModuleValue> ModuleEvaluator::evaluateArrayType(const ModuleValue &base,
                                                              const SubscriptExpr *sub) {
  const Type *dtype = asType(base, sub->value->range(), /*report=*/false);
  if (!dtype || dtype == types.none()) {
    diags.report(DiagID::err_module_expression_unsupported, sub->range());
    return std::nullopt;
  }
  if (base.kind() == ModuleValue::Kind::Symbol && isNumpySymbol(*base.symbolValue())) {
    diags.report(DiagID::err_numpy_type_in_signature, sub->value->range(),
                 {base.symbolValue()->displayName(), dtype->str()});
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

std::optional<ModuleValue> ModuleEvaluator::callTypeMaker(const Symbol &symbol,
                                                          const CallExpr *call,
                                                          llvm::ArrayRef<ModuleValue> args) {
  llvm::StringRef maker = symbol.detail;
  if (maker == "none")
    return callType(types.none(), call, args);
  if (maker == "UniTuple")
    return makeUniTupleType(symbol, call, args);
  if (maker == "NamedTuple")
    return makeNamedTupleType(symbol, call, args);
  if (maker == "EnumMember" || maker == "IntEnumMember")
    return makeEnumMemberType(symbol, call, args);
  if (maker == "Tuple")
    return makeTupleType(symbol, call, args);
  if (maker == "CPointer")
    return makePointerType(symbol, call, args);
  if (maker == "NPDatetime" || maker == "NPTimedelta")
    return makeDateTimeType(symbol, call, args);
  if (maker == "CharSeq" || maker == "UnicodeCharSeq")
    return makeCharSeqType(symbol, call, args);
  if (maker == "Array")
    return makeArrayType(symbol, call, args);
  if (maker == "from_dtype")
    return makeNumbaTypeOfDtype(symbol, call, args);
  diags.report(DiagID::err_module_expression_unsupported, call->range());
  return std::nullopt;
}

std::optional<ModuleValue> ModuleEvaluator::makeUniTupleType(const Symbol &symbol,
                                                             const CallExpr *call,
                                                             llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 2))
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

std::optional<ModuleValue> ModuleEvaluator::makeNamedTupleType(const Symbol &symbol,
                                                               const CallExpr *call,
                                                               llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 3))
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

std::optional<ModuleValue> ModuleEvaluator::makeEnumMemberType(const Symbol &symbol,
                                                               const CallExpr *call,
                                                               llvm::ArrayRef<ModuleValue> args) {
  llvm::StringRef maker = symbol.detail;
  if (!requireArgs(symbol, call, args, 2))
    return std::nullopt;
  std::optional<ConstantValue> className = constantOf(call->args[0], args[0]);
  const Type *value = asType(args[1], call->args[1]->range());
  if (!className || !value)
    return std::nullopt;
  if (className->kind() != ConstantValue::Kind::String) {
    diags.report(DiagID::err_enum_member_signature, call->range(), {maker.str()});
    return std::nullopt;
  }
  return ModuleValue::type(
      types.enumMember(className->stringValue(), types.unliteral(value), maker == "IntEnumMember"));
}

std::optional<ModuleValue> ModuleEvaluator::makeTupleType(const Symbol &symbol,
                                                          const CallExpr *call,
                                                          llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 1))
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

std::optional<ModuleValue> ModuleEvaluator::makePointerType(const Symbol &symbol,
                                                            const CallExpr *call,
                                                            llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 1))
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

std::optional<ModuleValue> ModuleEvaluator::makeDateTimeType(const Symbol &symbol,
                                                             const CallExpr *call,
                                                             llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 1))
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
  return ModuleValue::type(symbol.detail == "NPDatetime" ? types.datetime(*unit)
                                                         : types.timedelta(*unit));
}

std::optional<ModuleValue> ModuleEvaluator::makeCharSeqType(const Symbol &symbol,
                                                            const CallExpr *call,
                                                            llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 1))
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
                                              symbol.detail == "UnicodeCharSeq"));
}

std::optional<ModuleValue> ModuleEvaluator::makeArrayType(const Symbol &symbol,
                                                          const CallExpr *call,
                                                          llvm::ArrayRef<ModuleValue> args) {
  if (!requireArgs(symbol, call, args, 3))
    return std::nullopt;
  const Type *dtype = asType(args[0], call->args[0]->range());
  std::optional<ConstantValue> ndim = constantOf(call->args[1], args[1]);
  std::optional<ConstantValue> layout = constantOf(call->args[2], args[2]);
  if (!dtype || !ndim || !layout)
    return std::nullopt;
  llvm::StringRef layoutText =
      layout->kind() == ConstantValue::Kind::String ? llvm::StringRef(layout->stringValue()) : "";
  if (ndim->kind() != ConstantValue::Kind::Int || ndim->intValue128() < 0 ||
      ndim->intValue128() > 32 || (layoutText != "C" && layoutText != "F" && layoutText != "A")) {
    diags.report(DiagID::err_module_expression_unsupported, call->range());
    return std::nullopt;
  }
  ArrayLayout arrayLayout = layoutText == "C"   ? ArrayLayout::C
                            : layoutText == "F" ? ArrayLayout::F
                                                : ArrayLayout::A;
  return ModuleValue::type(
      types.array(dtype, static_cast<unsigned>(ndim->intValue128()), arrayLayout));
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
