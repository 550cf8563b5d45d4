//===- frontend/resolve/module_scope_host_values.cpp ----------------------===//

#include "frontend/resolve/module_evaluator.h"
#include "frontend/resolve/module_scope.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/BLAKE3.h>

#include <array>
#include <cstring>

namespace kiln {

using namespace ast;

namespace {

/// A scalar of `type` from its bytes, as NumPy holds it.
std::optional<ConstantValue> scalarFromBytes(const Type *type, llvm::StringRef bytes) {
  auto read = [&](auto value) -> std::optional<decltype(value)> {
    if (bytes.size() != sizeof(value))
      return std::nullopt;
    std::memcpy(&value, bytes.data(), sizeof(value));
    return value;
  };
  if (llvm::isa<BooleanType>(type)) {
    std::optional<uint8_t> value = read(uint8_t());
    return value ? std::optional(ConstantValue::boolean(*value != 0)) : std::nullopt;
  }
  if (const auto *integer = llvm::dyn_cast<IntegerType>(type)) {
    unsigned width = integer->bitwidth();
    if (width > 64 || bytes.size() != width / 8)
      return std::nullopt;
    uint64_t raw = 0;
    // The host's byte order (little-endian wherever Kiln runs), as NumPy
    // gave the bytes.
    std::memcpy(&raw, bytes.data(), bytes.size());
    if (width < 64 && integer->signedness() && (raw >> (width - 1)) & 1)
      raw |= ~uint64_t(0) << width;
    std::optional<Int128> value = integer->signedness() ? Int128(int64_t(raw)) : Int128(raw);
    return value ? std::optional(ConstantValue::integer(*value)) : std::nullopt;
  }
  if (const auto *real = llvm::dyn_cast<FloatType>(type)) {
    std::optional<double> value;
    if (real->bitwidth() == 64)
      value = read(double());
    else if (real->bitwidth() == 32)
      value = read(float());
    else if (real->bitwidth() == 16 && !real->isBFloat16())
      value = read(_Float16());
    return value ? std::optional(ConstantValue::floating(*value)) : std::nullopt;
  }
  if (const auto *complex = llvm::dyn_cast<ComplexType>(type)) {
    if (complex->bitwidth() == 128) {
      std::optional<std::array<double, 2>> parts = read(std::array<double, 2>());
      return parts ? std::optional(ConstantValue::complex((*parts)[0], (*parts)[1])) : std::nullopt;
    }
    std::optional<std::array<float, 2>> parts = read(std::array<float, 2>());
    return parts ? std::optional(ConstantValue::complex((*parts)[0], (*parts)[1])) : std::nullopt;
  }
  return std::nullopt;
}

/// The scalar type of a NumPy dtype name ("float32", "bool").
const Type *dtypeNamed(llvm::StringRef name, TypeContext &types) {
  return name == "bool" ? types.boolean() : types.scalarByName(name);
}

/// A host value as a constant: numbers, NumPy scalars and tuples of them.
std::optional<ConstantValue> constantOf(const HostValue &value, TypeContext &types) {
  switch (value.kind) {
  case HostValue::Kind::Int:
    return scalarFromBytes(types.int64(), *value.data);
  case HostValue::Kind::Float:
    return scalarFromBytes(types.float64(), *value.data);
  case HostValue::Kind::Bool:
    return scalarFromBytes(types.boolean(), *value.data);
  case HostValue::Kind::Complex:
    return scalarFromBytes(types.complex(128), *value.data);
  case HostValue::Kind::Scalar: {
    const Type *type = dtypeNamed(value.dtype, types);
    std::optional<ConstantValue> scalar = type ? scalarFromBytes(type, *value.data) : std::nullopt;
    return scalar ? std::optional(ConstantValue::numpyScalar(*scalar, type)) : std::nullopt;
  }
  case HostValue::Kind::Tuple: {
    std::vector<ConstantValue> elements;
    for (const HostValue &item : value.items) {
      std::optional<ConstantValue> element = constantOf(item, types);
      if (!element)
        return std::nullopt;
      elements.push_back(std::move(*element));
    }
    if (!value.text.empty())
      return ConstantValue::namedTuple(std::move(elements), value.text, value.memberNames);
    return ConstantValue::tuple(std::move(elements));
  }
  case HostValue::Kind::Array:
  case HostValue::Kind::Function:
  case HostValue::Kind::String:
    return ConstantValue::string(value.text);
  case HostValue::Kind::Closure:
  case HostValue::Kind::Symbol:
  case HostValue::Kind::Enum:
  case HostValue::Kind::DeviceArray:
  case HostValue::Kind::Set:
  case HostValue::Kind::Module:
  case HostValue::Kind::Namespace:
  case HostValue::Kind::RecordType:
  case HostValue::Kind::NamedTupleClass:
  case HostValue::Kind::Overload:
  case HostValue::Kind::DeclaredDevice:
    break;
  }
  return std::nullopt;
}

/// The record type of a record array or a dtype host code made: fields of
/// numbers, or arrays of them, at their offsets, as Numba types the
/// structured dtype.
const RecordType *recordOf(const HostValue &value, TypeContext &types) {
  std::vector<RecordType::Field> fields;
  unsigned alignment = 1;
  for (const HostValue::RecordField &field : value.recordFields) {
    const Type *type = dtypeNamed(field.dtype, types);
    std::optional<uint64_t> bytes = type ? scalarByteSize(type) : std::nullopt;
    for (uint64_t extent : field.shape)
      if (bytes)
        *bytes *= extent;
    if (!bytes || field.offset + *bytes > value.recordSize)
      return nullptr;
    alignment = std::max(alignment, static_cast<unsigned>(itemAlignment(type)));
    fields.push_back({field.name, type, field.offset, field.shape});
  }
  return types.record(std::move(fields), value.recordSize, value.recordAligned ? alignment : 1,
                      value.recordAligned);
}

/// A NumPy array of numbers, booleans or records of them whose data fits
/// its shape.
std::shared_ptr<const ConstantArray> arrayOf(const HostValue &value, TypeContext &types) {
  const Type *element =
      value.dtype == "record" ? recordOf(value, types) : dtypeNamed(value.dtype, types);
  std::optional<uint64_t> itemBytes;
  if (const auto *record = llvm::dyn_cast_or_null<RecordType>(element))
    itemBytes = record->byteSize();
  else if (element)
    itemBytes = scalarByteSize(element);
  if (!itemBytes)
    return nullptr;
  uint64_t bytes = *itemBytes;
  for (uint64_t extent : value.shape)
    if (__builtin_mul_overflow(bytes, extent, &bytes))
      return nullptr;
  if (bytes != value.data->size())
    return nullptr;
  llvm::BLAKE3 blake3;
  blake3.update(*value.data);
  return std::make_shared<const ConstantArray>(
      ConstantArray{element,
                    value.shape,
                    value.fortranOrder ? ArrayLayout::F : ArrayLayout::C,
                    value.data,
                    llvm::toHex(blake3.final(), /*LowerCase=*/true),
                    std::nullopt,
                    {}});
}

/// A device array of numbers the running process holds, captured where it
/// is; its layout is Numba's typeof's: C or F where its strides are
/// contiguous that way, else A.
std::shared_ptr<const ConstantArray> deviceArrayOf(const HostValue &value, TypeContext &types) {
  const Type *element = dtypeNamed(value.dtype, types);
  std::optional<uint64_t> itemBytes = element ? scalarByteSize(element) : std::nullopt;
  if (!itemBytes || !value.address)
    return nullptr;
  auto contiguous = [&](bool fortran) {
    int64_t expected = int64_t(*itemBytes);
    size_t rank = value.shape.size();
    for (size_t k = 0; k < rank; ++k) {
      size_t d = fortran ? k : rank - 1 - k;
      if (value.shape[d] != 1 && value.strides[d] != expected)
        return false;
      expected *= int64_t(value.shape[d]);
    }
    return true;
  };
  ArrayLayout layout = contiguous(false)  ? ArrayLayout::C
                       : contiguous(true) ? ArrayLayout::F
                                          : ArrayLayout::A;
  return std::make_shared<const ConstantArray>(
      ConstantArray{element, value.shape, layout, nullptr, "", value.address, value.strides});
}

} // namespace

/// A function host code declared with cuda.declare_device, where the
/// source cannot say what (a closure's `mul = cuda.declare_device(...,
/// link=path)`, its path computed when the test runs): the declaration as
/// the statement would make it. Its signature string is parsed as a file of
/// its own, which the diagnostics of a bad one name.
const FunctionDecl *ModuleScope::declaredDeviceFunction(const HostValue &value,
                                                        llvm::StringRef name) const {
  if (!evaluation)
    return nullptr;
  uint32_t signatureFile = evaluation->sources.addFile(
      name.str() + " (signature of cuda.declare_device)", value.signature);
  ModuleEvaluator evaluator(*this, evaluation->sources, evaluation->astContext, *types,
                            evaluation->diags);
  std::optional<Signature> signature =
      evaluator.signatureFromText(signatureFile, 0, static_cast<uint32_t>(value.signature.size()));
  if (!signature)
    return nullptr;
  if (!signature->returnType) {
    evaluation->diags.report(DiagID::err_declare_device_signature,
                             SourceRange(SourceLoc{signatureFile, 0}));
    return nullptr;
  }
  auto decl = std::make_unique<FunctionDecl>();
  decl->name = name.substr(name.rfind('.') + 1).str(); // npos + 1 is 0: the whole name
  decl->scope = this;
  decl->kind = FunctionDecl::Kind::External;
  decl->signatures = {std::move(*signature)};
  decl->externalSymbol = value.text;
  decl->externalCooperative = value.cooperative;
  decl->externalCAbi = value.cAbi;
  decl->options.link = value.linkFiles;
  hostDecls.push_back(std::move(decl));
  return hostDecls.back().get();
}

/// `numba.cuda.random.xoroshiro128p_next` (or kiln.cuda.random's): a
/// function of a kernel module of Kiln's prelude, as host code holds it (a
/// closure that imported it where it is defined); null for anything else.
const FunctionDecl *ModuleScope::preludeFunction(llvm::StringRef qualifiedName) const {
  auto [moduleName, name] = qualifiedName.rsplit('.');
  const Symbol *module = BuiltinSymbols::get().lookup(moduleName);
  if (!module || module->kind != Symbol::Kind::Module)
    return nullptr;
  return importedFunction(module->qualifiedName, name);
}

const ModuleValue *ModuleScope::hostValueOf(const ModuleValue &computed) const {
  if (!hostValues)
    return nullptr;
  std::pair<std::string, std::string> key{computed.hostFile(), computed.hostName()};
  auto found = fromHost.find(key);
  if (found != fromHost.end())
    return found->second.get();
  std::unique_ptr<ModuleValue> &slot = fromHost[key];
  if (const HostValue *value = hostValues->lookup(key.first, key.second))
    if (std::optional<ModuleValue> converted = moduleValueOf(*value, key.first, key.second))
      slot = std::make_unique<ModuleValue>(std::move(*converted));
  return slot.get();
}

std::optional<ModuleValue> ModuleScope::moduleValueOf(const HostValue &value, llvm::StringRef file,
                                                      llvm::StringRef name) const {
  switch (value.kind) {
  case HostValue::Kind::Function:
    if (const FunctionDecl *function = functionAt(value.functionFile, value.functionName))
      return ModuleValue::function(function);
    return std::nullopt;
  case HostValue::Kind::Closure:
    // Compiled under the global's own name, if the build added it.
    if (const FunctionDecl *function = functionAt(file, name))
      return ModuleValue::function(function);
    return std::nullopt;
  case HostValue::Kind::Symbol:
    if (const Symbol *symbol = BuiltinSymbols::get().lookup(value.text))
      return ModuleValue::symbol(symbol);
    if (const FunctionDecl *function = preludeFunction(value.text))
      return ModuleValue::function(function);
    return std::nullopt;
  case HostValue::Kind::Enum: {
    // An enum class another module defines: its members, as constants.
    EnumDefinition definition;
    definition.name = value.text;
    definition.isIntEnum = value.isIntEnum;
    for (size_t i = 0; i < value.items.size(); ++i)
      if (std::optional<ConstantValue> member = constantOf(value.items[i], *types))
        definition.members.push_back({value.memberNames[i], std::move(*member)});
    if (definition.members.size() != value.items.size())
      return std::nullopt;
    return ModuleValue::enumeration(std::make_shared<EnumDefinition>(std::move(definition)));
  }
  case HostValue::Kind::Namespace: {
    // Its attributes are what kernels may read of them; the others stay
    // unbound, and a kernel using one is told the attribute is missing.
    ModuleValue namespaceValue = ModuleValue::sourceModule(value.text, nullptr);
    for (size_t i = 0; i < value.items.size(); ++i)
      if (std::optional<ModuleValue> member =
              moduleValueOf(value.items[i], file, (name + "." + value.memberNames[i]).str()))
        namespaceValue = namespaceValue.withSubmodule(value.memberNames[i], std::move(*member));
    return namespaceValue;
  }
  case HostValue::Kind::Array:
    if (std::shared_ptr<const ConstantArray> array = arrayOf(value, *types))
      return ModuleValue::array(std::move(array));
    return std::nullopt;
  case HostValue::Kind::RecordType:
    if (const RecordType *record = recordOf(value, *types))
      return ModuleValue::type(record);
    return std::nullopt;
  case HostValue::Kind::NamedTupleClass:
    return ModuleValue::type(types->namedTupleClass(value.text, value.memberNames));
  case HostValue::Kind::Overload: {
    auto overloads = std::make_shared<OverloadSet>();
    overloads->name = value.text;
    overloads->file = file.str();
    overloads->key = value.functionName;
    overloads->source = hostValues;
    for (const HostValue::Implementation &implementation : value.resolved)
      if (const FunctionDecl *function = functionAt(implementation.file, implementation.function))
        overloads->implementations[implementation.argumentTypes] = function;
    return ModuleValue::overload(std::move(overloads));
  }
  case HostValue::Kind::DeclaredDevice:
    if (const FunctionDecl *declared = declaredDeviceFunction(value, name))
      return ModuleValue::function(declared);
    return std::nullopt;
  case HostValue::Kind::Module:
    if (const ModuleScope *module = loader ? loader->loadFile(value.functionFile) : nullptr)
      return ModuleValue::sourceModule(value.text, module);
    return std::nullopt;
  case HostValue::Kind::Set: {
    // What a decorator may take (a list of constants), not a kernel.
    std::vector<ModuleValue> items;
    for (const HostValue &item : value.items)
      if (std::optional<ConstantValue> constant = constantOf(item, *types))
        items.push_back(ModuleValue::constant(std::move(*constant)));
    if (items.size() != value.items.size())
      return std::nullopt;
    return ModuleValue::list(std::move(items));
  }
  case HostValue::Kind::DeviceArray:
    if (std::shared_ptr<const ConstantArray> array = deviceArrayOf(value, *types))
      return ModuleValue::array(std::move(array));
    if (!value.address)
      return ModuleValue::hostValue(
          "a device array, which a kernel captures by its address in the process that made "
          "it; a kernel built ahead of time cannot (pass the array as an argument instead)");
    return std::nullopt;
  default:
    if (std::optional<ConstantValue> constant = constantOf(value, *types))
      return ModuleValue::constant(std::move(*constant));
    return std::nullopt;
  }
}

} // namespace kiln
