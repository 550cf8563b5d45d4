//===- frontend/resolve/module_scope_functions.cpp - Decorated functions --===//
//
// Decorated function definitions become FunctionDecls: the decorator that
// names Kiln's kind of function and its options, the parameters and their
// defaults, the signatures, given by the decorator or from outside.
//
//===----------------------------------------------------------------------===//

#include "frontend/resolve/module_evaluator.h"
#include "frontend/resolve/module_scope_builder.h"
#include "frontend/resolve/nested_functions.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringSet.h>

namespace kiln {

using namespace ast;
using llvm::dyn_cast;

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
  if (!isKilnDecorator(*value)) {
    diags.report(DiagID::err_unknown_decorator, decorator->range(), {value->describe()});
    return;
  }

  auto decl = std::make_unique<FunctionDecl>();
  decl->name = closure ? closureName.str() : def->name.str();
  decl->scope = closure ? closure : &scope;
  decl->def = def;
  decl->range = header;
  if (!readKilnDecorator(*decl, *value, decorator))
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

  if (!readParameters(*decl) || !checkSignatures(*decl))
    return;
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

bool ModuleScopeBuilder::readKilnDecorator(FunctionDecl &decl, const ModuleValue &value,
                                           const Expr *decorator) {
  const Symbol *symbol = value.symbolValue();
  const CallExpr *call =
      value.kind() == ModuleValue::Kind::Decorator ? value.decoratorCall() : nullptr;
  bool ok = true;
  switch (symbol->id) {
  case BuiltinId::CudaJit:
    decl.kind = FunctionDecl::Kind::Kernel;
    if (call)
      ok = readJitDecorator(decl, call, true);
    break;
  case BuiltinId::NumbaJit:
  case BuiltinId::NumbaNjit:
  case BuiltinId::NumbaRegisterJitable:
  case BuiltinId::NumbaCoreRegisterJitable:
    // CPU-jitted functions are callable from kernels as device functions.
    decl.kind = FunctionDecl::Kind::Device;
    if (call)
      ok = readJitDecorator(decl, call, false);
    break;
  case BuiltinId::NumbaVectorize:
  case BuiltinId::CudaVectorize:
    decl.kind = FunctionDecl::Kind::Ufunc;
    if (!call) {
      diags.report(DiagID::err_vectorize_needs_signatures, decorator->range());
      return false;
    }
    ok = readVectorizeDecorator(decl, call, symbol->id == BuiltinId::CudaVectorize);
    break;
  case BuiltinId::CudaReduce:
    decl.kind = FunctionDecl::Kind::Reduction;
    if (call) {
      diags.report(DiagID::err_reduce_takes_no_arguments, call->range());
      return false;
    }
    if (decl.def->params.size() != 2) {
      diags.report(DiagID::err_reduce_arity, decl.def->nameRange, {decl.def->name});
      return false;
    }
    break;
  case BuiltinId::NumbaGuvectorize:
    diags.report(DiagID::err_guvectorize_unsupported, decorator->range());
    return false;
  default:
    diags.report(DiagID::err_unknown_decorator, decorator->range(), {value.describe()});
    return false;
  }
  return ok;
}

bool ModuleScopeBuilder::checkSignatures(const FunctionDecl &decl) {
  for (const Signature &signature : decl.signatures) {
    if (signature.args.size() != decl.def->params.size()) {
      diags.report(DiagID::err_signature_arity, signature.range,
                   {countOf(signature.args.size(), "argument"), decl.def->name,
                    static_cast<unsigned>(decl.def->params.size())});
      return false;
    }
    if (decl.kind == FunctionDecl::Kind::Kernel && signature.returnType &&
        signature.returnType != types.none()) {
      diags.report(DiagID::err_kernel_returns_value, signature.range,
                   {signature.returnType->str()});
      return false;
    }
  }
  return true;
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
