//===- frontend/ssa/build_ssa.cpp - AST to untyped SSA --------------------===//
//
// Walks a function body once, emitting generic operations into basic blocks
// and reading and writing variables through Braun et al.'s on-demand SSA
// construction ("Simple and Efficient Construction of Static Single
// Assignment Form", CC 2013): a read looks the variable up in the current
// block, then recursively in its predecessors, creating a phi only where
// several definitions meet. Blocks are sealed once all their predecessors
// are known; trivial phis are removed as they appear.
//
// Like CPython's compiler (whose bytecode Numba reads), the builder folds
// operators applied to literals: `2 + 3` is the constant 5, typed
// Literal[int](5), while `TILE + 1` stays an addition.
//
//===----------------------------------------------------------------------===//

#include "frontend/parse/bound_names.h"
#include "frontend/resolve/constant_folding.h"
#include "frontend/ssa/ssa.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/StringSet.h>

#include <functional>
#include <optional>

namespace kiln::ssa {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

llvm::SmallVector<Block *, 2> Block::successors() const {
  switch (terminator.kind) {
  case Terminator::Kind::Jump:
    return {terminator.target};
  case Terminator::Kind::Branch:
    return {terminator.target, terminator.falseTarget};
  default:
    return {};
  }
}

std::vector<Block *> Function::reversePostOrder() const {
  std::vector<Block *> postOrder;
  llvm::DenseSet<Block *> visited;
  // Iterative DFS: deep nesting must not exhaust the stack.
  std::vector<std::pair<Block *, unsigned>> stack{{entry(), 0}};
  visited.insert(entry());
  while (!stack.empty()) {
    auto &[block, next] = stack.back();
    llvm::SmallVector<Block *, 2> successors = block->successors();
    if (next < successors.size()) {
      Block *successor = successors[next++];
      if (visited.insert(successor).second)
        stack.push_back({successor, 0});
      continue;
    }
    postOrder.push_back(block);
    stack.pop_back();
  }
  return {postOrder.rbegin(), postOrder.rend()};
}

namespace {

/// Whether `value`, built from `expr`, is what CPython folds when it
/// compiles: a literal, or operators applied to literals; not a name, even
/// of a variable that holds a literal.
bool isLiteral(const Instr *value, const Expr *expr) {
  return value->op == Op::Constant && value->fromLiteral && !isa<NameExpr>(expr);
}

/// Names bound by statements kernels cannot contain (classes, imports):
/// they are reported once, and their uses stay silent.
void collectUnsupportedBindings(llvm::ArrayRef<Stmt *> body, llvm::StringSet<> &names) {
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

class SSABuilder {
public:
  SSABuilder(Function &fn, const ModuleScope &scope, TypeContext &types, DiagnosticEngine &diags)
      : fn(fn), scope(scope), types(types), diags(diags) {}

  bool build();

private:
  //===--- Blocks and instructions ---===//
  Block *newBlock() {
    fn.blocks.push_back(std::make_unique<Block>(static_cast<unsigned>(fn.blocks.size())));
    return fn.blocks.back().get();
  }
  Instr *newInstr(Op op, SourceRange range) {
    fn.instrs.push_back(
        std::make_unique<Instr>(op, static_cast<unsigned>(fn.instrs.size()), range));
    return fn.instrs.back().get();
  }
  /// Statements after a `return`, `break` or `continue` land in a fresh
  /// block that nothing jumps to; it is dropped after building.
  void ensureOpenBlock() {
    if (current->isTerminated()) {
      current = newBlock();
      sealed.insert(current);
    }
  }
  Instr *emit(Op op, SourceRange range, llvm::ArrayRef<Instr *> operands = {}) {
    ensureOpenBlock();
    Instr *instr = newInstr(op, range);
    instr->operands.assign(operands.begin(), operands.end());
    instr->block = current;
    current->instrs.push_back(instr);
    return instr;
  }
  Instr *emitConstant(ConstantValue value, SourceRange range, bool fromLiteral) {
    Instr *instr = emit(Op::Constant, range);
    instr->constant = std::move(value);
    instr->fromLiteral = fromLiteral;
    return instr;
  }
  void addEdge(Block *from, Block *to) { to->predecessors.push_back(from); }
  void jump(Block *to, SourceRange range) {
    if (current->isTerminated())
      return;
    current->terminator = {Terminator::Kind::Jump, nullptr, to, nullptr, range};
    addEdge(current, to);
  }
  void branch(Instr *condition, Block *ifTrue, Block *ifFalse, SourceRange range) {
    ensureOpenBlock();
    current->terminator = {Terminator::Kind::Branch, condition, ifTrue, ifFalse, range};
    addEdge(current, ifTrue);
    addEdge(current, ifFalse);
  }

  //===--- Variables (Braun et al.) ---===//
  void writeVariable(llvm::StringRef name, Block *block, Instr *value) {
    currentDef[block][name] = value;
  }
  /// An assignment (or a `del`, binding an Undefined) in the program, as
  /// opposed to writeVariable's caching of what a read found.
  void bindVariable(llvm::StringRef name, Block *block, Instr *value) {
    writeVariable(name, block, value);
    block->bindings[name] = value->op != Op::Undefined;
  }
  Instr *readVariable(llvm::StringRef name, Block *block, SourceRange range);
  Instr *readVariableRecursive(llvm::StringRef name, Block *block, SourceRange range);
  Instr *addPhiOperands(llvm::StringRef name, Instr *phi, SourceRange range);
  Instr *tryRemoveTrivialPhi(Instr *phi);
  /// What a removed phi stands for now (following chains of removals); any
  /// other value is itself.
  Instr *resolve(Instr *value) const;
  void replaceAllUses(Instr *from, Instr *to);
  void sealBlock(Block *block);
  void removeUnusedConstants();
  Instr *emitCompare(Instr *lhs, Instr *rhs, CompareOp op, SourceRange range) {
    Instr *instr = emit(Op::Compare, range, {lhs, rhs});
    instr->compareOp = op;
    return instr;
  }
  Instr *undefined(llvm::StringRef name, SourceRange range) {
    Instr *instr = newInstr(Op::Undefined, range);
    instr->name = name.str();
    fn.undefinedValues.push_back(instr);
    return instr;
  }
  void assignVariable(llvm::StringRef name, Instr *value, SourceRange range) {
    ensureOpenBlock();
    bindVariable(name, current, value);
    fn.variables.push_back({name.str(), value, range});
  }

  //===--- Statements ---===//
  void buildCondition(const Expr *test, Block *ifTrue, Block *ifFalse);
  void buildBody(llvm::ArrayRef<Stmt *> body);
  void buildStmt(const Stmt *stmt);
  void buildIf(const IfStmt *stmt);
  void buildWhile(const WhileStmt *stmt);
  void buildFor(const ForStmt *stmt);
  /// What a `for` loop goes over: how many times, and the item at a
  /// counter. enumerate() and zip(), of anything a loop goes over (each
  /// other included), count with their iterables' counters, as Numba's do.
  struct IterationPlan {
    Instr *count;
    std::function<Instr *(Instr *counter)> item;
  };
  std::optional<IterationPlan> planIteration(const Expr *iter);
  /// Whether `expr` calls Python's builtin `name` (no variable or global
  /// of the module hides it) with positional arguments and, at most, the
  /// keyword `keyword`.
  const CallExpr *builtinCall(const Expr *expr, llvm::StringRef name, llvm::StringRef keyword);
  /// The smaller of two counts, as a branch and a phi.
  Instr *smallerCount(Instr *a, Instr *b, SourceRange range);
  void buildAssignTarget(const Expr *target, Instr *value, SourceRange range);
  void buildAugAssign(const AugAssignStmt *stmt);
  void buildReturn(const ReturnStmt *stmt);
  void buildRaise(const RaiseStmt *stmt);

  //===--- Expressions ---===//
  Instr *buildExpr(const Expr *expr);
  Instr *buildName(const NameExpr *name);
  /// A module-level value read as `path` (a global's name, or a dotted
  /// path into source modules): a constant frozen into the kernel, else a
  /// Global.
  Instr *buildGlobal(const ModuleValue *global, llvm::StringRef path, SourceRange range);
  /// The function `function`, defined in this one or captured by it, with
  /// its captures' current values.
  Instr *buildClosure(const FunctionDecl &function, SourceRange range);
  /// The function defined here that `value` (a lambda, or a name) makes.
  const FunctionDecl *functionMadeBy(const Expr *value) const;
  void findFunctionAliases(const FunctionDefStmt &def);
  /// The dotted path `expr` spells if it names a module-level value: a name
  /// no local hides, or attributes of source modules from one (`config`,
  /// `config.THRESHOLD`, `pkg.sub.clamp`); "" for anything else.
  std::string modulePath(const Expr *expr) const {
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
  /// The module-level enum `expr` names, if it names one.
  const EnumDefinition *enumNamed(const Expr *expr) const {
    std::string path = modulePath(expr);
    const ModuleValue *value = path.empty() ? nullptr : scope.lookupPath(path);
    return value && value->kind() == ModuleValue::Kind::Enum ? &value->enumValue() : nullptr;
  }
  /// A member of an enum the module defines, as written: `Color.RED` or
  /// `Color["RED"]`, and where a missing member is reported.
  struct EnumMemberRef {
    const EnumDefinition *enumeration;
    llvm::StringRef name;
    SourceRange nameRange;
  };
  std::optional<EnumMemberRef> enumMemberRef(const Expr *expr) {
    if (const auto *attr = dyn_cast<AttributeExpr>(expr))
      if (const EnumDefinition *enumeration = enumNamed(attr->value))
        return EnumMemberRef{enumeration, attr->attr, attr->range()};
    if (const auto *sub = dyn_cast<SubscriptExpr>(expr))
      if (const EnumDefinition *enumeration = enumNamed(sub->value))
        if (const auto *name = dyn_cast<StringLiteralExpr>(sub->index))
          return EnumMemberRef{enumeration, name->value, sub->index->range()};
    return std::nullopt;
  }
  /// The member (`Color.RED`), or its value (`Color.RED.value`), frozen into
  /// the kernel like a module constant.
  Instr *buildEnumMember(const EnumMemberRef &member, SourceRange range, bool valueOnly) {
    const EnumDefinition &enumeration = *member.enumeration;
    const ConstantValue *value = enumeration.member(member.name);
    if (!value)
      return unsupported(DiagID::err_enum_has_no_member, member.nameRange,
                         {enumeration.name, member.name});
    if (valueOnly)
      return emitConstant(*value, range, false);
    return emitConstant(ConstantValue::enumMember(*value, enumeration.name, member.name.str(),
                                                  enumeration.isIntEnum),
                        range, false);
  }
  Instr *buildBinary(const BinaryExpr *binary);
  Instr *buildUnary(const UnaryExpr *unary);
  Instr *buildCompare(const CompareExpr *compare);
  Instr *buildBoolOp(const BoolOpExpr *boolOp);
  /// Whether every path of the `and` (`or`) buildBoolOp built last ends on
  /// a falsy (truthy) literal or short-circuits: CPython's compiler then
  /// knows where it goes.
  bool lastBoolOpShortCircuits = false;
  Instr *buildIfExp(const IfExpExpr *ifExp);
  Instr *buildCall(const CallExpr *call);
  Instr *buildSubscriptIndex(const Expr *index);
  Instr *buildTuple(const SequenceExpr *tuple);
  Instr *truth(Instr *value, SourceRange range) { return emit(Op::Truth, range, {value}); }
  Instr *unsupported(DiagID id, SourceRange range, std::initializer_list<DiagArg> args = {}) {
    diags.report(id, range, args);
    failed = true;
    return nullptr;
  }

  Function &fn;
  const ModuleScope &scope;
  TypeContext &types;
  DiagnosticEngine &diags;
  Block *current = nullptr;
  llvm::StringSet<> locals;
  llvm::StringSet<> unsupportedBindings;
  /// The functions defined in this one, by name, and the names of those
  /// whose definitions were reported.
  llvm::StringMap<const FunctionDecl *> nestedFunctions;
  /// The functions defined in this one, by their definitions (a `def`'s,
  /// or the one a lambda makes).
  llvm::DenseMap<const FunctionDefStmt *, const FunctionDecl *> functionsByDefinition;
  /// Variables assigned once, and that a lambda or a function defined here
  /// (`f = lambda v: v * k`, `g = inner`): reading one makes the function
  /// anew, with what it captures as it is then, as the function's own name
  /// does.
  llvm::StringMap<const FunctionDecl *> functionAliases;
  llvm::StringSet<> undeclaredFunctions;
  llvm::SmallPtrSet<const FunctionDecl *, 4> closuresBeingBuilt;
  llvm::DenseMap<Block *, llvm::StringMap<Instr *>> currentDef;
  llvm::DenseSet<Block *> sealed;
  llvm::DenseMap<Block *, std::vector<std::pair<std::string, Instr *>>> incompletePhis;
  llvm::DenseSet<Instr *> phisUnderConstruction;
  /// Removed trivial phis and the values that replaced them. Callers up the
  /// recursion may still hold a removed phi; they look it up here.
  llvm::DenseMap<Instr *, Instr *> replacements;
  struct LoopTargets {
    Block *continueTarget;
    Block *breakTarget;
  };
  std::vector<LoopTargets> loops;
  unsigned hiddenCounter = 0;
  bool failed = false;
};

//===----------------------------------------------------------------------===//
// SSA construction
//===----------------------------------------------------------------------===//

Instr *SSABuilder::readVariable(llvm::StringRef name, Block *block, SourceRange range) {
  auto blockDefs = currentDef.find(block);
  if (blockDefs != currentDef.end()) {
    auto def = blockDefs->second.find(name);
    if (def != blockDefs->second.end())
      return resolve(def->second);
  }
  return readVariableRecursive(name, block, range);
}

Instr *SSABuilder::readVariableRecursive(llvm::StringRef name, Block *block, SourceRange range) {
  Instr *value;
  if (!sealed.contains(block)) {
    value = newInstr(Op::Phi, range);
    value->block = block;
    value->name = name.str();
    block->phis.push_back(value);
    incompletePhis[block].push_back({name.str(), value});
  } else if (block->predecessors.empty()) {
    value = undefined(name, range);
  } else if (block->predecessors.size() == 1) {
    value = readVariable(name, block->predecessors.front(), range);
  } else {
    value = newInstr(Op::Phi, range);
    value->block = block;
    value->name = name.str();
    block->phis.push_back(value);
    writeVariable(name, block, value);
    value = addPhiOperands(name, value, range);
  }
  // Completing a phi can remove phis met on the way, this one included:
  // what the block defines is whatever the read ended up as.
  value = resolve(value);
  writeVariable(name, block, value);
  return value;
}

Instr *SSABuilder::addPhiOperands(llvm::StringRef name, Instr *phi, SourceRange range) {
  // While its operands are read, the phi may be met again through a loop;
  // it must not be judged trivial on the operands it has so far.
  phisUnderConstruction.insert(phi);
  for (Block *predecessor : phi->block->predecessors) {
    Instr *operand = readVariable(name, predecessor, range);
    phi->operands.push_back(resolve(operand));
    phi->incoming.push_back(predecessor);
  }
  phisUnderConstruction.erase(phi);
  Instr *result = tryRemoveTrivialPhi(resolve(phi));
  if (result == phi && !name.starts_with("$"))
    fn.variables.push_back({name.str(), phi, phi->range});
  return result;
}

void SSABuilder::replaceAllUses(Instr *from, Instr *to) {
  for (auto &instr : fn.instrs)
    for (Instr *&operand : instr->operands)
      if (operand == from)
        operand = to;
  for (auto &block : fn.blocks)
    if (block->terminator.value == from)
      block->terminator.value = to;
  for (auto &[block, defs] : currentDef)
    for (auto &def : defs)
      if (def.second == from)
        def.second = to;
  for (auto &[block, phis] : incompletePhis)
    for (auto &entry : phis)
      if (entry.second == from)
        entry.second = to;
  for (VariableDef &variable : fn.variables)
    if (variable.value == from)
      variable.value = to;
}

Instr *SSABuilder::resolve(Instr *value) const {
  for (auto found = replacements.find(value); found != replacements.end();
       found = replacements.find(value))
    value = found->second;
  return value;
}

Instr *SSABuilder::tryRemoveTrivialPhi(Instr *phi) {
  if (!phi->isPhi() || phisUnderConstruction.contains(phi) || replacements.contains(phi))
    return resolve(phi);
  Instr *same = nullptr;
  for (Instr *operand : phi->operands) {
    if (operand == same || operand == phi)
      continue;
    if (same)
      return phi; // merges at least two values: not trivial
    same = operand;
  }
  if (!same)
    same = undefined(phi->name, phi->range);
  llvm::SmallVector<Instr *, 4> phiUsers;
  for (auto &instr : fn.instrs)
    if (instr->isPhi() && instr.get() != phi && llvm::is_contained(instr->operands, phi))
      phiUsers.push_back(instr.get());
  replaceAllUses(phi, same);
  replacements[phi] = same;
  llvm::erase(phi->block->phis, phi);
  phi->operands.clear();
  phi->incoming.clear();
  for (Instr *user : phiUsers)
    if (llvm::is_contained(user->block->phis, user))
      tryRemoveTrivialPhi(user);
  // Removing the users may have removed `same` too (when it was one of them).
  return resolve(same);
}

void SSABuilder::sealBlock(Block *block) {
  // Sealed first: completing one phi can read another variable in this
  // very block (around a loop), and that read must see every predecessor
  // rather than leave a new incomplete phi that nothing would complete.
  sealed.insert(block);
  auto pending = incompletePhis.find(block);
  if (pending == incompletePhis.end())
    return;
  std::vector<std::pair<std::string, Instr *>> phis = std::move(pending->second);
  incompletePhis.erase(pending);
  for (auto &[name, phi] : phis)
    addPhiOperands(name, phi, phi->range);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool SSABuilder::build() {
  const FunctionDefStmt *def = fn.decl->def;
  // Names a function binds anywhere in its body are its local variables
  // (Python's scoping rule); every other name is a global. A function
  // defined inside another also reads the variables it captures.
  for (const Parameter &param : def->params)
    locals.insert(param.name);
  for (const std::string &capture : fn.decl->captures)
    locals.insert(capture);
  collectAssignedNames(def->body, locals);
  for (const FunctionDecl *nested : fn.decl->nested)
    functionsByDefinition[nested->def] = nested;
  for (const FunctionDefStmt *inner : definedFunctions(def->body)) {
    const FunctionDecl *nested = functionsByDefinition.lookup(inner);
    // One that could not be declared was reported; its uses stay silent.
    if (!nested) {
      undeclaredFunctions.insert(inner->name);
      continue;
    }
    locals.insert(inner->name);
    nestedFunctions[inner->name] = nested;
  }
  findFunctionAliases(*def);
  collectUnsupportedBindings(def->body, unsupportedBindings);

  current = newBlock();
  sealed.insert(current);
  for (size_t i = 0; i < def->params.size(); ++i) {
    Instr *arg = emit(Op::Argument, def->params[i].range);
    arg->index = static_cast<unsigned>(i);
    arg->name = def->params[i].name.str();
    fn.arguments.push_back(arg);
    assignVariable(def->params[i].name, arg, def->params[i].range);
  }
  for (size_t k = 0; k < fn.decl->captures.size(); ++k) {
    Instr *capture = emit(Op::Argument, def->nameRange);
    capture->index = static_cast<unsigned>(def->params.size() + k);
    capture->name = fn.decl->captures[k];
    fn.arguments.push_back(capture);
    assignVariable(fn.decl->captures[k], capture, def->nameRange);
  }

  llvm::ArrayRef<Stmt *> body = def->body;
  // The docstring is not code.
  if (!body.empty())
    if (const auto *first = dyn_cast<ExprStmt>(body.front()))
      if (isa<StringLiteralExpr>(first->value))
        body = body.drop_front();
  buildBody(body);
  if (!current->isTerminated()) {
    Instr *none = emitConstant(ConstantValue::none(), def->range(), false);
    current->terminator = {Terminator::Kind::Return, none, nullptr, nullptr, def->nameRange};
  }

  // Drop blocks nothing reaches (code after return, break or continue).
  std::vector<Block *> reachable = fn.reversePostOrder();
  llvm::DenseSet<Block *> live(reachable.begin(), reachable.end());
  for (auto &block : fn.blocks) {
    if (live.contains(block.get()))
      continue;
    for (Block *successor : block->successors()) {
      llvm::erase(successor->predecessors, block.get());
      // Phis of live blocks forget what flowed in from the dead one.
      for (Instr *phi : successor->phis)
        for (size_t i = phi->incoming.size(); i-- > 0;)
          if (phi->incoming[i] == block.get()) {
            phi->incoming.erase(phi->incoming.begin() + i);
            phi->operands.erase(phi->operands.begin() + i);
          }
    }
  }
  llvm::erase_if(fn.blocks,
                 [&](const std::unique_ptr<Block> &block) { return !live.contains(block.get()); });
  llvm::erase_if(fn.variables, [&](const VariableDef &variable) {
    return variable.value->op != Op::Undefined && !live.contains(variable.value->block);
  });
  // A merge left with one live predecessor (the other side of `if False:`
  // was never compiled) merges nothing.
  std::vector<Instr *> phis;
  for (const auto &block : fn.blocks)
    phis.insert(phis.end(), block->phis.begin(), block->phis.end());
  for (Instr *phi : phis)
    if (llvm::is_contained(phi->block->phis, phi))
      tryRemoveTrivialPhi(phi);
  removeUnusedConstants();
  return verifySSA(fn, diags) && !failed;
}

/// Folding `(1 << 70) & 7` to 0 leaves the constants of its operands behind,
/// used by nothing. CPython folds the same way before Numba sees bytecode, so
/// Numba never types them; typing them here would reject `1 << 70`, which
/// the program never computes. Constants bound to variables stay: Numba
/// types every assignment.
void SSABuilder::removeUnusedConstants() {
  llvm::DenseSet<const Instr *> used;
  for (const VariableDef &variable : fn.variables)
    used.insert(variable.value);
  for (const auto &block : fn.blocks) {
    for (const Instr *phi : block->phis)
      used.insert(phi->operands.begin(), phi->operands.end());
    for (const Instr *instr : block->instrs)
      used.insert(instr->operands.begin(), instr->operands.end());
    used.insert(block->terminator.value);
  }
  for (const auto &block : fn.blocks)
    llvm::erase_if(block->instrs, [&](const Instr *instr) {
      return instr->op == Op::Constant && !used.contains(instr);
    });
}

void SSABuilder::buildBody(llvm::ArrayRef<Stmt *> body) {
  for (const Stmt *stmt : body) {
    if (diags.errorLimitReached()) {
      diags.stopAtErrorLimit(); // the rest of the body is not checked
      failed = true;
      return;
    }
    buildStmt(stmt);
  }
}

void SSABuilder::buildStmt(const Stmt *stmt) {
  switch (stmt->kind()) {
  case Stmt::Kind::Assign: {
    const auto *assign = cast<AssignStmt>(stmt);
    // A variable that names a function (functionAliases) only records that
    // it is assigned: its reads make the function.
    if (const auto *target = dyn_cast<NameExpr>(assign->targets.front());
        target && functionAliases.count(target->id)) {
      assignVariable(target->id, emitConstant(ConstantValue::none(), stmt->range(), false),
                     target->range());
      return;
    }
    Instr *value = buildExpr(assign->value);
    if (!value)
      return;
    for (const Expr *target : assign->targets)
      buildAssignTarget(target, value, stmt->range());
    return;
  }
  case Stmt::Kind::AnnAssign: {
    const auto *assign = cast<AnnAssignStmt>(stmt);
    if (!assign->value)
      return; // a bare annotation declares nothing at run time
    if (Instr *value = buildExpr(assign->value))
      buildAssignTarget(assign->target, value, stmt->range());
    return;
  }
  case Stmt::Kind::AugAssign:
    return buildAugAssign(cast<AugAssignStmt>(stmt));
  case Stmt::Kind::If:
    return buildIf(cast<IfStmt>(stmt));
  case Stmt::Kind::While:
    return buildWhile(cast<WhileStmt>(stmt));
  case Stmt::Kind::For:
    return buildFor(cast<ForStmt>(stmt));
  case Stmt::Kind::Return:
    return buildReturn(cast<ReturnStmt>(stmt));
  case Stmt::Kind::Raise:
    return buildRaise(cast<RaiseStmt>(stmt));
  case Stmt::Kind::Break:
    if (loops.empty()) {
      unsupported(DiagID::err_break_outside_loop, stmt->range());
      return;
    }
    jump(loops.back().breakTarget, stmt->range());
    return;
  case Stmt::Kind::Continue:
    if (loops.empty()) {
      unsupported(DiagID::err_continue_outside_loop, stmt->range());
      return;
    }
    jump(loops.back().continueTarget, stmt->range());
    return;
  case Stmt::Kind::Pass:
    return;
  case Stmt::Kind::ExprStmt: {
    const Expr *value = cast<ExprStmt>(stmt)->value;
    if (const auto *literal = dyn_cast<StringLiteralExpr>(value); literal && !literal->isFormatted)
      return; // a string statement is a comment
    buildExpr(value);
    return;
  }
  case Stmt::Kind::Assert: {
    const auto *assertion = cast<AssertStmt>(stmt);
    Instr *test = buildExpr(assertion->test);
    Instr *message = assertion->message ? buildExpr(assertion->message) : nullptr;
    if (!test || (assertion->message && !message))
      return;
    Instr *instr = emit(Op::Assert, stmt->range(), {test});
    if (message)
      instr->operands.push_back(message);
    return;
  }
  case Stmt::Kind::Delete:
    for (const Expr *target : cast<DeleteStmt>(stmt)->targets) {
      const auto *name = dyn_cast<NameExpr>(target);
      if (!name) {
        unsupported(DiagID::err_unsupported_del, target->range());
        continue;
      }
      ensureOpenBlock();
      Instr *unbound = undefined(name->id, target->range());
      unbound->deleted = true;
      bindVariable(name->id, current, unbound);
    }
    return;
  case Stmt::Kind::FunctionDef:
    // Declared with the module (nested_functions.h); its name makes a
    // closure wherever it is read.
    return;
  case Stmt::Kind::ClassDef:
    unsupported(DiagID::err_unsupported_statement, cast<ClassDefStmt>(stmt)->nameRange,
                {"class definitions"});
    return;
  case Stmt::Kind::With:
    unsupported(DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
                {"'with' statements"});
    return;
  case Stmt::Kind::Try:
    unsupported(DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
                {"'try' statements"});
    return;
  case Stmt::Kind::Global:
  case Stmt::Kind::Nonlocal:
    unsupported(
        DiagID::err_unsupported_statement, cast<BlockStmt>(stmt)->keywordRange,
        {stmt->kind() == Stmt::Kind::Global ? "'global' declarations" : "'nonlocal' declarations"});
    return;
  case Stmt::Kind::Import:
  case Stmt::Kind::ImportFrom:
    unsupported(DiagID::err_import_in_function, stmt->range());
    return;
  }
}

/// Ends the current block with jumps to `ifTrue` or `ifFalse` on `test`, as
/// CPython compiles a condition (compiler_jump_if): `not` swaps the
/// targets, `and`/`or` and conditional expressions become jumps rather than
/// values, and a constant jumps straight to one target, so that the code on
/// the other side is never compiled (Numba never sees it, so it is never
/// typed).
void SSABuilder::buildCondition(const Expr *test, Block *ifTrue, Block *ifFalse) {
  if (const auto *unary = dyn_cast<UnaryExpr>(test); unary && unary->op == UnaryOp::Not) {
    buildCondition(unary->operand, ifFalse, ifTrue);
    return;
  }
  if (const auto *boolOp = dyn_cast<BoolOpExpr>(test)) {
    bool isAnd = boolOp->op == BoolOpKind::And;
    for (size_t i = 0; i + 1 < boolOp->values.size(); ++i) {
      Block *next = newBlock();
      buildCondition(boolOp->values[i], isAnd ? next : ifTrue, isAnd ? ifFalse : next);
      sealBlock(next);
      current = next;
    }
    buildCondition(boolOp->values.back(), ifTrue, ifFalse);
    return;
  }
  if (const auto *ifExp = dyn_cast<IfExpExpr>(test)) {
    Block *thenBlock = newBlock();
    Block *elseBlock = newBlock();
    buildCondition(ifExp->test, thenBlock, elseBlock);
    sealBlock(thenBlock);
    sealBlock(elseBlock);
    current = thenBlock;
    buildCondition(ifExp->body, ifTrue, ifFalse);
    current = elseBlock;
    buildCondition(ifExp->orelse, ifTrue, ifFalse);
    return;
  }
  const auto *compare = dyn_cast<CompareExpr>(test);
  if (compare && compare->ops.size() > 1 && llvm::none_of(compare->ops, [](CompareOp op) {
        return op == CompareOp::In || op == CompareOp::NotIn; // buildCompare reports these
      })) {
    // a < b < c jumps to ifFalse as soon as one comparison fails.
    Instr *left = buildExpr(compare->left);
    for (size_t i = 0; left && i < compare->ops.size(); ++i) {
      Instr *right = buildExpr(compare->comparators[i]);
      if (!right)
        break;
      Instr *comparison = emitCompare(left, right, compare->ops[i], compare->range());
      if (i + 1 == compare->ops.size()) {
        branch(comparison, ifTrue, ifFalse, test->range());
        return;
      }
      Block *next = newBlock();
      branch(comparison, next, ifFalse, test->range());
      sealBlock(next);
      current = next;
      left = right;
    }
    jump(ifFalse, test->range()); // the error is reported; the function will not be typed
    return;
  }
  Instr *value = buildExpr(test);
  if (!value) {
    jump(ifFalse, test->range()); // the error is reported; the function will not be typed
    return;
  }
  if (isLiteral(value, test)) {
    jump(value->constant->truthy() ? ifTrue : ifFalse, test->range());
    return;
  }
  // A branch on another constant (a module constant, a local whose
  // reaching assignment is one) is decided by type inference, as Numba's
  // dead-branch pruning decides it.
  branch(truth(value, test->range()), ifTrue, ifFalse, test->range());
}

void SSABuilder::buildIf(const IfStmt *stmt) {
  Block *thenBlock = newBlock();
  Block *elseBlock = newBlock();
  Block *join = newBlock();
  buildCondition(stmt->test, thenBlock, stmt->orelse.empty() ? join : elseBlock);
  sealBlock(thenBlock);
  current = thenBlock;
  buildBody(stmt->body);
  jump(join, stmt->range());
  if (!stmt->orelse.empty()) {
    sealBlock(elseBlock);
    current = elseBlock;
    buildBody(stmt->orelse);
    jump(join, stmt->range());
  } else {
    sealBlock(elseBlock); // unreachable, dropped later
  }
  sealBlock(join);
  current = join;
}

/// As CPython compiles a `while` loop, and Numba types it from the
/// bytecode: the condition is tested before the first iteration (where
/// `continue` goes too) and again at the end of each. A first test that
/// constants decide (`c = 0; while c < 5:`) then leaves no path around the
/// body, and what the body assigns reaches the code after the loop with the
/// body's types alone.
void SSABuilder::buildWhile(const WhileStmt *stmt) {
  Block *header = newBlock();
  Block *body = newBlock();
  Block *orelse = newBlock();
  Block *exit = newBlock();
  jump(header, stmt->range());
  current = header;
  buildCondition(stmt->test, body, orelse);
  current = body;
  loops.push_back({header, exit});
  buildBody(stmt->body);
  loops.pop_back();
  if (!current->isTerminated())
    buildCondition(stmt->test, body, orelse);
  sealBlock(body);
  sealBlock(header);
  sealBlock(orelse);
  current = orelse;
  buildBody(stmt->orelse);
  jump(exit, stmt->range());
  sealBlock(exit);
  current = exit;
}

void SSABuilder::buildFor(const ForStmt *stmt) {
  if (stmt->isAsync) {
    unsupported(DiagID::err_unsupported_statement, stmt->range(), {"'async for' loops"});
    return;
  }
  std::optional<IterationPlan> plan = planIteration(stmt->iter);
  if (!plan)
    return;
  SourceRange iterRange = stmt->iter->range();
  Instr *count = plan->count;
  Instr *start = emit(Op::LoopStart, iterRange, {count});
  // The iteration counter is a hidden variable, so that SSA construction
  // gives it its loop-header phi like any other.
  std::string counter = "$counter" + std::to_string(hiddenCounter++);
  bindVariable(counter, current, start);

  Block *header = newBlock();
  Block *body = newBlock();
  Block *latch = newBlock();
  Block *orelse = newBlock();
  Block *exit = newBlock();
  jump(header, stmt->range());
  current = header;
  Instr *index = readVariable(counter, header, iterRange);
  Instr *more = emit(Op::LoopTest, iterRange, {index, count});
  branch(more, body, orelse, iterRange);

  sealBlock(body);
  current = body;
  Instr *item = plan->item(index);
  if (!item)
    return;
  buildAssignTarget(stmt->target, item, stmt->target->range());
  loops.push_back({latch, exit});
  buildBody(stmt->body);
  loops.pop_back();
  jump(latch, stmt->range());

  sealBlock(latch);
  current = latch;
  Instr *next = emit(Op::LoopNext, iterRange, {readVariable(counter, latch, iterRange)});
  bindVariable(counter, latch, next);
  jump(header, stmt->range());
  sealBlock(header);

  sealBlock(orelse);
  current = orelse;
  buildBody(stmt->orelse);
  jump(exit, stmt->range());
  sealBlock(exit);
  current = exit;
}

const CallExpr *SSABuilder::builtinCall(const Expr *expr, llvm::StringRef name,
                                        llvm::StringRef keyword) {
  const auto *call = dyn_cast<CallExpr>(expr);
  const auto *callee = call ? dyn_cast<NameExpr>(call->callee) : nullptr;
  if (!callee || callee->id != name || locals.contains(name) || scope.lookup(name))
    return nullptr;
  for (const Expr *arg : call->args)
    if (isa<StarredExpr>(arg))
      return nullptr;
  for (const Keyword &given : call->keywords)
    if (given.name != keyword || keyword.empty())
      return nullptr;
  return call;
}

Instr *SSABuilder::smallerCount(Instr *a, Instr *b, SourceRange range) {
  std::string result = "$count" + std::to_string(hiddenCounter++);
  Block *takeB = newBlock();
  Block *takeA = newBlock();
  Block *join = newBlock();
  branch(emitCompare(b, a, CompareOp::Lt, range), takeB, takeA, range);
  sealBlock(takeB);
  sealBlock(takeA);
  current = takeB;
  bindVariable(result, current, b);
  jump(join, range);
  current = takeA;
  bindVariable(result, current, a);
  jump(join, range);
  sealBlock(join);
  current = join;
  return readVariable(result, join, range);
}

std::optional<SSABuilder::IterationPlan> SSABuilder::planIteration(const Expr *iter) {
  SourceRange range = iter->range();
  if (const CallExpr *call = builtinCall(iter, "enumerate", "start");
      call && call->args.size() + call->keywords.size() >= 1 &&
      call->args.size() + call->keywords.size() <= 2 && !call->args.empty()) {
    std::optional<IterationPlan> inner = planIteration(call->args[0]);
    if (!inner)
      return std::nullopt;
    const Expr *startExpr = call->args.size() == 2   ? call->args[1]
                            : call->keywords.empty() ? nullptr
                                                     : call->keywords[0].value;
    // enumerate counts in intp, as Numba's does, from 0 unless told.
    Instr *start =
        startExpr ? buildExpr(startExpr) : emitConstant(ConstantValue::integer(0), range, true);
    if (!start)
      return std::nullopt;
    auto item = inner->item;
    return IterationPlan{inner->count, [this, start, item, range](Instr *counter) -> Instr * {
                           Instr *position = emit(Op::Binary, range, {counter, start});
                           position->binaryOp = BinaryOp::Add;
                           Instr *element = item(counter);
                           return element ? emit(Op::BuildTuple, range, {position, element})
                                          : nullptr;
                         }};
  }
  if (const CallExpr *call = builtinCall(iter, "zip", ""); call && !call->args.empty()) {
    std::vector<IterationPlan> parts;
    for (const Expr *arg : call->args) {
      std::optional<IterationPlan> part = planIteration(arg);
      if (!part)
        return std::nullopt;
      parts.push_back(std::move(*part));
    }
    // As long as the shortest, as Python's zip.
    Instr *count = parts.front().count;
    for (size_t i = 1; i < parts.size(); ++i)
      count = smallerCount(count, parts[i].count, range);
    return IterationPlan{count, [this, parts, range](Instr *counter) -> Instr * {
                           llvm::SmallVector<Instr *, 4> elements;
                           for (const IterationPlan &part : parts) {
                             Instr *element = part.item(counter);
                             if (!element)
                               return nullptr;
                             elements.push_back(element);
                           }
                           return emit(Op::BuildTuple, range, elements);
                         }};
  }
  Instr *iterable = buildExpr(iter);
  if (!iterable)
    return std::nullopt;
  Instr *count = emit(Op::IterCount, range, {iterable});
  return IterationPlan{count, [this, iterable, range](Instr *counter) {
                         return emit(Op::IterItem, range, {iterable, counter});
                       }};
}

void SSABuilder::buildAssignTarget(const Expr *target, Instr *value, SourceRange range) {
  switch (target->kind()) {
  case Expr::Kind::Name:
    assignVariable(cast<NameExpr>(target)->id, value, target->range());
    return;
  case Expr::Kind::Subscript: {
    const auto *sub = cast<SubscriptExpr>(target);
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    if (!index)
      return;
    emit(Op::SetItem, target->range(), {object, index, value});
    return;
  }
  case Expr::Kind::Attribute: {
    const auto *attr = cast<AttributeExpr>(target);
    Instr *object = buildExpr(attr->value);
    if (!object)
      return;
    Instr *set = emit(Op::SetAttr, target->range(), {object, value});
    set->name = attr->attr.str();
    return;
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto *tuple = cast<SequenceExpr>(target);
    for (size_t i = 0; i < tuple->elements.size(); ++i) {
      if (isa<StarredExpr>(tuple->elements[i])) {
        unsupported(DiagID::err_starred_assignment, tuple->elements[i]->range());
        return;
      }
      // The whole target: a wrong count is one error, not one per name.
      Instr *element = emit(Op::TupleGet, tuple->range(), {value});
      element->index = static_cast<unsigned>(i);
      element->name = std::to_string(tuple->elements.size()); // expected length
      buildAssignTarget(tuple->elements[i], element, range);
    }
    return;
  }
  default:
    unsupported(DiagID::err_cannot_assign_to, target->range(), {"expression"});
    return;
  }
}

void SSABuilder::buildAugAssign(const AugAssignStmt *stmt) {
  if (stmt->op == BinaryOp::MatMul) {
    unsupported(DiagID::err_unsupported_operator, stmt->opRange, {"@="});
    return;
  }
  if (const auto *sub = dyn_cast<SubscriptExpr>(stmt->target)) {
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    Instr *rhs = index ? buildExpr(stmt->value) : nullptr;
    if (!rhs)
      return;
    Instr *old = emit(Op::GetItem, sub->range(), {object, index});
    Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
    result->binaryOp = stmt->op;
    emit(Op::SetItem, sub->range(), {object, index, result});
    return;
  }
  if (const auto *attr = dyn_cast<AttributeExpr>(stmt->target)) {
    Instr *object = buildExpr(attr->value);
    Instr *rhs = object ? buildExpr(stmt->value) : nullptr;
    if (!rhs)
      return;
    Instr *old = emit(Op::GetAttr, attr->range(), {object});
    old->name = attr->attr.str();
    Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
    result->binaryOp = stmt->op;
    Instr *set = emit(Op::SetAttr, attr->range(), {object, result});
    set->name = attr->attr.str();
    return;
  }
  const auto *name = cast<NameExpr>(stmt->target);
  Instr *old = buildName(name);
  Instr *rhs = old ? buildExpr(stmt->value) : nullptr;
  if (!rhs)
    return;
  Instr *result = emit(Op::Binary, stmt->range(), {old, rhs});
  result->binaryOp = stmt->op;
  assignVariable(name->id, result, stmt->target->range());
}

void SSABuilder::buildReturn(const ReturnStmt *stmt) {
  Instr *value = stmt->value ? buildExpr(stmt->value)
                             : emitConstant(ConstantValue::none(), stmt->range(), true);
  if (!value)
    return;
  ensureOpenBlock();
  current->terminator = {Terminator::Kind::Return, value, nullptr, nullptr, stmt->range()};
}

void SSABuilder::buildRaise(const RaiseStmt *stmt) {
  if (!stmt->exception) {
    unsupported(DiagID::err_bare_raise, stmt->range());
    return;
  }
  if (stmt->cause) {
    unsupported(DiagID::err_raise_from, stmt->cause->range());
    return;
  }
  Instr *exception = buildExpr(stmt->exception);
  if (!exception)
    return;
  ensureOpenBlock();
  current->terminator = {Terminator::Kind::Raise, exception, nullptr, nullptr, stmt->range()};
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

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

const FunctionDecl *SSABuilder::functionMadeBy(const Expr *value) const {
  if (const auto *lambda = dyn_cast<LambdaExpr>(value))
    return functionsByDefinition.lookup(lambda->function);
  if (const auto *name = dyn_cast<NameExpr>(value))
    return nestedFunctions.lookup(name->id);
  return nullptr;
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

Instr *SSABuilder::buildExpr(const Expr *expr) {
  switch (expr->kind()) {
  case Expr::Kind::Name:
    return buildName(cast<NameExpr>(expr));
  case Expr::Kind::IntLiteral: {
    const auto *literal = cast<IntLiteralExpr>(expr);
    if (literal->tooLarge)
      return unsupported(DiagID::err_integer_literal_too_large, expr->range(),
                         {diags.sourceManager().textOf(expr->range())});
    return emitConstant(ConstantValue::integer(literal->value), expr->range(), true);
  }
  case Expr::Kind::FloatLiteral:
    return emitConstant(ConstantValue::floating(cast<FloatLiteralExpr>(expr)->value), expr->range(),
                        true);
  case Expr::Kind::ImaginaryLiteral:
    return emitConstant(ConstantValue::complex(0.0, cast<ImaginaryLiteralExpr>(expr)->imag),
                        expr->range(), true);
  case Expr::Kind::BoolLiteral:
    return emitConstant(ConstantValue::boolean(cast<BoolLiteralExpr>(expr)->value), expr->range(),
                        true);
  case Expr::Kind::NoneLiteral:
    return emitConstant(ConstantValue::none(), expr->range(), true);
  case Expr::Kind::StringLiteral: {
    const auto *literal = cast<StringLiteralExpr>(expr);
    if (literal->isFormatted)
      return unsupported(DiagID::err_unsupported_expression, expr->range(), {"f-strings"});
    if (literal->isBytes)
      return emitConstant(ConstantValue::bytes(literal->value.str()), expr->range(), true);
    return emitConstant(ConstantValue::string(literal->value.str()), expr->range(), true);
  }
  case Expr::Kind::EllipsisLiteral:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {"Ellipsis literals ('...')"});
  case Expr::Kind::Tuple:
    return buildTuple(cast<SequenceExpr>(expr));
  case Expr::Kind::List:
    return unsupported(DiagID::err_unsupported_list, expr->range());
  case Expr::Kind::Set:
  case Expr::Kind::Dict:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {expr->kind() == Expr::Kind::Set ? "sets" : "dictionaries"});
  case Expr::Kind::Attribute: {
    const auto *attr = cast<AttributeExpr>(expr);
    if (std::optional<EnumMemberRef> member = enumMemberRef(expr))
      return buildEnumMember(*member, expr->range(), /*valueOnly=*/false);
    if (attr->attr == "value")
      if (std::optional<EnumMemberRef> member = enumMemberRef(attr->value))
        return buildEnumMember(*member, expr->range(), /*valueOnly=*/true);
    // `config.THRESHOLD`, `core.clamp`: an attribute of a source module is
    // what that module binds, as a global of this one would be.
    if (std::string base = modulePath(attr->value); !base.empty())
      if (const ModuleValue *module = scope.lookupPath(base);
          module && module->kind() == ModuleValue::Kind::Module) {
        const ModuleValue *member = module->member(attr->attr);
        if (!member)
          return unsupported(DiagID::err_unknown_module_member, attr->attrRange,
                             {module->moduleName(), attr->attr});
        return buildGlobal(member, base + "." + attr->attr.str(), expr->range());
      }
    Instr *object = buildExpr(attr->value);
    if (!object)
      return nullptr;
    Instr *get = emit(Op::GetAttr, expr->range(), {object});
    get->name = attr->attr.str();
    return get;
  }
  case Expr::Kind::Subscript: {
    const auto *sub = cast<SubscriptExpr>(expr);
    // Color["RED"]: a member by its name.
    if (std::optional<EnumMemberRef> member = enumMemberRef(expr))
      return buildEnumMember(*member, expr->range(), /*valueOnly=*/false);
    Instr *object = buildExpr(sub->value);
    Instr *index = object ? buildSubscriptIndex(sub->index) : nullptr;
    if (!index)
      return nullptr;
    return emit(Op::GetItem, expr->range(), {object, index});
  }
  case Expr::Kind::Slice:
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {"slices outside subscripts"});
  case Expr::Kind::Call:
    return buildCall(cast<CallExpr>(expr));
  case Expr::Kind::Unary:
    return buildUnary(cast<UnaryExpr>(expr));
  case Expr::Kind::Binary:
    return buildBinary(cast<BinaryExpr>(expr));
  case Expr::Kind::BoolOp:
    return buildBoolOp(cast<BoolOpExpr>(expr));
  case Expr::Kind::Compare:
    return buildCompare(cast<CompareExpr>(expr));
  case Expr::Kind::IfExp:
    return buildIfExp(cast<IfExpExpr>(expr));
  case Expr::Kind::NamedExpr: {
    const auto *named = cast<NamedExpr>(expr);
    Instr *value = buildExpr(named->value);
    if (!value)
      return nullptr;
    assignVariable(named->target->id, value, named->target->range());
    return value;
  }
  case Expr::Kind::Starred:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"starred expressions"});
  case Expr::Kind::Lambda: {
    const FunctionDecl *function = functionsByDefinition.lookup(cast<LambdaExpr>(expr)->function);
    if (!function) {
      failed = true; // its declaration was reported
      return nullptr;
    }
    return buildClosure(*function, expr->range());
  }
  case Expr::Kind::Comprehension: {
    static const char *forms[] = {"list comprehensions", "set comprehensions",
                                  "dict comprehensions", "generator expressions"};
    return unsupported(DiagID::err_unsupported_expression, expr->range(),
                       {forms[static_cast<unsigned>(cast<ComprehensionExpr>(expr)->form)]});
  }
  case Expr::Kind::Yield:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"generators ('yield')"});
  case Expr::Kind::Await:
    return unsupported(DiagID::err_unsupported_expression, expr->range(), {"'await' expressions"});
  }
  return nullptr;
}

Instr *SSABuilder::buildTuple(const SequenceExpr *tuple) {
  llvm::SmallVector<Instr *, 4> elements;
  bool allLiterals = true;
  for (const Expr *element : tuple->elements) {
    if (isa<StarredExpr>(element))
      return unsupported(DiagID::err_unsupported_expression, element->range(),
                         {"starred expressions"});
    Instr *value = buildExpr(element);
    if (!value)
      return nullptr;
    // Names count too: a tuple of constants is one constant value (its
    // elements may have no run-time value, such as None).
    allLiterals &= value->op == Op::Constant && value->fromLiteral;
    elements.push_back(value);
  }
  if (allLiterals) {
    // CPython stores a tuple of literals as one constant.
    std::vector<ConstantValue> values;
    for (Instr *element : elements)
      values.push_back(*element->constant);
    return emitConstant(ConstantValue::tuple(std::move(values)), tuple->range(), true);
  }
  return emit(Op::BuildTuple, tuple->range(), elements);
}

Instr *SSABuilder::buildSubscriptIndex(const Expr *index) {
  auto buildItem = [&](const Expr *item) -> Instr * {
    const auto *slice = dyn_cast<SliceExpr>(item);
    if (!slice)
      return buildExpr(item);
    llvm::SmallVector<Instr *, 3> parts;
    for (const Expr *part : {slice->lower, slice->upper, slice->step}) {
      Instr *value =
          part ? buildExpr(part) : emitConstant(ConstantValue::none(), item->range(), true);
      if (!value)
        return nullptr;
      parts.push_back(value);
    }
    return emit(Op::BuildSlice, item->range(), parts);
  };
  if (const auto *tuple = dyn_cast<SequenceExpr>(index);
      tuple && tuple->kind() == Expr::Kind::Tuple &&
      llvm::any_of(tuple->elements, [](const Expr *e) { return isa<SliceExpr>(e); })) {
    llvm::SmallVector<Instr *, 4> items;
    for (const Expr *element : tuple->elements) {
      Instr *value = buildItem(element);
      if (!value)
        return nullptr;
      items.push_back(value);
    }
    return emit(Op::BuildTuple, index->range(), items);
  }
  return buildItem(index);
}

Instr *SSABuilder::buildBinary(const BinaryExpr *binary) {
  if (binary->op == BinaryOp::MatMul)
    return unsupported(DiagID::err_unsupported_operator, binary->opRange, {"@"});
  Instr *lhs = buildExpr(binary->lhs);
  Instr *rhs = lhs ? buildExpr(binary->rhs) : nullptr;
  if (!rhs)
    return nullptr;
  // Only literals fold, as in CPython: `x + 1` stays an addition even where
  // x holds a literal.
  if (isLiteral(lhs, binary->lhs) && isLiteral(rhs, binary->rhs)) {
    FoldResult folded = foldBinary(binary->op, *lhs->constant, *rhs->constant, types);
    if (folded.value)
      return emitConstant(std::move(*folded.value), binary->range(), true);
  }
  Instr *instr = emit(Op::Binary, binary->range(), {lhs, rhs});
  instr->binaryOp = binary->op;
  return instr;
}

Instr *SSABuilder::buildUnary(const UnaryExpr *unary) {
  Instr *operand = buildExpr(unary->operand);
  if (!operand)
    return nullptr;
  if (isLiteral(operand, unary->operand)) {
    FoldResult folded = foldUnary(unary->op, *operand->constant, types);
    if (folded.value)
      return emitConstant(std::move(*folded.value), unary->range(), true);
  }
  if (unary->op == UnaryOp::Not) {
    // `not x` is a truth test, then a negation of the bool.
    Instr *instr = emit(Op::Unary, unary->range(), {truth(operand, unary->operand->range())});
    instr->unaryOp = UnaryOp::Not;
    return instr;
  }
  Instr *instr = emit(Op::Unary, unary->range(), {operand});
  instr->unaryOp = unary->op;
  return instr;
}

Instr *SSABuilder::buildCompare(const CompareExpr *compare) {
  for (size_t i = 0; i < compare->ops.size(); ++i)
    if (compare->ops[i] == CompareOp::In || compare->ops[i] == CompareOp::NotIn)
      return unsupported(DiagID::err_unsupported_operator, compare->opRanges[i],
                         {spelling(compare->ops[i])});
  Instr *left = buildExpr(compare->left);
  if (!left)
    return nullptr;
  if (compare->ops.size() == 1) {
    Instr *right = buildExpr(compare->comparators[0]);
    if (!right)
      return nullptr;
    return emitCompare(left, right, compare->ops[0], compare->range());
  }
  // a < b < c: b is evaluated once and c only if a < b.
  std::string result = "$compare" + std::to_string(hiddenCounter++);
  Block *join = newBlock();
  for (size_t i = 0; i < compare->ops.size(); ++i) {
    Instr *right = buildExpr(compare->comparators[i]);
    if (!right)
      return nullptr;
    Instr *test = emitCompare(left, right, compare->ops[i], compare->range());
    bindVariable(result, current, test);
    if (i + 1 == compare->ops.size()) {
      jump(join, compare->range());
      break;
    }
    Block *next = newBlock();
    branch(test, next, join, compare->range());
    sealBlock(next);
    current = next;
    left = right;
  }
  sealBlock(join);
  current = join;
  return readVariable(result, join, compare->range());
}

Instr *SSABuilder::buildBoolOp(const BoolOpExpr *boolOp) {
  // `a and b` is a if a is false, else b; `a or b` the reverse. The result
  // merges the operands' values, so its type unifies theirs.
  // Hidden variables are named after their expression, for diagnostics.
  std::string result =
      (boolOp->op == BoolOpKind::And ? "$and" : "$or") + std::to_string(hiddenCounter++);
  Block *join = newBlock();
  bool isAnd = boolOp->op == BoolOpKind::And;
  bool shortCircuits = false;
  for (size_t i = 0; i < boolOp->values.size(); ++i) {
    const Expr *operand = boolOp->values[i];
    Instr *value = buildExpr(operand);
    if (!value)
      return nullptr;
    bool last = i + 1 == boolOp->values.size();
    // CPython's peephole optimizer decides a literal operand: `False and
    // y` is False and `y` is never compiled; `True and y` is `y`. (Other
    // constants are decided by type inference, below.)
    bool constant = isLiteral(value, operand);
    if (constant && !last && value->constant->truthy() == isAnd)
      continue;
    // It also threads the jumps of an operand of the same kind that always
    // short-circuits, `(x and False)` in `a and (x and False) and y`, to
    // the end: `y` is never compiled either.
    const auto *nested = dyn_cast<BoolOpExpr>(operand);
    shortCircuits = constant ? value->constant->truthy() != isAnd
                             : nested && nested->op == boolOp->op && lastBoolOpShortCircuits;
    bindVariable(result, current, value);
    if (last || constant || shortCircuits) {
      jump(join, boolOp->range());
      break;
    }
    Block *next = newBlock();
    Instr *test = truth(value, boolOp->values[i]->range());
    if (isAnd)
      branch(test, next, join, boolOp->range());
    else
      branch(test, join, next, boolOp->range());
    sealBlock(next);
    current = next;
  }
  sealBlock(join);
  current = join;
  lastBoolOpShortCircuits = shortCircuits;
  return readVariable(result, join, boolOp->range());
}

Instr *SSABuilder::buildIfExp(const IfExpExpr *ifExp) {
  std::string result = "$ifexp" + std::to_string(hiddenCounter++);
  Block *thenBlock = newBlock();
  Block *elseBlock = newBlock();
  Block *join = newBlock();
  buildCondition(ifExp->test, thenBlock, elseBlock);
  sealBlock(thenBlock);
  sealBlock(elseBlock);
  current = thenBlock;
  Instr *body = buildExpr(ifExp->body);
  if (!body)
    return nullptr;
  bindVariable(result, current, body);
  jump(join, ifExp->range());
  current = elseBlock;
  Instr *orelse = buildExpr(ifExp->orelse);
  if (!orelse)
    return nullptr;
  bindVariable(result, current, orelse);
  jump(join, ifExp->range());
  sealBlock(join);
  current = join;
  return readVariable(result, join, ifExp->range());
}

Instr *SSABuilder::buildCall(const CallExpr *call) {
  Instr *callee = buildExpr(call->callee);
  if (!callee)
    return nullptr;
  llvm::SmallVector<Instr *, 4> operands{callee};
  llvm::SmallVector<unsigned, 1> starred;
  for (const Expr *arg : call->args) {
    // `f(*t)`: t's items are arguments, as many as its type says.
    const auto *star = dyn_cast<StarredExpr>(arg);
    if (star)
      starred.push_back(operands.size());
    Instr *value = buildExpr(star ? star->value : arg);
    if (!value)
      return nullptr;
    operands.push_back(value);
  }
  std::vector<std::string> keywordNames;
  for (const Keyword &keyword : call->keywords) {
    if (keyword.name.empty())
      return unsupported(DiagID::err_unsupported_expression_singular, keyword.nameRange,
                         {"keyword argument unpacking with '**'"});
    Instr *value = buildExpr(keyword.value);
    if (!value)
      return nullptr;
    operands.push_back(value);
    keywordNames.push_back(keyword.name.str());
  }
  Instr *instr = emit(Op::Call, call->range(), operands);
  instr->keywordNames = std::move(keywordNames);
  instr->starred = std::move(starred);
  instr->operandRanges.push_back(call->callee->range());
  for (const Expr *arg : call->args)
    instr->operandRanges.push_back(arg->range());
  for (const Keyword &keyword : call->keywords)
    instr->operandRanges.push_back(keyword.value->range());
  return instr;
}

} // namespace

std::unique_ptr<Function> buildSSA(const FunctionDecl &decl, const ModuleScope &scope,
                                   TypeContext &types, DiagnosticEngine &diags) {
  auto fn = std::make_unique<Function>();
  fn->decl = &decl;
  if (!SSABuilder(*fn, scope, types, diags).build())
    return nullptr;
  return fn;
}

} // namespace kiln::ssa
