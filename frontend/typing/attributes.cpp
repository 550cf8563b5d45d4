//===- frontend/typing/attributes.cpp - Typing of `value.name` ------------===//
//
// Attributes of modules and namespaces (cuda.threadIdx, math.pi), of
// cuda.threadIdx and friends (.x/.y/.z are int32), of arrays (shape,
// strides, size, ndim, T), of numbers (real, imag) and of records (fields).
//
//===----------------------------------------------------------------------===//

#include "frontend/typing/typing_rules.h"

#include <cmath>

namespace kiln::typing {

const Symbol *builtinOf(const Type *type) {
  const auto *entity = llvm::dyn_cast<EntityType>(type);
  if (!entity || entity->entityKindOf() != EntityType::EntityKind::Builtin)
    return nullptr;
  return static_cast<const Symbol *>(entity->entityPointer());
}

const FunctionDecl *functionOf(const Type *type) {
  const auto *entity = llvm::dyn_cast<EntityType>(type);
  if (!entity || (entity->entityKindOf() != EntityType::EntityKind::Function &&
                  entity->entityKindOf() != EntityType::EntityKind::Closure))
    return nullptr;
  return static_cast<const FunctionDecl *>(entity->entityPointer());
}

const TupleType *capturesOf(const Type *type) {
  const auto *entity = llvm::dyn_cast<EntityType>(type);
  if (!entity || entity->entityKindOf() != EntityType::EntityKind::Closure)
    return nullptr;
  return llvm::cast<TupleType>(entity->receiverType());
}

namespace {

Typing symbolValue(TypeContext &types, const Symbol &symbol) {
  switch (symbol.kind) {
  case Symbol::Kind::DType: {
    const Type *dtype = symbol.detail == "xoroshiro128p_type" ? types.xoroshiro128pState()
                                                              : types.scalarByName(symbol.detail);
    return Resolution::make(Resolution::Kind::CompileTime, types.numberClass(dtype));
  }
  case Symbol::Kind::Constant: {
    Resolution resolution;
    resolution.kind = Resolution::Kind::Constant;
    llvm::StringRef text = symbol.detail;
    if (text == "None") {
      resolution.constant = ConstantValue::none();
      resolution.result = types.none();
    } else if (text.ends_with("j")) {
      double imag = text == "infj" ? INFINITY : NAN;
      resolution.constant = ConstantValue::complex(0.0, imag);
      resolution.result = types.complex(128);
    } else {
      double value = text == "inf"   ? INFINITY
                     : text == "nan" ? NAN
                                     : std::strtod(text.str().c_str(), nullptr);
      resolution.constant = ConstantValue::floating(value);
      resolution.result = types.float64();
    }
    return resolution;
  }
  default:
    if (symbol.is(BuiltinId::CudaLaneid) || symbol.is(BuiltinId::CudaWarpsize)) {
      // Attributes with a run-time value, not functions.
      Resolution resolution = Resolution::make(Resolution::Kind::Builtin, types.int32());
      resolution.builtin = symbol.id;
      return resolution;
    }
    return Resolution::make(
        Resolution::Kind::CompileTime,
        types.entity(EntityType::EntityKind::Builtin, &symbol, symbol.displayName()));
  }
}

Typing arrayAttribute(TypeContext &types, const ArrayType *array, llvm::StringRef name) {
  auto attribute = [&](const Type *result) {
    Resolution resolution = Resolution::make(Resolution::Kind::ArrayAttribute, result);
    resolution.detail = name.str();
    return resolution;
  };
  if (name == "shape" || name == "strides")
    return attribute(types.tuple(std::vector<const Type *>(array->rank(), types.int64())));
  if (name == "size" || name == "nbytes")
    return attribute(types.int64());
  if (name == "ndim" || name == "itemsize") {
    Resolution resolution = Resolution::make(Resolution::Kind::Constant, types.int64());
    unsigned itemsize = 0;
    if (const auto *record = llvm::dyn_cast<RecordType>(array->elementType()))
      itemsize = record->byteSize();
    else if (const auto *i = llvm::dyn_cast<IntegerType>(array->elementType()))
      itemsize = i->bitwidth() / 8;
    else if (const auto *f = llvm::dyn_cast<FloatType>(array->elementType()))
      itemsize = f->bitwidth() / 8;
    else if (const auto *c = llvm::dyn_cast<ComplexType>(array->elementType()))
      itemsize = c->bitwidth() / 8;
    else
      itemsize = 1;
    resolution.constant = ConstantValue::integer(name == "ndim" ? array->rank() : itemsize);
    return resolution;
  }
  if (name == "dtype")
    return Resolution::make(Resolution::Kind::CompileTime, types.numberClass(array->elementType()));
  if ((name == "real" || name == "imag") && llvm::isa<ComplexType>(array->elementType())) {
    // A view of the parts: floats with the complex array's strides.
    const Type *part = llvm::cast<ComplexType>(array->elementType())->elementType();
    Resolution resolution =
        Resolution::make(Resolution::Kind::ArrayView,
                         types.array(part, array->rank(), ArrayLayout::A, array->isReadonly()));
    resolution.detail = name.str();
    return resolution;
  }
  if (name == "real" && array->elementType()->isNumber()) {
    // The real part of a real array is the array itself.
    Resolution resolution = Resolution::make(Resolution::Kind::ArrayView, array);
    resolution.detail = "self";
    return resolution;
  }
  if (name == "reshape" || name == "view" || name == "copy")
    return Resolution::make(Resolution::Kind::CompileTime, types.method(array, name));
  if (name == "T") {
    ArrayLayout layout = array->arrayLayout() == ArrayLayout::C   ? ArrayLayout::F
                         : array->arrayLayout() == ArrayLayout::F ? ArrayLayout::C
                                                                  : ArrayLayout::A;
    if (array->rank() <= 1)
      layout = array->arrayLayout();
    Resolution resolution = Resolution::make(Resolution::Kind::ArrayView,
                                             types.arrayLike(array, array->rank(), layout));
    resolution.detail = "T";
    return resolution;
  }
  return Typing::error(DiagID::err_no_attribute, {array->str(), name.str()});
}

} // namespace

Typing getAttribute(TypeContext &types, const Type *object, llvm::StringRef name) {
  // An enum member's value (Numba's EnumAttribute); its name is a string,
  // which kernels have no run-time value for.
  if (const auto *member = llvm::dyn_cast<EnumMemberType>(object)) {
    if (name == "value")
      return Resolution::make(Resolution::Kind::Cast, member->valueType());
    return Typing::error(DiagID::err_no_attribute, {object->str(), name.str()});
  }
  if (const Symbol *symbol = builtinOf(object)) {
    if (symbol->kind == Symbol::Kind::Module) {
      if (const Symbol *member = BuiltinSymbols::get().member(*symbol, name))
        return symbolValue(types, *member);
      return Typing::error(DiagID::err_unknown_module_member, {symbol->displayName(), name.str()});
    }
    if (symbol->kind == Symbol::Kind::Handle)
      if (const Symbol *method = BuiltinSymbols::get().member(*symbol, name))
        return symbolValue(types, *method);
    if (symbol->kind == Symbol::Kind::Dim3) {
      if (name == "x" || name == "y" || name == "z") {
        Resolution resolution = Resolution::make(Resolution::Kind::Builtin, types.int32());
        resolution.builtin = symbol->id;
        resolution.detail = name.str();
        return resolution;
      }
    }
    return Typing::error(DiagID::err_no_attribute, {"'" + symbol->displayName() + "'", name.str()});
  }
  if (const auto *array = llvm::dyn_cast<ArrayType>(object))
    return arrayAttribute(types, array, name);
  if (const auto *record = llvm::dyn_cast<RecordType>(object)) {
    for (const RecordType::Field &field : record->recordFields())
      if (field.name == name) {
        // A nested array field is a C array viewing the record's bytes.
        const Type *type =
            field.isNestedArray()
                ? types.array(field.type, static_cast<unsigned>(field.shape.size()), ArrayLayout::C)
                : field.type;
        Resolution resolution = Resolution::make(Resolution::Kind::RecordField, type);
        resolution.detail = field.name;
        return resolution;
      }
    return Typing::error(DiagID::err_no_attribute, {record->str(), name.str()});
  }
  if (const auto *vector = llvm::dyn_cast<VectorType>(object)) {
    size_t index = llvm::StringRef("xyzw").find(name);
    if (name.size() == 1 && index < vector->size()) {
      Resolution resolution = Resolution::make(Resolution::Kind::TupleItem, vector->elementType());
      resolution.index = static_cast<unsigned>(index);
      return resolution;
    }
  }
  if (const auto *named = llvm::dyn_cast<NamedTupleType>(object))
    if (std::optional<size_t> index = named->fieldIndex(name)) {
      Resolution resolution =
          Resolution::make(Resolution::Kind::TupleItem, named->elementTypes()[*index]);
      resolution.index = static_cast<unsigned>(*index);
      return resolution;
    }
  if (object->isNumber()) { // Numba's bool is not a Number: no .real, .imag
    const Type *plain = types.unliteral(object);
    if (name == "real" || name == "imag") {
      const Type *part = plain;
      if (const auto *complex = llvm::dyn_cast<ComplexType>(plain))
        part = complex->elementType();
      Resolution resolution = Resolution::make(Resolution::Kind::Builtin, part);
      resolution.builtin = BuiltinId::PyComplex;
      resolution.detail = name.str();
      resolution.operandTypes = {plain};
      return resolution;
    }
    if (name == "conjugate")
      return Resolution::make(Resolution::Kind::CompileTime, types.method(plain, name));
    if (name == "bit_count" && llvm::isa<IntegerType>(plain))
      return Resolution::make(Resolution::Kind::CompileTime, types.method(plain, name));
  }
  return Typing::error(DiagID::err_no_attribute, {object->str(), name.str()});
}

std::vector<std::string> numbaTypeNames(const Type *type) {
  std::vector<std::string> names{type->str()};
  auto add = [&](std::initializer_list<const char *> classes) {
    names.insert(names.end(), classes.begin(), classes.end());
  };
  if (llvm::isa<ArrayType>(type))
    add({"Array", "Buffer", "ArrayCompatible"});
  else if (llvm::isa<IntegerType>(type))
    add({"Integer", "Number"});
  else if (llvm::isa<FloatType>(type) && !isBFloat16(type))
    add({"Float", "Number"});
  else if (llvm::isa<ComplexType>(type))
    add({"Complex", "Number"});
  else if (llvm::isa<BooleanType>(type))
    add({"Boolean"});
  else if (llvm::isa<RecordType>(type))
    add({"Record"});
  else if (const auto *named = llvm::dyn_cast<NamedTupleType>(type))
    add({named->isHomogeneous() ? "NamedUniTuple" : "NamedTuple", "BaseNamedTuple", "BaseTuple"});
  else if (const auto *tuple = llvm::dyn_cast<TupleType>(type))
    add({tuple->isHomogeneous() && tuple->size() ? "UniTuple" : "Tuple", "BaseAnonymousTuple",
         "BaseTuple"});
  else if (const auto *dateTime = llvm::dyn_cast<DateTimeType>(type))
    add({dateTime->isDatetime() ? "NPDatetime" : "NPTimedelta"});
  return names;
}

Typing setAttribute(TypeContext &types, const Type *object, llvm::StringRef name,
                    const Type *value) {
  if (const auto *record = llvm::dyn_cast<RecordType>(object)) {
    for (const RecordType::Field &field : record->recordFields())
      if (field.name == name) {
        Resolution resolution = Resolution::make(Resolution::Kind::RecordStore, types.none());
        resolution.detail = field.name;
        if (field.isNestedArray()) {
          // Assigning an array copies its elements, which must convert and
          // have the field's rank.
          const auto *source = llvm::dyn_cast<ArrayType>(value);
          if (!source || source->rank() != field.shape.size() ||
              !types.canConvert(source->elementType(), field.type))
            return Typing::error(DiagID::err_array_store, {value->str(), field.typeName()});
          resolution.operandTypes = {nullptr, nullptr};
          return resolution;
        }
        if (!types.canConvert(value, field.type))
          return Typing::error(DiagID::err_array_store, {value->str(), field.type->str()});
        resolution.operandTypes = {nullptr, field.type};
        return resolution;
      }
  }
  return Typing::error(DiagID::err_cannot_set_attribute, {object->str(), name.str()});
}

} // namespace kiln::typing
