//===- frontend/ssa/ssa_names.cpp - Names: locals, closures, globals ------===//
//
// The names a function reads: which are its local variables (Python's
// scoping rule) and which name functions defined in it, directly or through
// a variable assigned once; and what a read of each becomes: a variable's
// current value, a closure with its captures' current values, or a
// module-level value (a constant frozen into the kernel, a global, a
// member of a source module or of an enum the module defines).
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/bound_names.h"
#include "frontend/resolve/builtin_symbols.h"
#include "frontend/ssa/ssa_builder.h"

#include <llvm/ADT/ScopeExit.h>

namespace kiln::ssa {

using namespace ast;
using llvm::dyn_cast;

/// Names bound by statements kernels cannot contain (classes, imports):
/// they are reported once, and their uses stay silent.
static void collectUnsupportedBindings(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
  forEachStatement(body, [&](const Stmt *stmt) {
    if (const auto *cls = dyn_cast<ClassDefStmt>(stmt))
      names.insert(cls->name);
    else if (const auto *import = dyn_cast<ImportStmt>(stmt))
      for (const ImportAlias &alias : import->names)
        names.insert(alias.asName.empty() ? alias.name.split('.').first : alias.asName);
    else if (const auto *importFrom = dyn_cast<ImportFromStmt>(stmt))
      for (const ImportAlias &alias : importFrom->names)
        names.insert(alias.asName.empty() ? alias.name : alias.asName);
  });
}

void SSABuilder::collectLocalNames(const FunctionDefStmt &def) {
  // Names a function binds anywhere in its body are its local variables
  // (Python's scoping rule); every other name is a global. A function
  // defined inside another also reads the variables it captures.
  for (const Parameter &param : def.params)
    locals.insert(param.name);
  for (const std::string &capture : fn.decl->captures)
    locals.insert(capture);
  collectAssignedNames(def.body, locals);
  for (const FunctionDecl *nested : fn.decl->nested)
    functionsByDefinition[nested->def] = nested;
  for (const FunctionDefStmt *inner : definedFunctions(def.body)) {
    const FunctionDecl *nested = functionsByDefinition.lookup(inner);
    // One that could not be declared was reported; its uses stay silent.
    if (!nested) {
      undeclaredFunctions.insert(inner->name);
      continue;
    }
    locals.insert(inner->name);
    nestedFunctions[inner->name] = nested;
  }
  findFunctionAliases(def);
  collectUnsupportedBindings(def.body, unsupportedBindings);
}

// A function's captures are read when it is called, as Numba's inlining
// reads the enclosing variables: `f = lambda v: v * k; k = 2; f(x)` uses 2.
// Through a variable assigned once, calls get that too.
void SSABuilder::findFunctionAliases(const FunctionDefStmt &def) {
  llvm::StringMap<unsigned> assignments;
  forEachAssignedName(def.body, [&](llvm::StringRef name) { ++assignments[name]; });
  for (const Parameter &param : def.params)
    ++assignments[param.name];
  for (const std::string &capture : fn.decl->captures)
    ++assignments[capture];
  forEachStatement(def.body, [&](const Stmt *stmt) {
    const auto *assign = dyn_cast<AssignStmt>(stmt);
    const auto *target = assign && assign->targets.size() == 1
                             ? dyn_cast<NameExpr>(assign->targets.front())
                             : nullptr;
    if (!target || assignments.lookup(target->id) != 1)
      return;
    if (const FunctionDecl *function = functionMadeBy(assign->value))
      functionAliases[target->id] = function;
  });
}

const FunctionDecl *SSABuilder::functionMadeBy(const Expr *value) const {
  if (const auto *lambda = dyn_cast<LambdaExpr>(value))
    return functionsByDefinition.lookup(lambda->function);
  if (const auto *name = dyn_cast<NameExpr>(value))
    return nestedFunctions.lookup(name->id);
  return nullptr;
}

Instr *SSABuilder::buildName(const NameExpr *name) {
  if (unsupportedBindings.contains(name->id) && !locals.contains(name->id)) {
    failed = true; // the binding statement was reported
    return nullptr;
  }
  if (undeclaredFunctions.contains(name->id)) {
    failed = true; // the definition was reported
    return nullptr;
  }
  if (const FunctionDecl *nested = nestedFunctions.lookup(name->id))
    return buildClosure(*nested, name->range());
  if (const FunctionDecl *aliased = functionAliases.lookup(name->id)) {
    ensureOpenBlock();
    Instr *assigned = readVariable(name->id, current, name->range());
    if (assigned->op == Op::Undefined)
      return undefined(name->id, name->range());
    return buildClosure(*aliased, name->range());
  }
  if (locals.contains(name->id)) {
    ensureOpenBlock();
    Instr *value = readVariable(name->id, current, name->range());
    // After `del x`, a read is undefined; the error points at the read.
    if (value->op == Op::Undefined && value->range.begin.offset != name->range().begin.offset) {
      bool deleted = value->deleted;
      value = undefined(name->id, name->range());
      value->deleted = deleted;
    }
    return value;
  }
  const ModuleValue *global = scope.lookup(name->id);
  if (!global) {
    if (isPythonBuiltinName(name->id))
      return unsupported(DiagID::err_unsupported_builtin, name->range(), {name->id});
    return unsupported(DiagID::err_undefined_name, name->range(), {name->id});
  }
  return buildGlobal(global, name->id, name->range());
}

Instr *SSABuilder::buildClosure(const FunctionDecl &function, SourceRange range) {
  if (!closuresBeingBuilt.insert(&function).second)
    return unsupported(DiagID::err_nested_function_recursive, range, {function.def->name});
  auto done = llvm::make_scope_exit([&] { closuresBeingBuilt.erase(&function); });
  llvm::SmallVector<Instr *, 4> captured;
  for (const std::string &capture : function.captures) {
    Instr *value = nullptr;
    if (const FunctionDecl *nested = nestedFunctions.lookup(capture)) {
      value = buildClosure(*nested, range);
    } else if (const FunctionDecl *aliased = functionAliases.lookup(capture)) {
      value = buildClosure(*aliased, range);
    } else {
      ensureOpenBlock();
      value = readVariable(capture, current, range);
    }
    if (!value)
      return nullptr;
    captured.push_back(value);
  }
  Instr *closure = emit(Op::Closure, range, captured);
  closure->function = &function;
  closure->name = function.def->name.str();
  return closure;
}

Instr *SSABuilder::buildGlobal(const ModuleValue *global, llvm::StringRef path, SourceRange range) {
  if (global->kind() == ModuleValue::Kind::HostValue)
    return unsupported(DiagID::err_host_value_used, range, {path, global->hostDescription()});
  if (global->kind() == ModuleValue::Kind::Invalid) {
    if (!global->ignoredImport().empty())
      return unsupported(DiagID::err_ignored_import_used, range, {path, global->ignoredImport()});
    failed = true; // its definition was reported
    return nullptr;
  }
  // Module constants are frozen into the kernel, as Numba freezes globals.
  if (global->kind() == ModuleValue::Kind::Constant)
    return emitConstant(global->constantValue(), range, false);
  Instr *instr = emit(Op::Global, range);
  instr->global = global;
  instr->name = path.str();
  return instr;
}

std::string SSABuilder::modulePath(const Expr *expr) const {
  if (const auto *name = dyn_cast<NameExpr>(expr))
    return locals.contains(name->id) ? "" : name->id.str();
  const auto *attr = dyn_cast<AttributeExpr>(expr);
  if (!attr)
    return "";
  std::string base = modulePath(attr->value);
  const ModuleValue *module = base.empty() ? nullptr : scope.lookupPath(base);
  if (!module || module->kind() != ModuleValue::Kind::Module)
    return "";
  return base + "." + attr->attr.str();
}

const EnumDefinition *SSABuilder::enumNamed(const Expr *expr) const {
  std::string path = modulePath(expr);
  const ModuleValue *value = path.empty() ? nullptr : scope.lookupPath(path);
  return value && value->kind() == ModuleValue::Kind::Enum ? &value->enumValue() : nullptr;
}

std::optional<SSABuilder::EnumMemberRef> SSABuilder::enumMemberRef(const Expr *expr) {
  if (const auto *attr = dyn_cast<AttributeExpr>(expr))
    if (const EnumDefinition *enumeration = enumNamed(attr->value))
      return EnumMemberRef{enumeration, attr->attr, attr->range()};
  if (const auto *sub = dyn_cast<SubscriptExpr>(expr))
    if (const EnumDefinition *enumeration = enumNamed(sub->value))
      if (const auto *name = dyn_cast<StringLiteralExpr>(sub->index))
        return EnumMemberRef{enumeration, name->value, sub->index->range()};
  return std::nullopt;
}

Instr *SSABuilder::buildEnumMember(const EnumMemberRef &member, SourceRange range, bool valueOnly) {
  const EnumDefinition &enumeration = *member.enumeration;
  const ConstantValue *value = enumeration.member(member.name);
  if (!value)
    return unsupported(DiagID::err_enum_has_no_member, member.nameRange,
                       {enumeration.name, member.name});
  if (valueOnly)
    return emitConstant(*value, range, false);
  return emitConstant(
      ConstantValue::enumMember(*value, enumeration.name, member.name.str(), enumeration.isIntEnum),
      range, false);
}

} // namespace kiln::ssa
