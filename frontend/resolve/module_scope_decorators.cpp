//===- frontend/resolve/module_scope_decorators.cpp - Kiln decorators -----===//

#include "frontend/parse/parser.h"
#include "frontend/resolve/module_scope_builder.h"

namespace kiln {

using namespace ast;
using llvm::dyn_cast;

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
  // A signature without a return type (`(float32, int32)`) has it inferred,
  // as Numba compiles the ufunc's core.
  for (const Signature &signature : decl.signatures) {
    for (const Type *type : signature.args)
      if (!type->isScalar() && !llvm::isa<DateTimeType>(type)) {
        diags.report(DiagID::err_ufunc_scalar_arguments, signature.range, {type->str()});
        return false;
      }
  }
  return true;
}

bool isKilnDecorator(const ModuleValue &value) {
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
  return value && isKilnDecorator(*value);
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

} // namespace kiln
