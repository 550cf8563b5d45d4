//===- frontend/resolve/module_value.cpp - The values module names denote -===//

#include "frontend/resolve/module_scope.h"

namespace kiln {

using namespace ast;

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
  ModuleValue v(Kind::HostValue);
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
  case Kind::HostValue:
    return hostPart;
  case Kind::Invalid:
    return importPart.empty() ? "an invalid definition" : "module '" + importPart + "'";
  }
  return "value";
}

} // namespace kiln
