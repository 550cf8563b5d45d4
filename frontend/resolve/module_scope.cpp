//===- frontend/resolve/module_scope.cpp - What a kernel module defines ---===//

#include "frontend/resolve/module_scope.h"

namespace kiln {

using namespace ast;

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

} // namespace kiln
