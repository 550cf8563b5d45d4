//===- frontend/resolve/module_scope_classes.cpp - Enums and exceptions ---===//

#include "frontend/resolve/module_scope_builder.h"

namespace kiln {

using namespace ast;
using llvm::dyn_cast;
using llvm::isa;

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

} // namespace kiln
