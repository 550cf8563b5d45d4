//===- frontend/resolve/module_scope_imports.cpp - Imports ----------------===//

#include "frontend/resolve/module_scope_builder.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln {

using namespace ast;

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

} // namespace kiln
