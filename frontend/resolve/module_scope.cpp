//===- frontend/resolve/module_scope.cpp - What a kernel module defines ---===//

#include "frontend/resolve/module_scope.h"

#include "frontend/parse/bound_names.h"
#include "frontend/parse/parser.h"
#include "frontend/resolve/constant_folding.h"
#include "frontend/resolve/module_evaluator.h"
#include "frontend/resolve/nested_functions.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/BLAKE3.h>

#include <array>
#include <cstring>

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Small value types
//===----------------------------------------------------------------------===//

std::string Signature::str() const {
  std::string text = returnType ? returnType->str() : "";
  text += "(";
  for (size_t i = 0; i < args.size(); ++i)
    text += (i ? ", " : "") + args[i]->str();
  return text + ")";
}

llvm::StringRef FunctionDecl::kindName() const {
  switch (kind) {
  case Kind::Kernel:
    return "kernel";
  case Kind::Device:
    return "device function";
  case Kind::Ufunc:
    return "ufunc";
  case Kind::Reduction:
    return "reduction";
  case Kind::External:
    return "external device function";
  }
  return "function";
}

ModuleValue ModuleValue::constant(ConstantValue value) {
  ModuleValue v(Kind::Constant);
  v.constantPart = std::make_shared<const ConstantValue>(std::move(value));
  return v;
}
ModuleValue ModuleValue::symbol(const Symbol *symbol) {
  ModuleValue v(Kind::Symbol);
  v.symbolPart = symbol;
  return v;
}
ModuleValue ModuleValue::function(const FunctionDecl *function) {
  ModuleValue v(Kind::Function);
  v.functionPart = function;
  return v;
}
ModuleValue ModuleValue::type(const Type *type) {
  ModuleValue v(Kind::Type);
  v.typePart = type;
  return v;
}
ModuleValue ModuleValue::signature(Signature signature) {
  ModuleValue v(Kind::Signature);
  v.signaturePart = std::make_shared<const Signature>(std::move(signature));
  return v;
}
ModuleValue ModuleValue::list(std::vector<ModuleValue> items) {
  ModuleValue v(Kind::List);
  v.listPart = std::move(items);
  return v;
}
ModuleValue ModuleValue::decorator(const Symbol *decorator, const CallExpr *call) {
  ModuleValue v(Kind::Decorator);
  v.symbolPart = decorator;
  v.callPart = call;
  return v;
}

ModuleValue ModuleValue::invalid(std::string importedModule) {
  ModuleValue v(Kind::Invalid);
  v.importPart = std::move(importedModule);
  return v;
}

ModuleValue ModuleValue::enumeration(std::shared_ptr<const EnumDefinition> definition) {
  ModuleValue v(Kind::Enum);
  v.enumPart = std::move(definition);
  return v;
}

const ConstantValue *EnumDefinition::member(llvm::StringRef memberName) const {
  for (const auto &[memberKey, value] : members)
    if (memberKey == memberName)
      return &value;
  return nullptr;
}

ModuleValue ModuleValue::hostValue(std::string description) {
  ModuleValue v(Kind::Invalid);
  v.hostPart = std::move(description);
  return v;
}

ModuleValue ModuleValue::computedAtImport(std::string file, std::string name,
                                          std::string description) {
  ModuleValue v = hostValue(std::move(description));
  v.hostFilePart = std::move(file);
  v.hostNamePart = std::move(name);
  return v;
}

ModuleValue ModuleValue::array(std::shared_ptr<const ConstantArray> array) {
  ModuleValue v(Kind::Array);
  v.arrayPart = std::move(array);
  return v;
}

ModuleValue ModuleValue::overload(std::shared_ptr<const OverloadSet> overloads) {
  ModuleValue v(Kind::Overload);
  v.overloadPart = std::move(overloads);
  return v;
}

ModuleValue ModuleValue::sourceModule(std::string name, const ModuleScope *scope) {
  ModuleValue v(Kind::Module);
  v.importPart = std::move(name);
  v.modulePart = scope;
  return v;
}

const ModuleValue *ModuleValue::member(llvm::StringRef name) const {
  if (submodulesPart) {
    auto found = submodulesPart->find(name.str());
    if (found != submodulesPart->end())
      return &found->second;
  }
  return modulePart ? modulePart->member(name) : nullptr;
}

ModuleValue ModuleValue::withSubmodule(llvm::StringRef name, ModuleValue submodule) const {
  ModuleValue result = *this;
  auto submodules = submodulesPart
                        ? std::make_shared<std::map<std::string, ModuleValue>>(*submodulesPart)
                        : std::make_shared<std::map<std::string, ModuleValue>>();
  submodules->insert_or_assign(name.str(), std::move(submodule));
  result.submodulesPart = std::move(submodules);
  return result;
}

std::string ModuleValue::describe() const {
  switch (valueKind) {
  case Kind::Constant:
    return "constant " + constantPart->repr();
  case Kind::Symbol:
    switch (symbolPart->kind) {
    case Symbol::Kind::Module:
      return "module '" + symbolPart->displayName() + "'";
    case Symbol::Kind::DType:
      return "type '" + symbolPart->displayName() + "'";
    default:
      return "'" + symbolPart->displayName() + "'";
    }
  case Kind::Function:
    return std::string(functionPart->kindName()) + " '" + functionPart->name + "'";
  case Kind::Type:
    return "type " + typePart->str();
  case Kind::Signature:
    return "signature " + signaturePart->str();
  case Kind::List:
    return "a list";
  case Kind::Decorator:
    return "decorator '" + symbolPart->displayName() + "'";
  case Kind::Enum: {
    std::string text = "enum '" + enumPart->name + "' (";
    for (size_t i = 0; i < enumPart->members.size(); ++i)
      text +=
          (i ? ", " : "") + enumPart->members[i].first + "=" + enumPart->members[i].second.repr();
    return text + ")";
  }
  case Kind::Array: {
    // The elements' hash, so that a semantic hash changes with the data; a
    // device array's address and strides, the code depending on them.
    std::string text = std::string(arrayPart->address ? "device array " : "readonly array ") +
                       arrayPart->elementType->str() + " " + layoutName(arrayPart->layout).str() +
                       " (";
    for (size_t i = 0; i < arrayPart->shape.size(); ++i)
      text += (i ? ", " : "") + std::to_string(arrayPart->shape[i]);
    if (arrayPart->address) {
      text += ") strides (";
      for (size_t i = 0; i < arrayPart->strides.size(); ++i)
        text += (i ? ", " : "") + std::to_string(arrayPart->strides[i]);
      return text + ") at " + std::to_string(*arrayPart->address);
    }
    return text + ") blake3:" + arrayPart->digest;
  }
  case Kind::Module:
    return "module '" + importPart + "'";
  case Kind::Overload: {
    // The implementations resolved, so that a semantic hash changes with them.
    std::string text = "overloaded function '" + overloadPart->name + "' (";
    for (const auto &[argumentTypes, implementation] : overloadPart->implementations)
      text += argumentTypes + " -> " + implementation->name + "; ";
    return text + ")";
  }
  case Kind::Invalid:
    if (!hostPart.empty())
      return hostPart;
    return importPart.empty() ? "an invalid definition" : "module '" + importPart + "'";
  }
  return "value";
}

//===----------------------------------------------------------------------===//
// ModuleScope
//===----------------------------------------------------------------------===//

const ModuleValue *ModuleScope::lookup(llvm::StringRef name) const {
  auto it = bindings.find(name);
  if (it != bindings.end()) {
    if (it->second.isComputedAtImport())
      if (const ModuleValue *given = hostValueOf(it->second))
        return given;
    return &it->second;
  }
  if (parent)
    return parent->lookup(name);
  // See [Note: host values]: a global defined where the source does not say.
  if (hostValues && !canonicalPath.empty())
    if (const ModuleValue *given =
            hostValueOf(ModuleValue::computedAtImport(canonicalPath, name.str())))
      return given;
  auto builtin = pythonBuiltins.find(name);
  if (builtin != pythonBuiltins.end())
    return &builtin->second;
  return nullptr;
}

const ModuleValue *ModuleScope::member(llvm::StringRef name) const {
  const ModuleValue *value = lookup(name);
  auto builtin = pythonBuiltins.find(name);
  bool isBuiltin = builtin != pythonBuiltins.end() && &builtin->second == value;
  return isBuiltin ? nullptr : value;
}

const ModuleValue *ModuleScope::lookupPath(llvm::StringRef dottedPath) const {
  auto [first, rest] = dottedPath.split('.');
  const ModuleValue *value = lookup(first);
  while (value && !rest.empty()) {
    auto [name, tail] = rest.split('.');
    value = value->kind() == ModuleValue::Kind::Module ? value->member(name) : nullptr;
    rest = tail;
  }
  return value;
}

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

const FunctionDecl *ModuleScope::functionAt(llvm::StringRef file, llvm::StringRef name) const {
  const ModuleScope *module = this;
  while (module->parent)
    module = module->parent;
  // The module itself, or a source module it may call into.
  if (file == module->canonicalPath)
    return module->function(name);
  const ModuleScope *other = loader ? loader->loadFile(file) : nullptr;
  return other ? other->function(name) : nullptr;
}

SourceRange ModuleScope::bindingRange(llvm::StringRef name) const {
  return bindingRanges.lookup(name);
}

const FunctionDecl *ModuleScope::importedFunction(llvm::StringRef moduleName,
                                                  llvm::StringRef name) const {
  if (!loader)
    return nullptr;
  const ModuleScope *module = loader->load(moduleName);
  return module ? module->function(name) : nullptr;
}

const ModuleValue *ModuleScope::importedEnum(llvm::StringRef moduleName,
                                             llvm::StringRef name) const {
  const ModuleScope *module = loader ? loader->load(moduleName) : nullptr;
  const ModuleValue *value = module ? module->member(name) : nullptr;
  return value && value->kind() == ModuleValue::Kind::Enum ? value : nullptr;
}

const OverloadSet *ModuleScope::overloadedMethod(llvm::ArrayRef<std::string> receiverNames,
                                                 llvm::StringRef method) const {
  if (!hostValues)
    return nullptr;
  for (const std::string &receiver : receiverNames) {
    std::string name = receiver + "." + method.str();
    auto found = methodsFromHost.find(name);
    if (found == methodsFromHost.end()) {
      std::unique_ptr<ModuleValue> &slot = methodsFromHost[name];
      if (const HostValue *value = hostValues->lookupMethod(receiver, method))
        if (std::optional<ModuleValue> converted = moduleValueOf(*value, methodOverloadsKey, name))
          slot = std::make_unique<ModuleValue>(std::move(*converted));
      found = methodsFromHost.find(name);
    }
    if (found->second && found->second->kind() == ModuleValue::Kind::Overload)
      return &found->second->overloadValue();
  }
  return nullptr;
}

const FunctionDecl *ModuleScope::function(llvm::StringRef name) const {
  for (const auto &decl : decls)
    if (decl->name == name)
      return decl.get();
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Building the scope
//===----------------------------------------------------------------------===//

class ModuleScopeBuilder {
public:
  ModuleScopeBuilder(ModuleScope &scope, SourceManager &sources, AstContext &astContext,
                     TypeContext &types, DiagnosticEngine &diags, bool moduleStaysPython,
                     const PythonModuleContext &python)
      : scope(scope), sources(sources), astContext(astContext), diags(diags), types(types),
        evaluator(scope, sources, astContext, types, diags), hostDiags(sources),
        hostEvaluator(scope, sources, astContext, types, hostDiags),
        moduleStaysPython(moduleStaysPython), hostValues(python.hostValues),
        decoratorCalls(python.decoratorCalls), onlyFunctions(python.onlyFunctions) {
    if (moduleStaysPython)
      modulePath = scope.canonicalPath = canonicalModulePath(sources.path(scope.fileId));
  }

  void run(const Module &module, llvm::ArrayRef<ExternalSignature> externalSignatures,
           llvm::ArrayRef<ClosureRequest> closures);

private:
  void bind(llvm::StringRef name, ModuleValue value, SourceRange range) {
    ModuleScope &target = bindingTarget ? *bindingTarget : scope;
    target.bindings.insert_or_assign(name, std::move(value));
    target.bindingRanges[name] = range;
  }
  void handleImport(const ImportStmt *import);
  void handleImportFrom(const ImportFromStmt *import);
  bool bindSourceImport(const ImportAlias &alias);
  bool bindSourceImports(const ImportFromStmt *import);
  void handleClassDef(const ClassDefStmt *cls);
  std::optional<EnumDefinition> enumDefinition(const ClassDefStmt *cls);
  const Symbol *userException(const ClassDefStmt *cls);
  /// Whether `expr` names `enum.<name>` (imported either way).
  bool namesEnumModuleMember(const Expr *expr, llvm::StringRef name);
  void handleAssign(const Stmt *stmt, const Expr *target, const Expr *value);
  /// A decorated function: of the module, or, given `closure` (the scope of
  /// its free variables), a closure the build calls `closureName`.
  void handleFunctionOrDefer(const FunctionDefStmt *def, const ModuleScope *closure = nullptr,
                             llvm::StringRef closureName = {});
  void handleFunction(const FunctionDefStmt *def, const ModuleScope *closure = nullptr,
                      llvm::StringRef closureName = "");
  /// The closure a ClosureRequest asks for, as a function of the module.
  void addClosure(const Module &module, const ClosureRequest &request);
  /// The closure the module global `name` is, by what host values say of
  /// it; whether the module has a function of that name now.
  bool addGlobalClosure(const Module &module, llvm::StringRef name);
  /// The function whose first line is `line`: defined inside another, or
  /// at the top level (a function jitted more than once in different ways).
  /// The function definition whose first line is `line`, in `body` or
  /// nested in it; with `imports`, also the import statements of the
  /// functions it is nested in, outermost first.
  const FunctionDefStmt *definitionAt(llvm::ArrayRef<Stmt *> body, uint32_t line,
                                      std::vector<const Stmt *> *imports = nullptr) const;
  /// Binds in `closure` what the imports of its enclosing functions bind
  /// (`from numba import cuda` or `import numba` inside a test function),
  /// which its decorators and body may name.
  void bindEnclosingImports(ModuleScope &closure, llvm::ArrayRef<const Stmt *> imports);
  /// Where bind() binds: the module's scope, or a closure's.
  ModuleScope *bindingTarget = nullptr;
  /// The `jit(...)` call host code applied to the function the build calls
  /// `name`, parsed; null if there is none (or it does not parse, reported).
  const CallExpr *calledDecorator(llvm::StringRef name);
  std::string unknownDecoratorName(const Expr *decorator) const;
  /// Whether `decorator` (`cuda.jit`, `cuda.jit(...)`, `vectorize([...])`)
  /// names one of Kiln's decorators; its arguments are not looked at.
  bool namesKilnDecorator(const Expr *decorator);
  bool readJitDecorator(FunctionDecl &decl, const CallExpr *call, bool isCudaJit);
  /// Checks `decl`'s parameters (positional, `*args` last for device
  /// functions, defaults only for those) and reads their defaults.
  bool readParameters(FunctionDecl &decl);
  /// A decorator option's value. One host code computes at import
  /// (`fastmath=config.FLAGS`, where config builds FLAGS) is read from the
  /// running module: a module's configuration holds still after its import.
  std::optional<ModuleValue> evaluateOption(const Expr *option) {
    HostValueSource *before = scope.hostValues;
    if (moduleStaysPython)
      scope.hostValues = hostValues;
    std::optional<ModuleValue> value = activeEvaluator->evaluate(option);
    scope.hostValues = before;
    return value;
  }
  /// A scope for functions the module defines inside others or in classes:
  /// they see the module's globals (and what the caller binds besides).
  std::unique_ptr<ModuleScope> nestedScope() const {
    auto nested = std::unique_ptr<ModuleScope>(new ModuleScope());
    nested->fileId = scope.fileId;
    nested->loader = scope.loader;
    nested->types = &types;
    nested->parent = &scope;
    return nested;
  }
  bool readVectorizeDecorator(FunctionDecl &decl, const CallExpr *call, bool isCudaVectorize);
  void handleDeclareDevice(const Stmt *stmt, llvm::StringRef name, const CallExpr *call);
  bool readLinkFiles(const ModuleValue &value, SourceRange range, std::vector<std::string> &files);
  void reportTopLevel(const Stmt *stmt);
  /// A statement Kiln does not run, in a module that stays Python: what it
  /// binds (in nested blocks too: an `if` at module level assigns module
  /// globals) is host code's.
  void bindHostNames(const Stmt *stmt);
  void bindHostTarget(const Expr *target);
  /// Evaluates an assignment's value; in a module that stays Python, a value
  /// Kiln cannot evaluate is no error but host code's (none is returned).
  std::optional<ModuleValue> evaluateAssigned(const Expr *value) {
    return (moduleStaysPython ? hostEvaluator : evaluator).evaluate(value);
  }
  /// What a name is bound to when its value could not be evaluated: host
  /// code's value, or (the failure reported) a definition whose uses add
  /// no errors.
  ModuleValue unevaluated(llvm::StringRef name) const {
    return moduleStaysPython ? computedAtImport(name) : ModuleValue::invalid();
  }
  /// What a name an import Kiln ignores binds: in a module that stays
  /// Python, the value the running module holds, if it is data kernels can
  /// read (a number, an array, an enum class, ...); else nothing, the
  /// import named when the name is used.
  ModuleValue ignoredImport(llvm::StringRef boundName, std::string qualified) const {
    // The enum module's names stay what they are: enum classes derive from them.
    bool enumModule = llvm::StringRef(qualified).starts_with("enum.");
    const HostValue *value = moduleStaysPython && hostValues && !enumModule
                                 ? hostValues->lookup(modulePath, boundName)
                                 : nullptr;
    bool data = value && value->kind != HostValue::Kind::Symbol &&
                value->kind != HostValue::Kind::Function && value->kind != HostValue::Kind::Closure;
    return data ? computedAtImport(boundName) : ModuleValue::invalid(std::move(qualified));
  }
  ModuleValue computedAtImport(llvm::StringRef name) const {
    return ModuleValue::computedAtImport(modulePath, name.str());
  }
  void attachExternalSignatures(llvm::ArrayRef<ExternalSignature> externalSignatures);

  ModuleScope &scope;
  SourceManager &sources;
  AstContext &astContext;
  DiagnosticEngine &diags;
  TypeContext &types;
  ModuleEvaluator evaluator;
  /// Where evaluating host code's assignments reports what Kiln cannot
  /// evaluate, which then is no error.
  DiagnosticEngine hostDiags;
  ModuleEvaluator hostEvaluator;
  /// What decorators, their arguments and default values are evaluated in:
  /// the module's scope, or while a closure's definition is read, the
  /// closure's (its free variables, its enclosing functions' imports).
  const ModuleScope *activeScope = &scope;
  ModuleEvaluator *activeEvaluator = &evaluator;
  ModuleEvaluator *activeHostEvaluator = &hostEvaluator;
  /// See FrontendOptions::moduleStaysPython.
  bool moduleStaysPython;
  /// The module's canonical path, naming it in host values.
  std::string modulePath;
  /// Where module globals that are closures, and what they close over,
  /// come from, for the build to compile the closures signatures name.
  HostValueSource *hostValues;
  llvm::StringSet<> closuresTried;
  llvm::ArrayRef<DecoratorCall> decoratorCalls;
  llvm::ArrayRef<std::string> onlyFunctions;
};

std::unique_ptr<ModuleScope>
ModuleScope::build(const Module &module, SourceManager &sources, AstContext &astContext,
                   TypeContext &types, DiagnosticEngine &diags,
                   llvm::ArrayRef<ExternalSignature> externalSignatures, ModuleLoader *loader,
                   const PythonModuleContext *python) {
  auto scope = std::unique_ptr<ModuleScope>(new ModuleScope());
  scope->fileId = module.file;
  scope->loader = loader;
  scope->types = &types;
  PythonModuleContext none;
  const PythonModuleContext &context = python ? *python : none;
  ModuleScopeBuilder(*scope, sources, astContext, types, diags, python != nullptr, context)
      .run(module, externalSignatures, context.closures);
  // Only now: while the module's statements are read in order, a name's
  // final value (what host values give) is not yet the value it has.
  scope->hostValues = context.hostValues;
  scope->evaluation.emplace(ModuleScope::Evaluation{sources, astContext, diags});
  for (const std::unique_ptr<ModuleScope> &closure : scope->closureScopes) {
    closure->hostValues = context.hostValues;
    closure->evaluation.emplace(ModuleScope::Evaluation{sources, astContext, diags});
  }
  return scope;
}

void ModuleScopeBuilder::run(const Module &module,
                             llvm::ArrayRef<ExternalSignature> externalSignatures,
                             llvm::ArrayRef<ClosureRequest> closures) {
  const BuiltinSymbols &builtins = BuiltinSymbols::get();
  // Python's builtins that kernels may use: those builtins.def lists.
  for (const Symbol &symbol : builtins.all())
    if (symbol.qualifiedName.starts_with("builtins."))
      scope.pythonBuiltins.insert({symbol.name(), ModuleValue::symbol(&symbol)});

  for (size_t i = 0; i < module.body.size(); ++i) {
    const Stmt *stmt = module.body[i];
    switch (stmt->kind()) {
    case Stmt::Kind::Import:
      handleImport(cast<ImportStmt>(stmt));
      break;
    case Stmt::Kind::ImportFrom:
      handleImportFrom(cast<ImportFromStmt>(stmt));
      break;
    case Stmt::Kind::Assign: {
      const auto *assign = cast<AssignStmt>(stmt);
      for (const Expr *target : assign->targets)
        handleAssign(stmt, target, assign->value);
      break;
    }
    case Stmt::Kind::AnnAssign: {
      const auto *assign = cast<AnnAssignStmt>(stmt);
      if (assign->value)
        handleAssign(stmt, assign->target, assign->value);
      break;
    }
    case Stmt::Kind::AugAssign: {
      const auto *aug = cast<AugAssignStmt>(stmt);
      const auto *name = dyn_cast<NameExpr>(aug->target);
      if (!name) {
        moduleStaysPython ? bindHostNames(stmt) : reportTopLevel(stmt);
        break;
      }
      // On failure (reported) the name stays defined, so that its uses add
      // no errors.
      std::optional<ModuleValue> lhs = evaluateAssigned(aug->target);
      std::optional<ModuleValue> rhs = lhs ? evaluateAssigned(aug->value) : std::nullopt;
      if (!lhs || !rhs) {
        bind(name->id, unevaluated(name->id), stmt->range());
        break;
      }
      if (lhs->kind() != ModuleValue::Kind::Constant ||
          rhs->kind() != ModuleValue::Kind::Constant) {
        diags.report(DiagID::err_module_expression_unsupported, stmt->range());
        bind(name->id, ModuleValue::invalid(), stmt->range());
        break;
      }
      FoldResult folded = foldBinary(aug->op, lhs->constantValue(), rhs->constantValue(), types);
      if (!folded.value) {
        diags.report(
            folded.error == FoldError::DivisionByZero ? DiagID::err_constant_division_by_zero
            : folded.error == FoldError::Overflow     ? DiagID::err_constant_overflow
                                                      : DiagID::err_module_expression_unsupported,
            stmt->range());
        bind(name->id, ModuleValue::invalid(), stmt->range());
        break;
      }
      bind(name->id, ModuleValue::constant(*folded.value), stmt->range());
      break;
    }
    case Stmt::Kind::FunctionDef:
      handleFunctionOrDefer(cast<FunctionDefStmt>(stmt));
      break;
    case Stmt::Kind::ClassDef:
      handleClassDef(cast<ClassDefStmt>(stmt));
      break;
    case Stmt::Kind::ExprStmt:
      // Docstrings and other bare strings do nothing.
      if (const auto *literal = dyn_cast<StringLiteralExpr>(cast<ExprStmt>(stmt)->value);
          literal && !literal->isFormatted)
        break;
      moduleStaysPython ? bindHostNames(stmt) : reportTopLevel(stmt);
      break;
    case Stmt::Kind::Pass:
      break;
    default:
      moduleStaysPython ? bindHostNames(stmt) : reportTopLevel(stmt);
      break;
    }
  }
  for (const ClosureRequest &closure : closures)
    if (closure.modulePath == modulePath)
      addClosure(module, closure);
  for (const DecoratorCall &call : decoratorCalls)
    if (call.line && call.modulePath == modulePath && !scope.function(call.function))
      addClosure(module, ClosureRequest{modulePath, call.function, call.line, {}, call.function});
  // A signature for a module global a kernel factory made asks for that
  // closure.
  for (const ExternalSignature &external : externalSignatures) {
    auto bound = scope.bindings.find(external.function);
    if (bound != scope.bindings.end() && bound->second.isComputedAtImport() &&
        (onlyFunctions.empty() || llvm::is_contained(onlyFunctions, external.function)))
      addGlobalClosure(module, external.function);
  }
  // So does a call of one by its global name (`triple(x)`, where `triple =
  // make_op(3)`), from any function, those just added included.
  for (size_t i = 0; hostValues && moduleStaysPython && i < scope.decls.size(); ++i) {
    const FunctionDecl &decl = *scope.decls[i];
    if (!decl.def)
      continue;
    llvm::SmallVector<llvm::StringRef, 4> callees;
    ast::forEachExpression(decl.def->body, [&](Expr *e) {
      if (const auto *call = dyn_cast<CallExpr>(e))
        if (const auto *callee = dyn_cast<NameExpr>(call->callee))
          callees.push_back(callee->id);
    });
    for (llvm::StringRef callee : callees) {
      auto bound = scope.bindings.find(callee);
      bool freeVariable = decl.scope != &scope && decl.scope->bindings.count(callee) != 0;
      if (!freeVariable && bound != scope.bindings.end() && bound->second.isComputedAtImport())
        addGlobalClosure(module, callee);
    }
  }
  attachExternalSignatures(externalSignatures);
}

const FunctionDefStmt *ModuleScopeBuilder::definitionAt(llvm::ArrayRef<Stmt *> body, uint32_t line,
                                                        std::vector<const Stmt *> *imports) const {
  for (const Stmt *stmt : body) {
    llvm::ArrayRef<Stmt *> inner;
    llvm::ArrayRef<Stmt *> orelse;
    switch (stmt->kind()) {
    case Stmt::Kind::FunctionDef: {
      const auto *def = cast<FunctionDefStmt>(stmt);
      SourceRange first = def->decorators.empty() ? def->range() : def->decorators[0]->range();
      if (sources.lineColumn(first.begin).line == line)
        return def;
      size_t outer = imports ? imports->size() : 0;
      if (imports)
        for (const Stmt *child : def->body)
          if (child->kind() == Stmt::Kind::Import || child->kind() == Stmt::Kind::ImportFrom)
            imports->push_back(child);
      if (const FunctionDefStmt *found = definitionAt(def->body, line, imports))
        return found;
      // A lambda the function makes (an overload's implementation).
      for (const FunctionDefStmt *lambda : ast::definedLambdas(def->body))
        if (sources.lineColumn(lambda->range().begin).line == line)
          return lambda;
      if (imports)
        imports->resize(outer);
      continue;
    }
    case Stmt::Kind::ClassDef:
      inner = cast<ClassDefStmt>(stmt)->body;
      break;
    case Stmt::Kind::If:
      inner = cast<IfStmt>(stmt)->body;
      orelse = cast<IfStmt>(stmt)->orelse;
      break;
    case Stmt::Kind::For:
      inner = cast<ForStmt>(stmt)->body;
      orelse = cast<ForStmt>(stmt)->orelse;
      break;
    case Stmt::Kind::While:
      inner = cast<WhileStmt>(stmt)->body;
      orelse = cast<WhileStmt>(stmt)->orelse;
      break;
    case Stmt::Kind::With:
    case Stmt::Kind::Try:
      inner = cast<BlockStmt>(stmt)->body;
      break;
    default:
      continue;
    }
    if (const FunctionDefStmt *found = definitionAt(inner, line, imports))
      return found;
    if (const FunctionDefStmt *found = definitionAt(orelse, line, imports))
      return found;
  }
  return nullptr;
}

void ModuleScopeBuilder::bindEnclosingImports(ModuleScope &closure,
                                              llvm::ArrayRef<const Stmt *> imports) {
  bindingTarget = &closure;
  for (const Stmt *import : imports) {
    if (const auto *plain = dyn_cast<ImportStmt>(import))
      handleImport(plain);
    else
      handleImportFrom(cast<ImportFromStmt>(import));
  }
  bindingTarget = nullptr;
}

void ModuleScopeBuilder::addClosure(const Module &module, const ClosureRequest &request) {
  std::vector<const Stmt *> imports;
  const FunctionDefStmt *def = definitionAt(module.body, request.line, &imports);
  if (!def) {
    diags.report(DiagID::err_closure_not_found, SourceRange(),
                 {request.name, std::to_string(request.line), request.enclosing});
    return;
  }
  std::unique_ptr<ModuleScope> closure = nestedScope();
  bindEnclosingImports(*closure, imports);
  for (const std::string &variable : request.freeVariables)
    closure->bindings.insert_or_assign(
        variable, ModuleValue::computedAtImport(modulePath, request.name + "." + variable,
                                                "a variable of '" + request.enclosing + "'"));
  handleFunctionOrDefer(def, closure.get(), request.name);
  scope.closureScopes.push_back(std::move(closure));
  // A device function it calls that is a closure too is compiled with it.
  for (const std::string &variable : request.freeVariables)
    if (const HostValue *value =
            hostValues ? hostValues->lookup(modulePath, request.name + "." + variable) : nullptr;
        value && value->kind == HostValue::Kind::Function && value->functionFile == modulePath)
      addGlobalClosure(module, value->functionName);
}

bool ModuleScopeBuilder::addGlobalClosure(const Module &module, llvm::StringRef name) {
  if (scope.function(name))
    return true;
  // Once each: closures may call each other, and one may fail to compile.
  if (!hostValues || !moduleStaysPython || !closuresTried.insert(name).second)
    return false;
  const HostValue *value = hostValues->lookup(modulePath, name);
  if (!value || value->kind != HostValue::Kind::Closure)
    return false;
  addClosure(module, ClosureRequest{modulePath, name.str(), value->line, value->variables,
                                    value->enclosing});
  return scope.function(name) != nullptr;
}

void ModuleScopeBuilder::bindHostTarget(const Expr *target) {
  if (const auto *name = dyn_cast<NameExpr>(target))
    bind(name->id, computedAtImport(name->id), target->range());
  else if (const auto *tuple = dyn_cast<SequenceExpr>(target))
    llvm::for_each(tuple->elements, [&](const Expr *element) { bindHostTarget(element); });
  else if (const auto *starred = dyn_cast<StarredExpr>(target))
    bindHostTarget(starred->value);
}

void ModuleScopeBuilder::bindHostNames(const Stmt *stmt) {
  auto bindAll = [&](llvm::ArrayRef<Stmt *> body) {
    for (const Stmt *child : body)
      bindHostNames(child);
  };
  switch (stmt->kind()) {
  case Stmt::Kind::Assign:
    llvm::for_each(cast<AssignStmt>(stmt)->targets,
                   [&](const Expr *target) { bindHostTarget(target); });
    break;
  case Stmt::Kind::AugAssign:
    bindHostTarget(cast<AugAssignStmt>(stmt)->target);
    break;
  case Stmt::Kind::AnnAssign:
    bindHostTarget(cast<AnnAssignStmt>(stmt)->target);
    break;
  case Stmt::Kind::FunctionDef: {
    // `if cuda.is_available(): @cuda.jit def kernel(...)`: a decorated
    // function the module defines in a block is a global as one at the top
    // level is. A plain one there is host code, and is no fallback that
    // replaces a kernel of the same name another branch defines.
    const auto *def = cast<FunctionDefStmt>(stmt);
    if (!def->decorators.empty())
      handleFunctionOrDefer(def);
    else if (!scope.bindings.count(def->name))
      bind(def->name,
           ModuleValue::computedAtImport(modulePath, def->name.str(),
                                         "a function Kiln does not compile"),
           def->nameRange);
    break;
  }
  case Stmt::Kind::ClassDef:
    // A class host code defines, which host values may say more of (a
    // named tuple class kernels call).
    bind(cast<ClassDefStmt>(stmt)->name,
         ModuleValue::computedAtImport(modulePath, cast<ClassDefStmt>(stmt)->name.str(), "a class"),
         cast<ClassDefStmt>(stmt)->nameRange);
    break;
  // `if HAS_NUMBA: from numba import njit` (or `import numba`): names of
  // the modules Kiln knows mean what they do at the top level, so that
  // decorators read before the host values are find them.
  case Stmt::Kind::Import: {
    const auto *import = cast<ImportStmt>(stmt);
    if (llvm::all_of(import->names, [](const ImportAlias &alias) {
          const Symbol *module = BuiltinSymbols::get().lookup(alias.name);
          return module && module->kind == Symbol::Kind::Module;
        })) {
      handleImport(import);
      break;
    }
    for (const ImportAlias &alias : import->names)
      bind(alias.asName.empty() ? alias.name.split('.').first : alias.asName,
           ModuleValue::hostValue("a module"), alias.range);
    break;
  }
  case Stmt::Kind::ImportFrom: {
    const auto *import = cast<ImportFromStmt>(stmt);
    const Symbol *module =
        import->level == 0 ? BuiltinSymbols::get().lookup(import->module) : nullptr;
    if (module && module->kind == Symbol::Kind::Module && !import->isStar) {
      handleImportFrom(import);
      break;
    }
    for (const ImportAlias &alias : import->names)
      bind(alias.asName.empty() ? alias.name : alias.asName,
           computedAtImport(alias.asName.empty() ? alias.name : alias.asName), alias.range);
    break;
  }
  case Stmt::Kind::For:
    bindHostTarget(cast<ForStmt>(stmt)->target);
    bindAll(cast<ForStmt>(stmt)->body);
    bindAll(cast<ForStmt>(stmt)->orelse);
    break;
  case Stmt::Kind::While:
    bindAll(cast<WhileStmt>(stmt)->body);
    bindAll(cast<WhileStmt>(stmt)->orelse);
    break;
  case Stmt::Kind::If:
    bindAll(cast<IfStmt>(stmt)->body);
    bindAll(cast<IfStmt>(stmt)->orelse);
    break;
  case Stmt::Kind::With:
  case Stmt::Kind::Try:
    bindAll(cast<BlockStmt>(stmt)->body);
    break;
  default:
    break;
  }
}

void ModuleScopeBuilder::reportTopLevel(const Stmt *stmt) {
  if (const auto *branch = dyn_cast<IfStmt>(stmt)) {
    // `if __name__ == "__main__":` is host code; say so specifically.
    if (const auto *compare = dyn_cast<CompareExpr>(branch->test))
      if (const auto *name = dyn_cast<NameExpr>(compare->left); name && name->id == "__name__") {
        diags.report(DiagID::err_main_block_in_kernel_module, branch->test->range());
        return;
      }
  }
  if (const auto *cls = dyn_cast<ClassDefStmt>(stmt)) {
    diags.report(DiagID::err_class_in_kernel_module, cls->nameRange, {cls->name});
    return;
  }
  SourceRange range = stmt->range();
  // Point at the first line only; a whole loop body would be noise.
  diags.report(DiagID::err_statement_at_module_level, SourceRange(range.begin, range.begin));
}

void ModuleScopeBuilder::handleImport(const ImportStmt *import) {
  const BuiltinSymbols &builtins = BuiltinSymbols::get();
  for (const ImportAlias &alias : import->names) {
    const Symbol *module = builtins.lookup(alias.name);
    if ((!module || module->kind != Symbol::Kind::Module) && bindSourceImport(alias))
      continue;
    if (!module || module->kind != Symbol::Kind::Module) {
      // Host code's import, or `enum`, whose classes Kiln reads: no news.
      if (!moduleStaysPython && alias.name != "enum")
        diags.report(DiagID::warn_import_ignored, alias.range, {alias.name});
      if (!alias.asName.empty()) {
        bind(alias.asName, ModuleValue::invalid(alias.name.str()), alias.range);
        continue;
      }
      // `import numpy.random` binds `numpy`, which stays the module Kiln
      // knows; only the submodule is ignored.
      llvm::StringRef top = alias.name.split('.').first;
      const Symbol *topModule = builtins.lookup(top);
      if (topModule && topModule->kind == Symbol::Kind::Module)
        bind(top, ModuleValue::symbol(topModule), alias.range);
      else
        bind(top, ModuleValue::invalid(alias.name.str()), alias.range);
      continue;
    }
    if (!alias.asName.empty()) {
      bind(alias.asName, ModuleValue::symbol(module), alias.range);
    } else {
      // `import numba.cuda` binds `numba`.
      llvm::StringRef top = alias.name.split('.').first;
      bind(top, ModuleValue::symbol(builtins.lookup(top)), alias.range);
    }
  }
}

/// `import pkg.sub as sub`, `import pkg.sub`, `import sibling`: a source
/// module of the importer's own package. `import pkg.sub` binds `pkg`, with
/// `sub` its attribute (and the submodules earlier imports bound). False if
/// the name is no such module.
bool ModuleScopeBuilder::bindSourceImport(const ImportAlias &alias) {
  if (!scope.loader)
    return false;
  llvm::StringRef importer = sources.path(scope.fileId);
  const ModuleScope *imported = scope.loader->loadSource(importer, 0, alias.name);
  if (!imported)
    return false;
  ModuleValue value = ModuleValue::sourceModule(alias.name.str(), imported);
  if (!alias.asName.empty()) {
    bind(alias.asName, std::move(value), alias.range);
    return true;
  }
  // From the innermost package out: each binds the next part.
  llvm::SmallVector<llvm::StringRef, 4> parts;
  alias.name.split(parts, '.');
  for (size_t i = parts.size() - 1; i > 0; --i) {
    std::string package = llvm::join(llvm::ArrayRef(parts).take_front(i), ".");
    ModuleValue outer =
        ModuleValue::sourceModule(package, scope.loader->loadSource(importer, 0, package));
    if (i == 1)
      if (const ModuleValue *bound = (bindingTarget ? *bindingTarget : scope).lookup(parts[0]);
          bound && bound->kind() == ModuleValue::Kind::Module)
        outer = *bound;
    value = outer.withSubmodule(parts[i], std::move(value));
  }
  bind(parts[0], std::move(value), alias.range);
  return true;
}

/// `from .helpers import clamp, TABLE`, `from . import config`, `from pkg
/// import sub`: each name is what the source module binds it to (device
/// functions, constants, what its own imports bring; what its host code
/// computes stays host code's), or else, as Python looks next, its
/// submodule of that name. False if neither the module nor any name is a
/// source module of the importer's package.
bool ModuleScopeBuilder::bindSourceImports(const ImportFromStmt *import) {
  llvm::StringRef importer = sources.path(scope.fileId);
  std::string moduleName = std::string(import->level, '.') + import->module.str();
  const ModuleScope *source =
      import->module.empty() ? nullptr
                             : scope.loader->loadSource(importer, import->level, import->module);
  llvm::SmallVector<const ModuleScope *, 4> submodules;
  for (const ImportAlias &alias : import->names) {
    const ModuleScope *submodule = nullptr;
    if (!source || !source->moduleBindings().count(alias.name)) {
      std::string path =
          import->module.empty() ? alias.name.str() : import->module.str() + "." + alias.name.str();
      submodule = scope.loader->loadSource(importer, import->level, path);
    }
    submodules.push_back(submodule);
  }
  if (!source && llvm::all_of(submodules, [](const ModuleScope *s) { return !s; }))
    return false;
  for (auto [alias, submodule] : llvm::zip(import->names, submodules)) {
    llvm::StringRef boundName = alias.asName.empty() ? alias.name : alias.asName;
    std::string qualified = moduleName + (import->module.empty() ? "" : ".") + alias.name.str();
    if (submodule) {
      bind(boundName, ModuleValue::sourceModule(qualified, submodule), alias.range);
      continue;
    }
    const ModuleValue *value = nullptr;
    if (source)
      if (auto found = source->moduleBindings().find(alias.name);
          found != source->moduleBindings().end())
        value = &found->getValue();
    bind(boundName, value ? *value : ModuleValue::invalid(qualified), alias.range);
  }
  return true;
}

void ModuleScopeBuilder::handleImportFrom(const ImportFromStmt *import) {
  if (import->module == "__future__" && import->level == 0)
    return;
  const BuiltinSymbols &builtins = BuiltinSymbols::get();
  const Symbol *module = import->level == 0 ? builtins.lookup(import->module) : nullptr;
  if ((!module || module->kind != Symbol::Kind::Module) && !import->isStar && scope.loader &&
      bindSourceImports(import))
    return;
  if (!module || module->kind != Symbol::Kind::Module) {
    std::string moduleName = std::string(import->level, '.') + import->module.str();
    if (!moduleStaysPython && moduleName != "enum")
      diags.report(DiagID::warn_import_ignored, import->moduleRange, {moduleName});
    for (const ImportAlias &alias : import->names) {
      llvm::StringRef boundName = alias.asName.empty() ? alias.name : alias.asName;
      bind(boundName, ignoredImport(boundName, moduleName + "." + alias.name.str()), alias.range);
    }
    return;
  }
  if (import->isStar) {
    diags.report(DiagID::err_star_import, import->range(), {import->module});
    return;
  }
  for (const ImportAlias &alias : import->names) {
    const Symbol *member = builtins.member(*module, alias.name);
    llvm::StringRef boundName = alias.asName.empty() ? alias.name : alias.asName;
    if (!member) {
      if (const FunctionDecl *imported =
              scope.importedFunction(module->qualifiedName, alias.name)) {
        bind(boundName, ModuleValue::function(imported), alias.range);
        continue;
      }
      if (const ModuleValue *enumeration = scope.importedEnum(module->qualifiedName, alias.name)) {
        bind(boundName, *enumeration, alias.range);
        continue;
      }
      if (!moduleStaysPython)
        diags.report(DiagID::warn_import_name_ignored, alias.range,
                     {alias.name, module->qualifiedName});
      bind(boundName, ModuleValue::invalid(module->qualifiedName.str() + "." + alias.name.str()),
           alias.range);
      continue;
    }
    bind(boundName, ModuleValue::symbol(member), alias.range);
  }
}

void ModuleScopeBuilder::handleClassDef(const ClassDefStmt *cls) {
  if (std::optional<EnumDefinition> definition = enumDefinition(cls)) {
    bind(cls->name,
         ModuleValue::enumeration(std::make_shared<EnumDefinition>(std::move(*definition))),
         cls->nameRange);
    return;
  }
  if (const Symbol *exception = moduleStaysPython ? userException(cls) : nullptr) {
    bind(cls->name, ModuleValue::symbol(exception), cls->nameRange);
    return;
  }
  if (!moduleStaysPython) {
    reportTopLevel(cls);
    return;
  }
  bindHostNames(cls);
  // `@staticmethod @njit def w(q)`: a function host code jits in a class,
  // which a kernel may call through a value holding it (a kernel factory's
  // argument); compiled under its qualified name, "CubicSpline.w". Methods
  // see the module's globals, not the class's names.
  for (const Stmt *stmt : cls->body) {
    const auto *def = dyn_cast<FunctionDefStmt>(stmt);
    if (!def || llvm::none_of(def->decorators,
                              [&](const Expr *decorator) { return namesKilnDecorator(decorator); }))
      continue;
    std::unique_ptr<ModuleScope> method = nestedScope();
    handleFunctionOrDefer(def, method.get(), (cls->name + "." + def->name).str());
    scope.closureScopes.push_back(std::move(method));
  }
}

bool ModuleScopeBuilder::namesEnumModuleMember(const Expr *expr, llvm::StringRef name) {
  if (const auto *plain = dyn_cast<NameExpr>(expr)) {
    const ModuleValue *value = scope.lookup(plain->id);
    return value && value->kind() == ModuleValue::Kind::Invalid &&
           value->ignoredImport() == "enum." + name.str();
  }
  if (const auto *attribute = dyn_cast<AttributeExpr>(expr)) {
    const auto *module = dyn_cast<NameExpr>(attribute->value);
    const ModuleValue *value = module ? scope.lookup(module->id) : nullptr;
    return attribute->attr == name && value && value->kind() == ModuleValue::Kind::Invalid &&
           value->ignoredImport() == "enum";
  }
  return false;
}

/// `class MyError(Exception): pass`: an exception class of the module, which
/// kernels raise as Numba's do (the launch raises the class itself); its
/// body may hold nothing but a docstring. Nothing for any other class.
const Symbol *ModuleScopeBuilder::userException(const ClassDefStmt *cls) {
  if (cls->bases.size() != 1)
    return nullptr;
  for (const Stmt *stmt : cls->body) {
    const auto *bare = dyn_cast<ExprStmt>(stmt);
    bool docstringOrEllipsis =
        bare && (isa<StringLiteralExpr>(bare->value) || isa<EllipsisLiteralExpr>(bare->value));
    if (stmt->kind() != Stmt::Kind::Pass && !docstringOrEllipsis)
      return nullptr;
  }
  const auto *base = dyn_cast<NameExpr>(cls->bases[0]);
  const ModuleValue *value = base ? scope.lookup(base->id) : nullptr;
  if (!value || value->kind() != ModuleValue::Kind::Symbol ||
      value->symbolValue()->kind != Symbol::Kind::Exception)
    return nullptr;
  scope.userExceptionNames.push_back(cls->name.str());
  scope.userExceptions.push_back(Symbol{value->symbolValue()->id, Symbol::Kind::Exception,
                                        scope.userExceptionNames.back(), "user"});
  return &scope.userExceptions.back();
}

namespace {

/// What an enum member's value may be: a number, or a tuple of numbers
/// (`EARTH = (5.976e24, 6.37814e6)`).
bool isNumberOrTupleOfNumbers(const ConstantValue &value) {
  if (value.kind() == ConstantValue::Kind::Tuple)
    return llvm::all_of(value.elements(), isNumberOrTupleOfNumbers);
  return value.isNumber();
}

} // namespace

/// `class Color(IntEnum)` (or `enum.Enum`) whose body assigns its members
/// constants or `auto()`; nothing for any other class, which stays host
/// code's (or, in a kernel module, an error).
std::optional<EnumDefinition> ModuleScopeBuilder::enumDefinition(const ClassDefStmt *cls) {
  if (cls->bases.size() != 1)
    return std::nullopt;
  EnumDefinition definition;
  definition.name = cls->name.str();
  definition.isIntEnum = namesEnumModuleMember(cls->bases[0], "IntEnum");
  if (!definition.isIntEnum && !namesEnumModuleMember(cls->bases[0], "Enum"))
    return std::nullopt;
  for (const Stmt *stmt : cls->body) {
    if (stmt->kind() == Stmt::Kind::Pass)
      continue;
    if (const auto *bare = dyn_cast<ExprStmt>(stmt); bare && isa<StringLiteralExpr>(bare->value))
      continue; // a docstring
    const auto *assign = dyn_cast<AssignStmt>(stmt);
    const auto *target = assign && assign->targets.size() == 1
                             ? dyn_cast<NameExpr>(assign->targets.front())
                             : nullptr;
    if (!target || target->id.starts_with("_"))
      return std::nullopt;
    std::optional<ConstantValue> value;
    const auto *call = dyn_cast<CallExpr>(assign->value);
    if (call && call->args.empty() && call->keywords.empty() &&
        namesEnumModuleMember(call->callee, "auto")) {
      // enum.auto(): one more than the last integer value, from 1.
      Int128 next = 1;
      if (!definition.members.empty()) {
        const ConstantValue &last = definition.members.back().second;
        if (last.kind() != ConstantValue::Kind::Int)
          return std::nullopt;
        next = last.intValue128() + 1;
      }
      value = ConstantValue::integer(next);
    } else if (std::optional<ModuleValue> evaluated = evaluateAssigned(assign->value);
               evaluated && evaluated->kind() == ModuleValue::Kind::Constant &&
               isNumberOrTupleOfNumbers(evaluated->constantValue())) {
      value = evaluated->constantValue();
    }
    if (!value || (definition.isIntEnum && value->kind() != ConstantValue::Kind::Int))
      return std::nullopt;
    definition.members.emplace_back(target->id.str(), *value);
  }
  if (definition.members.empty())
    return std::nullopt;
  return definition;
}

void ModuleScopeBuilder::handleAssign(const Stmt *stmt, const Expr *target, const Expr *value) {
  if (const auto *name = dyn_cast<NameExpr>(target)) {
    // fn = cuda.declare_device('symbol', 'signature')
    if (const auto *call = dyn_cast<CallExpr>(value)) {
      std::optional<ModuleValue> callee = evaluateAssigned(call->callee);
      if (!callee) {
        bind(name->id, unevaluated(name->id), stmt->range());
        return;
      }
      if (callee->kind() == ModuleValue::Kind::Symbol &&
          callee->symbolValue()->is(BuiltinId::CudaDeclareDevice)) {
        bind(name->id, ModuleValue::invalid(), stmt->range()); // until it is declared
        handleDeclareDevice(stmt, name->id, call);
        return;
      }
    }
    std::optional<ModuleValue> result = evaluateAssigned(value);
    bind(name->id, result ? std::move(*result) : unevaluated(name->id), stmt->range());
    return;
  }
  if (const auto *tuple = dyn_cast<SequenceExpr>(target)) {
    std::optional<ModuleValue> result = evaluateAssigned(value);
    if (!result) {
      // Reported, or host code's; the names exist, so that their uses add
      // no errors but the host value's.
      for (const Expr *element : tuple->elements)
        if (const auto *elementName = dyn_cast<NameExpr>(element))
          bind(elementName->id, unevaluated(elementName->id), stmt->range());
      return;
    }
    if (result->kind() == ModuleValue::Kind::Constant &&
        result->constantValue().kind() == ConstantValue::Kind::Tuple &&
        result->constantValue().elements().size() == tuple->elements.size() &&
        llvm::all_of(tuple->elements, [](const Expr *e) { return isa<NameExpr>(e); })) {
      for (size_t i = 0; i < tuple->elements.size(); ++i)
        bind(cast<NameExpr>(tuple->elements[i])->id,
             ModuleValue::constant(result->constantValue().elements()[i]), stmt->range());
      return;
    }
  }
  moduleStaysPython ? bindHostNames(stmt) : reportTopLevel(stmt);
}

/// `name = cuda.declare_device("symbol", "restype(argtypes)", link=[...])`,
/// the signature given by position or as `sig=`: a device function in
/// CUDA C/C++ or PTX, whose `link` files link into every kernel that calls
/// it, as numba-cuda links them.
void ModuleScopeBuilder::handleDeclareDevice(const Stmt *stmt, llvm::StringRef name,
                                             const CallExpr *call) {
  const Expr *signatureExpr = call->args.size() > 1 ? call->args[1] : nullptr;
  const Expr *linkExpr = nullptr;
  const Expr *cooperativeExpr = nullptr;
  const Expr *abiExpr = nullptr;
  for (const Keyword &keyword : call->keywords) {
    if (keyword.name == "sig" && !signatureExpr) {
      signatureExpr = keyword.value;
    } else if (keyword.name == "link") {
      linkExpr = keyword.value;
    } else if (keyword.name == "use_cooperative") {
      cooperativeExpr = keyword.value;
    } else if (keyword.name == "abi") {
      abiExpr = keyword.value;
    } else {
      diags.report(DiagID::err_unknown_decorator_option, keyword.nameRange,
                   {keyword.name, "cuda.declare_device"});
      return;
    }
  }
  if (call->args.empty() || call->args.size() > 2 || !signatureExpr) {
    diags.report(DiagID::err_wrong_argument_count, call->range(),
                 {"cuda.declare_device", countOf(2, "argument"),
                  static_cast<unsigned>(call->args.size() + call->keywords.size())});
    return;
  }
  std::optional<ModuleValue> symbolName = activeEvaluator->evaluate(call->args[0]);
  if (!symbolName)
    return;
  if (symbolName->kind() != ModuleValue::Kind::Constant ||
      symbolName->constantValue().kind() != ConstantValue::Kind::String) {
    diags.report(DiagID::err_expected_string, call->args[0]->range(), {symbolName->describe()});
    return;
  }
  std::optional<std::vector<Signature>> signatures = activeEvaluator->signatures(signatureExpr);
  if (!signatures)
    return;
  if (signatures->size() != 1 || !signatures->front().returnType) {
    diags.report(DiagID::err_declare_device_signature, signatureExpr->range());
    return;
  }
  auto decl = std::make_unique<FunctionDecl>();
  if (linkExpr) {
    std::optional<ModuleValue> link = activeEvaluator->evaluate(linkExpr);
    if (!link)
      return;
    // declare_device, unlike cuda.jit, takes one file name as a string too.
    if (link->kind() == ModuleValue::Kind::Constant &&
        link->constantValue().kind() == ConstantValue::Kind::String)
      link = ModuleValue::list({*link});
    if (!readLinkFiles(*link, linkExpr->range(), decl->options.link))
      return;
  }
  if (cooperativeExpr) {
    std::optional<ModuleValue> cooperative = activeEvaluator->evaluate(cooperativeExpr);
    if (!cooperative)
      return;
    if (cooperative->kind() != ModuleValue::Kind::Constant ||
        cooperative->constantValue().kind() != ConstantValue::Kind::Bool) {
      diags.report(DiagID::err_decorator_option_type, cooperativeExpr->range(),
                   {"use_cooperative", "True or False"});
      return;
    }
    decl->externalCooperative = cooperative->constantValue().boolValue();
  }
  if (abiExpr) {
    std::optional<ModuleValue> abi = activeEvaluator->evaluate(abiExpr);
    if (!abi)
      return;
    bool isString = abi->kind() == ModuleValue::Kind::Constant &&
                    abi->constantValue().kind() == ConstantValue::Kind::String;
    llvm::StringRef abiName = isString ? llvm::StringRef(abi->constantValue().stringValue()) : "";
    if (abiName != "numba" && abiName != "c") {
      diags.report(DiagID::err_decorator_option_type, abiExpr->range(), {"abi", "'numba' or 'c'"});
      return;
    }
    decl->externalCAbi = abiName == "c";
  }
  decl->name = name.str();
  decl->scope = &scope;
  decl->kind = FunctionDecl::Kind::External;
  decl->range = stmt->range();
  decl->signatures = std::move(*signatures);
  decl->externalSymbol = symbolName->constantValue().stringValue();
  bind(name, ModuleValue::function(decl.get()), stmt->range());
  scope.decls.push_back(std::move(decl));
}

/// The files `link=` names: a list or tuple of file names, or None for
/// none. numba-cuda iterates over the value, so a lone string would link
/// each of its characters: it is an error saying so.
bool ModuleScopeBuilder::readLinkFiles(const ModuleValue &value, SourceRange range,
                                       std::vector<std::string> &files) {
  std::vector<ModuleValue> items;
  const ConstantValue *constant =
      value.kind() == ModuleValue::Kind::Constant ? &value.constantValue() : nullptr;
  if (value.kind() == ModuleValue::Kind::List) {
    items = value.items();
  } else if (constant && constant->kind() == ConstantValue::Kind::Tuple) {
    for (const ConstantValue &element : constant->elements())
      items.push_back(ModuleValue::constant(element));
  } else if (constant && constant->kind() == ConstantValue::Kind::String) {
    diags.report(
        DiagID::err_decorator_option_type, range,
        {"link", "a list of file names, even for one file: link=[" + constant->repr() + "]"});
    return false;
  } else if (!constant || constant->kind() != ConstantValue::Kind::None) {
    diags.report(DiagID::err_decorator_option_type, range, {"link", "a list of file names"});
    return false;
  }
  for (const ModuleValue &item : items) {
    if (item.kind() != ModuleValue::Kind::Constant ||
        item.constantValue().kind() != ConstantValue::Kind::String) {
      diags.report(DiagID::err_decorator_option_type, range, {"link", "a list of file names"});
      return false;
    }
    files.push_back(item.constantValue().stringValue());
  }
  return true;
}

namespace {

std::optional<bool> constantBool(const ModuleValue &value) {
  if (value.kind() != ModuleValue::Kind::Constant)
    return std::nullopt;
  const ConstantValue &constant = value.constantValue();
  if (constant.kind() == ConstantValue::Kind::Bool || constant.kind() == ConstantValue::Kind::Int ||
      constant.kind() == ConstantValue::Kind::None)
    return constant.truthy();
  return std::nullopt;
}

/// fastmath= as Numba takes it: a bool, or a set (list, tuple) of the names
/// of LLVM's fast-math flags, "fast" meaning all of them. False if it is
/// neither.
bool readFastmath(const ModuleValue &value, JitOptions &options) {
  if (std::optional<bool> b = constantBool(value)) {
    options.fastmath = *b;
    options.fastmathFlags.clear();
    return true;
  }
  std::vector<ModuleValue> items;
  if (value.kind() == ModuleValue::Kind::List)
    items = value.items();
  else if (value.kind() == ModuleValue::Kind::Constant &&
           value.constantValue().kind() == ConstantValue::Kind::Tuple)
    for (const ConstantValue &element : value.constantValue().elements())
      items.push_back(ModuleValue::constant(element));
  else
    return false;
  static const llvm::StringLiteral known[] = {"nnan",     "ninf", "nsz",    "arcp",
                                              "contract", "afn",  "reassoc"};
  std::vector<std::string> flags;
  bool all = false;
  for (const ModuleValue &item : items) {
    if (item.kind() != ModuleValue::Kind::Constant ||
        item.constantValue().kind() != ConstantValue::Kind::String)
      return false;
    const std::string &flag = item.constantValue().stringValue();
    if (flag == "fast")
      all = true;
    else if (llvm::is_contained(known, flag))
      flags.push_back(flag);
    else
      return false;
  }
  llvm::sort(flags);
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  options.fastmath = all || !flags.empty();
  options.fastmathFlags = all ? std::vector<std::string>() : std::move(flags);
  return true;
}

/// What readFastmath() takes, for messages.
constexpr const char *fastmathForms =
    "a bool, or a set of LLVM fast-math flags ('nnan', 'ninf', 'nsz', 'arcp', 'contract', 'afn', "
    "'reassoc', 'fast')";

} // namespace

bool ModuleScopeBuilder::readJitDecorator(FunctionDecl &decl, const CallExpr *call,
                                          bool isCudaJit) {
  if (call->args.size() > 1) {
    diags.report(DiagID::err_jit_too_many_positional, call->args[1]->range());
    return false;
  }
  if (call->args.size() == 1) {
    std::optional<std::vector<Signature>> signatures = activeEvaluator->signatures(call->args[0]);
    if (!signatures)
      return false;
    decl.signatures = std::move(*signatures);
  }
  bool ok = true;
  for (const Keyword &keyword : call->keywords) {
    if (keyword.name.empty()) {
      diags.report(DiagID::err_module_expression_unsupported, keyword.value->range());
      ok = false;
      continue;
    }
    std::optional<ModuleValue> value = evaluateOption(keyword.value);
    if (!value) {
      ok = false;
      continue;
    }
    llvm::StringRef name = keyword.name;
    auto requireBool = [&](bool &field) {
      if (std::optional<bool> b = constantBool(*value)) {
        field = *b;
        return;
      }
      diags.report(DiagID::err_decorator_option_type, keyword.value->range(), {name, "a bool"});
      ok = false;
    };
    if (name == "device" && isCudaJit) {
      bool device = false;
      requireBool(device);
      if (device)
        decl.kind = FunctionDecl::Kind::Device;
    } else if (name == "fastmath") {
      if (!readFastmath(*value, decl.options)) {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {name, fastmathForms});
        ok = false;
      }
    } else if (name == "debug") {
      requireBool(decl.options.debug);
    } else if (name == "lineinfo") {
      requireBool(decl.options.lineinfo);
    } else if (name == "boundscheck") {
      // None, Numba's default, leaves the choice to the environment; Kiln's
      // CPU engine then checks unless told not to.
      bool isNone = value->kind() == ModuleValue::Kind::Constant &&
                    value->constantValue().kind() == ConstantValue::Kind::None;
      if (!isNone)
        requireBool(decl.options.boundscheck);
    } else if (name == "opt") {
      requireBool(decl.options.optimize);
    } else if (name == "cache") {
      requireBool(decl.options.cache);
    } else if (name == "forceinline") {
      requireBool(decl.options.forceInline);
    } else if (name == "lto") {
      bool lto = false;
      requireBool(lto);
      decl.options.lto = lto;
    } else if (name == "inline") {
      const ConstantValue *constant =
          value->kind() == ModuleValue::Kind::Constant ? &value->constantValue() : nullptr;
      if (constant && constant->kind() == ConstantValue::Kind::String &&
          (constant->stringValue() == "always" || constant->stringValue() == "never")) {
        decl.options.inlineAlways = constant->stringValue() == "always";
      } else if (std::optional<bool> b = constantBool(*value)) {
        decl.options.inlineAlways = *b;
      } else {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {name, "'always', 'never' or a bool"});
        ok = false;
      }
    } else if (name == "max_registers") {
      const ConstantValue *constant =
          value->kind() == ModuleValue::Kind::Constant ? &value->constantValue() : nullptr;
      if (constant && constant->kind() == ConstantValue::Kind::Int && constant->intValue128() > 0 &&
          constant->intValue128() <= 255) {
        decl.options.maxRegisters = static_cast<unsigned>(constant->intValue128());
      } else if (!constant || constant->kind() != ConstantValue::Kind::None) {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {name, "an integer from 1 to 255"});
        ok = false;
      }
    } else if (name == "link") {
      ok &= readLinkFiles(*value, keyword.value->range(), decl.options.link);
    } else if (name == "launch_bounds") {
      const ConstantValue *constant =
          value->kind() == ModuleValue::Kind::Constant ? &value->constantValue() : nullptr;
      std::vector<ConstantValue> bounds;
      if (constant && constant->kind() == ConstantValue::Kind::Tuple)
        bounds = constant->elements();
      else if (constant)
        bounds.push_back(*constant);
      bool valid = constant && !bounds.empty() && bounds.size() <= 3;
      for (const ConstantValue &bound : bounds)
        valid = valid && bound.kind() == ConstantValue::Kind::Int && bound.intValue128() > 0 &&
                bound.intValue128() <= (1 << 30);
      if (valid) {
        for (const ConstantValue &bound : bounds)
          decl.options.launchBounds.push_back(static_cast<unsigned>(bound.intValue128()));
      } else {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {name, "a positive integer or a tuple of up to 3"});
        ok = false;
      }
    } else if (name == "shared_memory_carveout" && isCudaJit) {
      // numba-cuda's _validate_shared_memory_carveout and _parse_carveout.
      const ConstantValue *constant =
          value->kind() == ModuleValue::Kind::Constant ? &value->constantValue() : nullptr;
      std::optional<int> carveout;
      if (constant && constant->kind() == ConstantValue::Kind::String) {
        std::string text = llvm::StringRef(constant->stringValue()).lower();
        if (text == "default")
          carveout = -1;
        else if (text == "maxl1")
          carveout = 0;
        else if (text == "maxshared")
          carveout = 100;
      } else if (constant && !constant->numpyType() &&
                 (constant->kind() == ConstantValue::Kind::Int ||
                  constant->kind() == ConstantValue::Kind::Bool) &&
                 constant->intValue128() >= -1 && constant->intValue128() <= 100) {
        carveout = static_cast<int>(constant->intValue128());
      }
      if (carveout) {
        decl.options.sharedMemoryCarveout = carveout;
      } else if (!constant || constant->kind() != ConstantValue::Kind::None) {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {name, "'MaxL1', 'MaxShared', 'default' or an integer from -1 to 100"});
        ok = false;
      }
    } else if (name == "nopython" || name == "nogil" || name == "error_model" ||
               name == "parallel") {
      // Options of the CPU @jit that do not change device code.
    } else {
      diags.report(DiagID::err_unknown_decorator_option, keyword.nameRange,
                   {name, isCudaJit ? "cuda.jit" : "jit"});
      ok = false;
    }
  }
  return ok;
}

bool ModuleScopeBuilder::readVectorizeDecorator(FunctionDecl &decl, const CallExpr *call,
                                                bool isCudaVectorize) {
  if (call->args.empty()) {
    diags.report(DiagID::err_vectorize_needs_signatures, call->range());
    return false;
  }
  if (call->args.size() > 1) {
    diags.report(DiagID::err_jit_too_many_positional, call->args[1]->range());
    return false;
  }
  std::optional<std::vector<Signature>> signatures = activeEvaluator->signatures(call->args[0]);
  if (!signatures)
    return false;
  decl.signatures = std::move(*signatures);
  bool sawTarget = false;
  for (const Keyword &keyword : call->keywords) {
    std::optional<ModuleValue> value = evaluateOption(keyword.value);
    if (!value)
      return false;
    if (keyword.name == "target") {
      sawTarget = true;
      if (value->kind() != ModuleValue::Kind::Constant ||
          value->constantValue().kind() != ConstantValue::Kind::String ||
          value->constantValue().stringValue() != "cuda") {
        diags.report(DiagID::err_vectorize_target, keyword.value->range());
        return false;
      }
    } else if (keyword.name == "fastmath") {
      if (!readFastmath(*value, decl.options)) {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {keyword.name, fastmathForms});
        return false;
      }
    } else if (keyword.name == "debug" || keyword.name == "opt" || keyword.name == "lineinfo") {
      std::optional<bool> b = constantBool(*value);
      if (!b) {
        diags.report(DiagID::err_decorator_option_type, keyword.value->range(),
                     {keyword.name, "a bool"});
        return false;
      }
      bool &field = keyword.name == "debug" ? decl.options.debug
                    : keyword.name == "opt" ? decl.options.optimize
                                            : decl.options.lineinfo;
      field = *b;
    } else if (keyword.name == "identity" || keyword.name == "cache" ||
               keyword.name == "nopython") {
      // Host-side ufunc properties; no effect on device code.
    } else {
      diags.report(DiagID::err_unknown_decorator_option, keyword.nameRange,
                   {keyword.name, "vectorize"});
      return false;
    }
  }
  // numba.vectorize compiles for the CPU unless told otherwise;
  // numba.cuda.vectorize defaults to target='cuda'.
  if (!sawTarget && !isCudaVectorize) {
    diags.report(DiagID::err_vectorize_target, call->range());
    return false;
  }
  for (const Signature &signature : decl.signatures) {
    if (!signature.returnType) {
      diags.report(DiagID::err_ufunc_signature_needs_return, signature.range);
      return false;
    }
    for (const Type *type : signature.args)
      if (!type->isScalar()) {
        diags.report(DiagID::err_ufunc_scalar_arguments, signature.range, {type->str()});
        return false;
      }
  }
  return true;
}

/// A decorator Kiln compiles with: `cuda.jit` as it is, or called.
static bool isDecorator(const ModuleValue &value) {
  const Symbol *symbol = value.symbolValue();
  return symbol &&
         (value.kind() == ModuleValue::Kind::Decorator ||
          (value.kind() == ModuleValue::Kind::Symbol && symbol->kind == Symbol::Kind::Decorator));
}

bool ModuleScopeBuilder::namesKilnDecorator(const Expr *decorator) {
  if (const auto *call = dyn_cast<CallExpr>(decorator))
    decorator = call->callee;
  if (!unknownDecoratorName(decorator).empty())
    return false;
  std::optional<ModuleValue> value = activeHostEvaluator->evaluate(decorator);
  return value && isDecorator(*value);
}

const CallExpr *ModuleScopeBuilder::calledDecorator(llvm::StringRef name) {
  for (const DecoratorCall &call : decoratorCalls) {
    if (call.function != name || call.modulePath != modulePath)
      continue;
    const Expr *parsed = parseExpression(
        sources, call.file, 0, uint32_t(sources.contents(call.file).size()), astContext, diags);
    return parsed ? dyn_cast<CallExpr>(parsed) : nullptr;
  }
  return nullptr;
}

std::string ModuleScopeBuilder::unknownDecoratorName(const Expr *decorator) const {
  const Expr *target = decorator;
  if (const auto *call = dyn_cast<CallExpr>(target))
    target = call->callee;
  llvm::SmallVector<llvm::StringRef, 4> attributes;
  while (const auto *attr = dyn_cast<AttributeExpr>(target)) {
    attributes.push_back(attr->attr);
    target = attr->value;
  }
  const auto *name = dyn_cast<NameExpr>(target);
  const ModuleValue *value = name ? activeScope->lookup(name->id) : nullptr;
  if (!value || value->kind() != ModuleValue::Kind::Symbol)
    return "";
  const Symbol *symbol = value->symbolValue();
  for (auto it = attributes.rbegin(); it != attributes.rend(); ++it) {
    const Symbol *member = BuiltinSymbols::get().member(*symbol, *it);
    if (!member) {
      std::string dotted = symbol->displayName();
      for (; it != attributes.rend(); ++it)
        dotted += "." + it->str();
      return dotted;
    }
    symbol = member;
  }
  return "";
}

/// A function of the module, or a closure. A build asked for some
/// functions only (in development, those called so far) compiles the others
/// only as far as the ones asked for need them: problems of a function it
/// was not asked for, such as a decorator host code called with types Kiln
/// does not know, are not the build's; a module-level function's name then
/// stands for why, for any function asked for that uses it.
void ModuleScopeBuilder::handleFunctionOrDefer(const FunctionDefStmt *def,
                                               const ModuleScope *closure,
                                               llvm::StringRef closureName) {
  llvm::StringRef name = closure ? closureName : def->name;
  if (onlyFunctions.empty() || llvm::is_contained(onlyFunctions, name)) {
    handleFunction(def, closure, closureName);
    return;
  }
  std::string refused;
  {
    DiagnosticEngine::Deferral deferral(diags);
    handleFunction(def, closure, closureName);
    if (const Diagnostic *error = deferral.firstError())
      refused = error->message;
  }
  if (!refused.empty() && !closure)
    bind(def->name, ModuleValue::hostValue("a function Kiln refused (" + refused + ")"),
         def->nameRange);
}

void ModuleScopeBuilder::handleFunction(const FunctionDefStmt *def, const ModuleScope *closure,
                                        llvm::StringRef closureName) {
  std::optional<ModuleEvaluator> closureEvaluator, closureHostEvaluator;
  if (closure) {
    closureEvaluator.emplace(*closure, sources, astContext, types, diags);
    closureHostEvaluator.emplace(*closure, sources, astContext, types, hostDiags);
    activeScope = closure;
    activeEvaluator = &*closureEvaluator;
    activeHostEvaluator = &*closureHostEvaluator;
  }
  auto restore = llvm::make_scope_exit([&] {
    activeScope = &scope;
    activeEvaluator = &evaluator;
    activeHostEvaluator = &hostEvaluator;
  });
  SourceRange header = def->nameRange;
  // The name exists even if the definition is rejected below, so that uses
  // of it do not add "not defined" errors. A closure is no module global.
  auto bind = [&](llvm::StringRef name, ModuleValue value, SourceRange range) {
    if (!closure)
      this->bind(name, std::move(value), range);
  };
  // A kernel or device function of this module the name held before.
  const FunctionDecl *earlier = nullptr;
  if (const ModuleValue *value = closure ? nullptr : scope.lookup(def->name);
      value && value->kind() == ModuleValue::Kind::Function &&
      value->functionValue()->scope == &scope && value->functionValue()->def)
    earlier = value->functionValue();
  bind(def->name, ModuleValue::invalid(), header);
  // In a module that stays Python, a function no Kiln decorator marks is
  // host code's, whatever else decorates it, unless host code calls Kiln's
  // decorator on it.
  // A closure's decorator may name the enclosing function's variables
  // (`@cuda.jit(debug=debug)`): the call the running code made says what
  // they were.
  const CallExpr *calledBy = closure ? calledDecorator(closureName) : nullptr;
  // `@staticmethod` over Kiln's decorator makes a plain function of a class;
  // alone, it is the decorator the checks below name.
  std::vector<const Expr *> decorators;
  for (const Expr *decorator : def->decorators)
    if (const auto *name = dyn_cast<NameExpr>(decorator); !name || name->id != "staticmethod")
      decorators.push_back(decorator);
  if (decorators.empty())
    decorators.assign(def->decorators.begin(), def->decorators.end());
  if (!calledBy && moduleStaysPython && llvm::none_of(decorators, [&](const Expr *decorator) {
        return namesKilnDecorator(decorator);
      })) {
    calledBy = calledDecorator(closure ? closureName : def->name);
    if (!calledBy) {
      // A function of the module host values may say more of (one
      // numba.extending.overload implements).
      bind(def->name,
           closure ? ModuleValue::hostValue("a function Kiln does not compile")
                   : ModuleValue::computedAtImport(modulePath, def->name.str(),
                                                   "a function Kiln does not compile"),
           header);
      return;
    }
  }
  if (!calledBy && decorators.empty()) {
    diags.report(DiagID::err_undecorated_function, def->nameRange, {def->name});
    return;
  }
  if (!calledBy && decorators.size() > 1) {
    diags.report(DiagID::err_multiple_decorators, decorators[1]->range(), {def->name});
    return;
  }
  if (def->isAsync) {
    diags.report(DiagID::err_async_function, header, {def->name});
    return;
  }
  const Expr *decorator = calledBy ? calledBy : decorators[0];
  if (std::string unknown = calledBy ? "" : unknownDecoratorName(decorator); !unknown.empty()) {
    diags.report(DiagID::err_unknown_decorator, decorator->range(), {"'" + unknown + "'"});
    return;
  }
  std::optional<ModuleValue> value =
      calledBy ? ModuleValue::decorator(&BuiltinSymbols::get().symbol(BuiltinId::CudaJit), calledBy)
               : activeEvaluator->evaluate(decorator);
  if (!value)
    return;
  const Symbol *symbol = value->symbolValue();
  const CallExpr *call =
      value->kind() == ModuleValue::Kind::Decorator ? value->decoratorCall() : nullptr;
  if (!isDecorator(*value)) {
    diags.report(DiagID::err_unknown_decorator, decorator->range(), {value->describe()});
    return;
  }

  auto decl = std::make_unique<FunctionDecl>();
  decl->name = closure ? closureName.str() : def->name.str();
  decl->scope = closure ? closure : &scope;
  decl->def = def;
  decl->range = header;
  bool ok = true;
  switch (symbol->id) {
  case BuiltinId::CudaJit:
    decl->kind = FunctionDecl::Kind::Kernel;
    if (call)
      ok = readJitDecorator(*decl, call, true);
    break;
  case BuiltinId::NumbaJit:
  case BuiltinId::NumbaNjit:
  case BuiltinId::NumbaRegisterJitable:
  case BuiltinId::NumbaCoreRegisterJitable:
    // CPU-jitted functions are callable from kernels as device functions.
    decl->kind = FunctionDecl::Kind::Device;
    if (call)
      ok = readJitDecorator(*decl, call, false);
    break;
  case BuiltinId::NumbaVectorize:
  case BuiltinId::CudaVectorize:
    decl->kind = FunctionDecl::Kind::Ufunc;
    if (!call) {
      diags.report(DiagID::err_vectorize_needs_signatures, decorator->range());
      return;
    }
    ok = readVectorizeDecorator(*decl, call, symbol->id == BuiltinId::CudaVectorize);
    break;
  case BuiltinId::CudaReduce:
    decl->kind = FunctionDecl::Kind::Reduction;
    if (call) {
      diags.report(DiagID::err_reduce_takes_no_arguments, call->range());
      return;
    }
    if (def->params.size() != 2) {
      diags.report(DiagID::err_reduce_arity, def->nameRange, {def->name});
      return;
    }
    break;
  case BuiltinId::NumbaGuvectorize:
    diags.report(DiagID::err_guvectorize_unsupported, decorator->range());
    return;
  default:
    diags.report(DiagID::err_unknown_decorator, decorator->range(), {value->describe()});
    return;
  }
  if (!ok)
    return;
  if (decl->kind != FunctionDecl::Kind::Device && !onlyFunctions.empty() &&
      !llvm::is_contained(onlyFunctions, decl->name)) {
    if (decl->kind != FunctionDecl::Kind::Kernel) {
      bind(def->name, ModuleValue::hostValue("a kernel this build does not compile"), header);
      return;
    }
    // A kernel this build does not compile as one is what device code may
    // call: a device function for each call's arguments, as Numba compiles
    // a kernel a kernel calls.
    decl->kind = FunctionDecl::Kind::Device;
    decl->signatures.clear();
  }

  if (!readParameters(*decl))
    return;
  for (const Signature &signature : decl->signatures) {
    if (signature.args.size() != def->params.size()) {
      diags.report(DiagID::err_signature_arity, signature.range,
                   {countOf(signature.args.size(), "argument"), def->name,
                    static_cast<unsigned>(def->params.size())});
      return;
    }
    if (decl->kind == FunctionDecl::Kind::Kernel && signature.returnType &&
        signature.returnType != types.none()) {
      diags.report(DiagID::err_kernel_returns_value, signature.range,
                   {signature.returnType->str()});
      return;
    }
  }
  if (earlier) {
    diags.report(DiagID::err_function_defined_again, def->nameRange, {decl->kindName(), def->name});
    diags.report(DiagID::note_first_definition, earlier->range, {def->name});
    return;
  }
  declareNestedFunctions(
      *decl, [&](FunctionDecl &nested) { return readParameters(nested); }, diags,
      scope.nestedDecls);
  bind(def->name, ModuleValue::function(decl.get()), header);
  scope.decls.push_back(std::move(decl));
}

bool ModuleScopeBuilder::readParameters(FunctionDecl &decl) {
  for (const Parameter &param : decl.def->params) {
    bool trailingVarArgs = param.form == Parameter::Form::VarArgs &&
                           &param == &decl.def->params.back() &&
                           decl.kind == FunctionDecl::Kind::Device;
    if (param.form != Parameter::Form::Positional && !trailingVarArgs) {
      diags.report(DiagID::err_variadic_parameters, param.range, {decl.def->name});
      return false;
    }
    decl.variadic = trailingVarArgs;
    if (param.defaultValue && decl.kind != FunctionDecl::Kind::Device) {
      diags.report(DiagID::err_kernel_default_argument, param.range, {param.name});
      return false;
    }
  }
  // Defaults are evaluated when the function is defined, as in Python; a
  // call that leaves the argument out passes the value.
  for (const Parameter &param : decl.def->params) {
    if (!param.defaultValue) {
      decl.defaults.push_back(std::nullopt);
      continue;
    }
    std::optional<ModuleValue> fallback = activeEvaluator->evaluate(param.defaultValue);
    if (!fallback)
      return false;
    if (fallback->kind() != ModuleValue::Kind::Constant) {
      diags.report(DiagID::err_expected_constant, param.defaultValue->range(),
                   {fallback->describe()});
      return false;
    }
    decl.defaults.push_back(fallback->constantValue());
  }
  return true;
}

void ModuleScopeBuilder::attachExternalSignatures(
    llvm::ArrayRef<ExternalSignature> externalSignatures) {
  llvm::StringSet<> known;
  for (auto &decl : scope.decls) {
    known.insert(decl->name);
    bool needsSignatures = decl->kind == FunctionDecl::Kind::Reduction ||
                           (decl->kind == FunctionDecl::Kind::Kernel && !moduleStaysPython);
    bool fromDecorator = !decl->signatures.empty();
    bool externallyGiven = false;
    for (const ExternalSignature &external : externalSignatures) {
      if (external.function != decl->name)
        continue;
      externallyGiven = true;
      if (fromDecorator) {
        diags.report(DiagID::warn_external_signature_ignored, decl->range,
                     {decl->name, external.origin});
        break;
      }
      std::optional<Signature> signature =
          evaluator.signatureFromText(external.file, external.begin, external.end);
      if (!signature)
        continue;
      if (decl->def && signature->args.size() != decl->def->params.size()) {
        diags.report(DiagID::err_signature_arity, signature->range,
                     {countOf(signature->args.size(), "argument"), decl->name,
                      static_cast<unsigned>(decl->def->params.size())});
        continue;
      }
      decl->signatures.push_back(std::move(*signature));
    }
    // A signature that was given but failed to read has its own error.
    if (decl->kind == FunctionDecl::Kind::Kernel && decl->signatures.empty() && needsSignatures &&
        !externallyGiven)
      diags.report(DiagID::err_kernel_without_signature, decl->range, {decl->name})
          .note(DiagID::note_add_signature, decl->range, {decl->name});
  }
  // Signatures of kernels this build leaves to host code are for others.
  for (const ExternalSignature &external : externalSignatures)
    if (!known.contains(external.function) &&
        (onlyFunctions.empty() || llvm::is_contained(onlyFunctions, external.function)))
      diags.report(DiagID::err_external_signature_unknown_function,
                   SourceRange({external.file, external.begin}, {external.file, external.end}),
                   {external.function, external.origin});
}

} // namespace kiln
