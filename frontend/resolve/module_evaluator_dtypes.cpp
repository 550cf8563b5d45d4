//===- frontend/resolve/module_evaluator_dtypes.cpp -----------------------===//
//
// NumPy dtypes written at module level, as Numba-style modules define the
// records their kernels take: `np.dtype("f4")`, `np.dtype("datetime64[D]")`,
// `np.dtype([("x", np.float32), ("pos", "f8", 3)], align=True)`, and
// `numba.from_dtype(...)` of one, which is the Numba type a dtype stands for
// in signatures. A structured dtype is laid out as NumPy lays it out:
// packed, or each field at a multiple of its alignment and the whole padded
// to the largest (`align=True`, Numba's aligned Record).
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/module_evaluator.h"
#include "ir/datetime_units.h"

#include <llvm/Support/MathExtras.h>

namespace kiln {

using namespace ast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// What NumPy makes of Python's bool, int, float and complex as dtypes.
const Type *numpyTypeOfPythonType(const TypeContext &types, llvm::StringRef name) {
  if (name == "bool")
    return types.scalarByName("boolean");
  std::optional<llvm::StringRef> numba = numbaTypeForPythonType(name);
  return numba ? types.scalarByName(*numba) : nullptr;
}

} // namespace

const Type *ModuleEvaluator::dtypeNamed(llvm::StringRef spelled) const {
  llvm::StringRef name = spelled;
  // NumPy's byte-order marks: native ('=', and '<' on every machine Kiln
  // runs on) or not applicable ('|'); a big-endian dtype has no Numba type.
  if (name.starts_with(">"))
    return nullptr;
  if (!name.empty() && llvm::StringRef("<=|").contains(name.front()))
    name = name.drop_front();
  if (name.size() == 1)
    return types.scalarOfTypeCode(name.front());
  // Fixed-width strings: "S12" (bytes) and "U12" (unicode).
  if (name.size() > 1 && (name.front() == 'S' || name.front() == 'a' || name.front() == 'U')) {
    unsigned count = 0;
    if (name.drop_front().getAsInteger(10, count) || count == 0)
      return nullptr;
    return types.charSequence(count, name.front() == 'U');
  }
  // datetime64 and timedelta64 of a unit: "datetime64[D]", "M8[s]", "m8".
  for (auto [longName, code, isDateTime] :
       {std::tuple{"datetime64", "M8", true}, std::tuple{"timedelta64", "m8", false}}) {
    llvm::StringRef rest = name;
    if (!rest.consume_front(longName) && !rest.consume_front(code))
      continue;
    llvm::StringRef unitName;
    if (!rest.empty()) {
      if (!rest.consume_front("[") || !rest.consume_back("]"))
        return nullptr;
      unitName = rest;
    }
    std::optional<DateTimeUnit> unit = dateTimeUnitNamed(unitName);
    if (!unit)
      return nullptr;
    return isDateTime ? static_cast<const Type *>(types.datetime(*unit)) : types.timedelta(*unit);
  }
  if (const Type *type = numpyTypeOfPythonType(types, name))
    return type;
  return types.scalarByName(name);
}

const Type *ModuleEvaluator::dtypeOfValue(const ModuleValue &value, const Expr *spec) {
  if (value.kind() == ModuleValue::Kind::Constant &&
      value.constantValue().kind() == ConstantValue::Kind::String) {
    const Type *type = dtypeNamed(value.constantValue().stringValue());
    if (!type)
      diags.report(DiagID::err_bad_dtype, spec->range(), {value.constantValue().repr()});
    return type;
  }
  if (value.kind() == ModuleValue::Kind::Symbol &&
      value.symbolValue()->qualifiedName.starts_with("builtins."))
    if (const Type *type = numpyTypeOfPythonType(types, value.symbolValue()->name()))
      return type;
  const Type *type = asType(value, spec->range());
  if (type && !(type->isScalar() || isa<RecordType, CharSequenceType, DateTimeType>(type))) {
    diags.report(DiagID::err_bad_dtype, spec->range(), {type->str()});
    return nullptr;
  }
  return type;
}

std::optional<ModuleValue> ModuleEvaluator::makeStructuredDtype(const SequenceExpr *fieldList,
                                                                bool aligned) {
  auto unsupported = [&](const Expr *where) {
    diags.report(DiagID::err_bad_structured_dtype, where->range());
    return std::nullopt;
  };
  std::vector<RecordType::Field> fields;
  uint64_t offset = 0;
  uint64_t alignment = 1;
  for (const Expr *entry : fieldList->elements) {
    const auto *tuple = dyn_cast<SequenceExpr>(entry);
    if (!tuple || tuple->kind() != Expr::Kind::Tuple || tuple->elements.size() < 2 ||
        tuple->elements.size() > 3)
      return unsupported(entry);
    std::optional<ModuleValue> name = evaluate(tuple->elements[0]);
    if (!name)
      return std::nullopt;
    if (name->kind() != ModuleValue::Kind::Constant ||
        name->constantValue().kind() != ConstantValue::Kind::String)
      return unsupported(tuple->elements[0]);
    RecordType::Field field{name->constantValue().stringValue(), nullptr, 0, {}};
    if (llvm::any_of(fields, [&](const RecordType::Field &f) { return f.name == field.name; })) {
      diags.report(DiagID::err_duplicate_dtype_field, tuple->elements[0]->range(), {field.name});
      return std::nullopt;
    }
    std::optional<ModuleValue> type = evaluate(tuple->elements[1]);
    field.type = type ? dtypeOfValue(*type, tuple->elements[1]) : nullptr;
    if (!field.type)
      return std::nullopt;
    if (tuple->elements.size() == 3) {
      // ("pos", "f4", 3) or ("m", "f8", (2, 2)): a nested array of scalars.
      std::optional<ModuleValue> shape = evaluate(tuple->elements[2]);
      if (!shape)
        return std::nullopt;
      std::optional<ConstantValue> extents = constantOf(tuple->elements[2], *shape);
      if (!extents)
        return std::nullopt;
      std::vector<ConstantValue> each = extents->kind() == ConstantValue::Kind::Tuple
                                            ? extents->elements()
                                            : std::vector<ConstantValue>{*extents};
      for (const ConstantValue &extent : each) {
        if (extent.kind() != ConstantValue::Kind::Int || extent.intValue128() < 1 ||
            extent.intValue128() > (1 << 20))
          return unsupported(tuple->elements[2]);
        field.shape.push_back(static_cast<uint64_t>(extent.intValue128()));
      }
      if (field.shape.empty() || !field.type->isScalar())
        return unsupported(tuple->elements[2]);
    }
    uint64_t fieldAlignment = aligned ? itemAlignment(field.type) : 1;
    offset = llvm::alignTo(offset, fieldAlignment);
    field.offset = static_cast<unsigned>(offset);
    offset += field.byteSize();
    alignment = std::max(alignment, fieldAlignment);
    if (offset > (uint64_t(1) << 30))
      return unsupported(entry);
    fields.push_back(std::move(field));
  }
  if (fields.empty())
    return unsupported(fieldList);
  auto size = static_cast<unsigned>(llvm::alignTo(offset, alignment));
  return ModuleValue::type(
      types.record(std::move(fields), size, static_cast<unsigned>(alignment), aligned));
}

std::optional<ModuleValue> ModuleEvaluator::makeNumpyDtype(const CallExpr *call) {
  // np.dtype(spec, align=False): no other arguments change what kernels see.
  if (call->args.size() != 1) {
    diags.report(DiagID::err_wrong_argument_count, call->range(),
                 {"numpy.dtype", "1 argument", static_cast<unsigned>(call->args.size())});
    return std::nullopt;
  }
  bool aligned = false;
  for (const Keyword &keyword : call->keywords) {
    std::optional<ModuleValue> value =
        keyword.name == "align" ? evaluate(keyword.value) : std::nullopt;
    std::optional<ConstantValue> flag =
        value ? constantOf(keyword.value, *value) : std::optional<ConstantValue>();
    if (!flag || flag->kind() != ConstantValue::Kind::Bool) {
      diags.report(DiagID::err_bad_structured_dtype, keyword.value->range());
      return std::nullopt;
    }
    aligned = flag->truthy();
  }
  const Expr *spec = call->args[0];
  if (const auto *fieldList = dyn_cast<SequenceExpr>(spec);
      fieldList && fieldList->kind() == Expr::Kind::List)
    return makeStructuredDtype(fieldList, aligned);
  std::optional<ModuleValue> value = evaluate(spec);
  const Type *type = value ? dtypeOfValue(*value, spec) : nullptr;
  return type ? std::optional(ModuleValue::type(type)) : std::nullopt;
}

std::optional<ModuleValue> ModuleEvaluator::makeNumbaTypeOfDtype(const Symbol &symbol,
                                                                 const CallExpr *call,
                                                                 llvm::ArrayRef<ModuleValue> args) {
  // numba.from_dtype(d): the Numba type of a dtype, which Kiln's value of
  // the dtype already is.
  if (!requireArgs(symbol, call, args, 1))
    return std::nullopt;
  const Type *type = dtypeOfValue(args[0], call->args[0]);
  return type ? std::optional(ModuleValue::type(type)) : std::nullopt;
}

} // namespace kiln
