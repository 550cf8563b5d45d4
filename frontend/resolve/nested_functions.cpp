//===- frontend/resolve/nested_functions.cpp ------------------------------===//

#include "frontend/resolve/nested_functions.h"

#include "frontend/parse/bound_names.h"

#include <llvm/ADT/StringSet.h>

#include <algorithm>

namespace kiln {

namespace {

/// Adds to `free` the names `def` uses and does not bind (Python's free
/// variables): those its body reads, and the free variables of the
/// functions it defines that it does not bind either.
void collectFreeNames(const ast::FunctionDefStmt &def, llvm::StringSet<> &free) {
  llvm::StringSet<> own;
  for (const ast::Parameter &param : def.params)
    own.insert(param.name);
  ast::collectAssignedNames(def.body, own);
  llvm::StringSet<> used;
  ast::collectUsedNames(def.body, used);
  for (const ast::FunctionDefStmt *inner : ast::definedFunctions(def.body)) {
    own.insert(inner->name);
    collectFreeNames(*inner, used);
  }
  for (const ast::FunctionDefStmt *lambda : ast::definedLambdas(def.body))
    collectFreeNames(*lambda, used);
  for (const auto &entry : used)
    if (!own.contains(entry.getKey()))
      free.insert(entry.getKey());
}

/// The names `def` reads from the enclosing function, whose variables are
/// `visible`, in a stable order.
std::vector<std::string> capturesOf(const ast::FunctionDefStmt &def,
                                    const llvm::StringSet<> &visible) {
  llvm::StringSet<> free;
  collectFreeNames(def, free);
  std::vector<std::string> captures;
  for (const auto &entry : free)
    if (visible.contains(entry.getKey()))
      captures.push_back(entry.getKey().str());
  std::sort(captures.begin(), captures.end());
  return captures;
}

/// A name of the enclosing function's variables (`visible`) that a default
/// value of `def` reads; null if none does.
const ast::NameExpr *variableInDefaults(const ast::FunctionDefStmt &def,
                                        const llvm::StringSet<> &visible) {
  const ast::NameExpr *found = nullptr;
  for (const ast::Parameter &param : def.params)
    if (param.defaultValue)
      ast::forEachSubexpression(param.defaultValue, [&](ast::Expr *e) {
        if (const auto *name = llvm::dyn_cast<ast::NameExpr>(e);
            name && !found && visible.contains(name->id))
          found = name;
      });
  return found;
}

} // namespace

void declareNestedFunctions(FunctionDecl &enclosing,
                            llvm::function_ref<bool(FunctionDecl &)> readParameters,
                            DiagnosticEngine &diags,
                            std::vector<std::unique_ptr<FunctionDecl>> &declared) {
  const ast::FunctionDefStmt &def = *enclosing.def;
  std::vector<const ast::FunctionDefStmt *> defined = ast::definedFunctions(def.body);
  std::vector<const ast::FunctionDefStmt *> lambdas = ast::definedLambdas(def.body);
  if (defined.empty() && lambdas.empty())
    return;
  llvm::StringSet<> assigned;
  ast::collectAssignedNames(def.body, assigned);
  // What an inner function may capture: the enclosing function's variables.
  llvm::StringSet<> visible = assigned;
  for (const ast::Parameter &param : def.params)
    visible.insert(param.name);
  for (const std::string &capture : enclosing.captures)
    visible.insert(capture);
  for (const ast::FunctionDefStmt *inner : defined)
    visible.insert(inner->name);

  // Lambdas have no name of their own to be called by: each is named after
  // its place among the enclosing function's, "<lambda>", "<lambda>2", ...
  unsigned lambdaCount = 0;
  auto declare = [&](const ast::FunctionDefStmt *inner, llvm::StringRef name) {
    auto decl = std::make_unique<FunctionDecl>();
    decl->name = enclosing.name + "." + name.str();
    decl->kind = FunctionDecl::Kind::Device;
    decl->scope = enclosing.scope;
    decl->def = inner;
    decl->range = inner->nameRange;
    // Numba compiles them with the enclosing function's flags.
    decl->options.fastmath = enclosing.options.fastmath;
    decl->options.fastmathFlags = enclosing.options.fastmathFlags;
    decl->options.debug = enclosing.options.debug;
    decl->options.optimize = enclosing.options.optimize;
    decl->options.lineinfo = enclosing.options.lineinfo;
    decl->options.boundscheck = enclosing.options.boundscheck;
    decl->captures = capturesOf(*inner, visible);
    return decl;
  };
  auto add = [&](std::unique_ptr<FunctionDecl> decl) {
    if (!readParameters(*decl))
      return;
    FunctionDecl &nested = *decl;
    enclosing.nested.push_back(&nested);
    declared.push_back(std::move(decl));
    declareNestedFunctions(nested, readParameters, diags, declared);
  };
  for (const ast::FunctionDefStmt *lambda : lambdas) {
    ++lambdaCount;
    std::string name = lambdaCount == 1 ? "<lambda>" : "<lambda>" + std::to_string(lambdaCount);
    std::unique_ptr<FunctionDecl> decl = declare(lambda, name);
    if (const ast::NameExpr *variable = variableInDefaults(*lambda, visible)) {
      diags.report(DiagID::err_nested_default_reads_variable, variable->range(),
                   {variable->id, enclosing.name});
      continue;
    }
    add(std::move(decl));
  }

  llvm::StringSet<> seen;
  for (const ast::FunctionDefStmt *inner : defined) {
    if (!inner->decorators.empty()) {
      diags.report(DiagID::err_nested_function_decorated, inner->decorators.front()->range(),
                   {inner->name});
      continue;
    }
    if (inner->isAsync) {
      diags.report(DiagID::err_async_function, inner->nameRange, {inner->name});
      continue;
    }
    // Calls go to the function by its name, so the name must hold it alone.
    bool isParameter = llvm::any_of(
        def.params, [&](const ast::Parameter &param) { return param.name == inner->name; });
    if (isParameter || assigned.contains(inner->name) || !seen.insert(inner->name).second) {
      diags.report(DiagID::err_nested_function_rebound, inner->nameRange,
                   {inner->name, enclosing.name});
      continue;
    }
    std::unique_ptr<FunctionDecl> decl = declare(inner, inner->name);
    if (llvm::is_contained(decl->captures, inner->name.str())) {
      diags.report(DiagID::err_nested_function_recursive, inner->nameRange, {inner->name});
      continue;
    }
    // Defaults are evaluated as module constants, so none may read a
    // variable of the enclosing function.
    if (const ast::NameExpr *variable = variableInDefaults(*inner, visible)) {
      diags.report(DiagID::err_nested_default_reads_variable, variable->range(),
                   {variable->id, enclosing.name});
      continue;
    }
    add(std::move(decl));
  }
}

} // namespace kiln
