//===- frontend/resolve/module_scope_assignments.cpp ----------------------===//

#include "frontend/resolve/module_scope_builder.h"

namespace kiln {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

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

} // namespace kiln
