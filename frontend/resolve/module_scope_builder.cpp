//===- frontend/resolve/module_scope_builder.cpp - Reading a module -------===//

#include "frontend/resolve/module_scope_builder.h"

#include "frontend/parse/bound_names.h"
#include "frontend/resolve/constant_folding.h"

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;

//===----------------------------------------------------------------------===//
// Building the scope
//===----------------------------------------------------------------------===//

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
    if (const auto *def = dyn_cast<FunctionDefStmt>(stmt)) {
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
    llvm::SmallVector<llvm::ArrayRef<Stmt *>, 2> nested = ast::nestedBodies(stmt);
    if (const auto *cls = dyn_cast<ClassDefStmt>(stmt))
      nested.push_back(cls->body);
    for (llvm::ArrayRef<Stmt *> inner : nested)
      if (const FunctionDefStmt *found = definitionAt(inner, line, imports))
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
    break;
  default:
    break;
  }
  for (llvm::ArrayRef<Stmt *> nested : ast::nestedBodies(stmt))
    bindAll(nested);
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

} // namespace kiln
