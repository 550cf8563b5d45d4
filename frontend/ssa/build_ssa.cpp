//===- frontend/ssa/build_ssa.cpp - AST to untyped SSA --------------------===//
//
// The entry point, buildSSA(), and the construction itself: blocks, and
// variables read and written through Braun et al.'s on-demand SSA
// construction ("Simple and Efficient Construction of Static Single
// Assignment Form", CC 2013): a read looks the variable up in the current
// block, then recursively in its predecessors, creating a phi only where
// several definitions meet. Blocks are sealed once all their predecessors
// are known; trivial phis are removed as they appear.
//
//===----------------------------------------------------------------------===//

#include "frontend/ssa/ssa_builder.h"

#include <llvm/ADT/STLExtras.h>

namespace kiln::ssa {

using namespace ast;
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

//===----------------------------------------------------------------------===//
// Building a function
//===----------------------------------------------------------------------===//

bool SSABuilder::build() {
  const FunctionDefStmt *def = fn.decl->def;
  collectLocalNames(*def);

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

  removeUnreachableBlocks();
  removeUnusedConstants();
  findUnknownBeforeSSA();
  return verifySSA(fn, diags) && !failed;
}

void SSABuilder::findUnknownBeforeSSA() {
  // A merge is no assignment (a variable's entry for a removed trivial phi
  // names the value it merged, counted once).
  llvm::StringMap<llvm::SmallVector<Instr *, 2>> assignments;
  for (const VariableDef &variable : fn.variables)
    if (!variable.value->isPhi() && variable.value->op != Op::Undefined &&
        !llvm::is_contained(assignments[variable.name], variable.value))
      assignments[variable.name].push_back(variable.value);
  llvm::DenseSet<const Instr *> reassigned;
  for (const auto &entry : assignments)
    if (entry.second.size() > 1)
      reassigned.insert(entry.second.begin(), entry.second.end());
  // Marks spread from operands to users until none is added (one pass,
  // nearly always: operands are made before the values that use them).
  for (bool added = true; added;) {
    added = false;
    for (const auto &instr : fn.instrs) {
      const Instr *value = instr.get();
      if (fn.unknownBeforeSSA.contains(value))
        continue;
      if (value->isPhi() || reassigned.contains(value) ||
          llvm::any_of(value->operands, [&](const Instr *operand) {
            return fn.unknownBeforeSSA.contains(operand);
          })) {
        fn.unknownBeforeSSA.insert(value);
        added = true;
      }
    }
  }
}

void SSABuilder::removeUnreachableBlocks() {
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

std::unique_ptr<Function> buildSSA(const FunctionDecl &decl, const ModuleScope &scope,
                                   TypeContext &types, DiagnosticEngine &diags) {
  auto fn = std::make_unique<Function>();
  fn->decl = &decl;
  if (!SSABuilder(*fn, scope, types, diags).build())
    return nullptr;
  return fn;
}

} // namespace kiln::ssa
