//===- frontend/resolve/module_scope_builder.h ----------------*- C++ -*-===//
//
// Reads a module's top-level statements into its ModuleScope: imports,
// assignments, classes, decorated functions, closures the build asks for.
// Private to the module scope's sources, one file per kind of statement.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/parse/ast.h"
#include "frontend/resolve/module_evaluator.h"
#include "frontend/resolve/module_scope.h"

#include <llvm/ADT/StringSet.h>

#include <optional>
#include <string>

namespace kiln {

/// A decorator Kiln compiles with: `cuda.jit` as it is, or called.
bool isKilnDecorator(const ModuleValue &value);

class ModuleScopeBuilder {
public:
  ModuleScopeBuilder(ModuleScope &scope, SourceManager &sources, ast::AstContext &astContext,
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

  void run(const ast::Module &module, llvm::ArrayRef<ExternalSignature> externalSignatures,
           llvm::ArrayRef<ClosureRequest> closures);

private:
  void bind(llvm::StringRef name, ModuleValue value, SourceRange range) {
    ModuleScope &target = bindingTarget ? *bindingTarget : scope;
    target.bindings.insert_or_assign(name, std::move(value));
    target.bindingRanges[name] = range;
  }
  void handleImport(const ast::ImportStmt *import);
  void handleImportFrom(const ast::ImportFromStmt *import);
  bool bindSourceImport(const ast::ImportAlias &alias);
  bool bindSourceImports(const ast::ImportFromStmt *import);
  void handleClassDef(const ast::ClassDefStmt *cls);
  std::optional<EnumDefinition> enumDefinition(const ast::ClassDefStmt *cls);
  const Symbol *userException(const ast::ClassDefStmt *cls);
  /// Whether `expr` names `enum.<name>` (imported either way).
  bool namesEnumModuleMember(const ast::Expr *expr, llvm::StringRef name);
  void handleAssign(const ast::Stmt *stmt, const ast::Expr *target, const ast::Expr *value);
  /// A decorated function: of the module, or, given `closure` (the scope of
  /// its free variables), a closure the build calls `closureName`.
  void handleFunctionOrDefer(const ast::FunctionDefStmt *def, const ModuleScope *closure = nullptr,
                             llvm::StringRef closureName = {});
  void handleFunction(const ast::FunctionDefStmt *def, const ModuleScope *closure = nullptr,
                      llvm::StringRef closureName = "");
  /// The closure a ClosureRequest asks for, as a function of the module.
  void addClosure(const ast::Module &module, const ClosureRequest &request);
  /// The closure the module global `name` is, by what host values say of
  /// it; whether the module has a function of that name now.
  bool addGlobalClosure(const ast::Module &module, llvm::StringRef name);
  /// The function whose first line is `line`: defined inside another, or
  /// at the top level (a function jitted more than once in different ways).
  /// The function definition whose first line is `line`, in `body` or
  /// nested in it; with `imports`, also the import statements of the
  /// functions it is nested in, outermost first.
  const ast::FunctionDefStmt *definitionAt(llvm::ArrayRef<ast::Stmt *> body, uint32_t line,
                                           std::vector<const ast::Stmt *> *imports = nullptr) const;
  /// Binds in `closure` what the imports of its enclosing functions bind
  /// (`from numba import cuda` or `import numba` inside a test function),
  /// which its decorators and body may name.
  void bindEnclosingImports(ModuleScope &closure, llvm::ArrayRef<const ast::Stmt *> imports);
  /// Where bind() binds: the module's scope, or a closure's.
  ModuleScope *bindingTarget = nullptr;
  /// The `jit(...)` call host code applied to the function the build calls
  /// `name`, parsed; null if there is none (or it does not parse, reported).
  const ast::CallExpr *calledDecorator(llvm::StringRef name);
  std::string unknownDecoratorName(const ast::Expr *decorator) const;
  /// Whether `decorator` (`cuda.jit`, `cuda.jit(...)`, `vectorize([...])`)
  /// names one of Kiln's decorators; its arguments are not looked at.
  bool namesKilnDecorator(const ast::Expr *decorator);
  /// Reads the Kiln decorator `value` (written as `decorator`) into
  /// `decl`: its kind and options. False if the decorator was rejected.
  bool readKilnDecorator(FunctionDecl &decl, const ModuleValue &value, const ast::Expr *decorator);
  bool readJitDecorator(FunctionDecl &decl, const ast::CallExpr *call, bool isCudaJit);
  /// Whether each of `decl`'s signatures has an argument for each
  /// parameter and, for a kernel, returns nothing; reports the first that
  /// does not.
  bool checkSignatures(const FunctionDecl &decl);
  /// Checks `decl`'s parameters (positional, `*args` last for device
  /// functions, defaults only for those) and reads their defaults.
  bool readParameters(FunctionDecl &decl);
  /// A decorator option's value. One host code computes at import
  /// (`fastmath=config.FLAGS`, where config builds FLAGS) is read from the
  /// running module: a module's configuration holds still after its import.
  std::optional<ModuleValue> evaluateOption(const ast::Expr *option) {
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
  bool readVectorizeDecorator(FunctionDecl &decl, const ast::CallExpr *call, bool isCudaVectorize);
  void handleDeclareDevice(const ast::Stmt *stmt, llvm::StringRef name, const ast::CallExpr *call);
  bool readLinkFiles(const ModuleValue &value, SourceRange range, std::vector<std::string> &files);
  void reportTopLevel(const ast::Stmt *stmt);
  /// A statement Kiln does not run, in a module that stays Python: what it
  /// binds (in nested blocks too: an `if` at module level assigns module
  /// globals) is host code's.
  void bindHostNames(const ast::Stmt *stmt);
  void bindHostTarget(const ast::Expr *target);
  /// Evaluates an assignment's value; in a module that stays Python, a value
  /// Kiln cannot evaluate is no error but host code's (none is returned).
  std::optional<ModuleValue> evaluateAssigned(const ast::Expr *value) {
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
  ast::AstContext &astContext;
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

} // namespace kiln
