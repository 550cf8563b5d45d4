//===- frontend/ssa/ssa_verifier.cpp - Checks of the untyped SSA form -----===//
//
// The SSA builder's own consistency check, run on every function it builds.
// Its failures are Kiln bugs ("internal error"), never the user's: they mean
// the builder would otherwise hand type inference a program it did not
// write.
//
//===----------------------------------------------------------------------===//

#include "frontend/ssa/ssa.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringSet.h>

namespace kiln::ssa {

bool verifySSA(const Function &fn, DiagnosticEngine &diags) {
  std::vector<Block *> order = fn.reversePostOrder();
  // Variables bound on every path to the end of each block; a block not
  // yet in the map is still "everything" (the analysis's top).
  llvm::DenseMap<Block *, llvm::StringSet<>> boundAtEnd;
  for (bool changed = true; changed;) {
    changed = false;
    for (Block *block : order) {
      std::optional<llvm::StringSet<>> bound;
      for (Block *predecessor : block->predecessors) {
        auto found = boundAtEnd.find(predecessor);
        if (found == boundAtEnd.end())
          continue;
        if (!bound) {
          bound = found->second;
          continue;
        }
        llvm::SmallVector<llvm::StringRef, 8> lost;
        for (const auto &name : *bound)
          if (!found->second.contains(name.getKey()))
            lost.push_back(name.getKey());
        for (llvm::StringRef name : lost)
          bound->erase(name);
      }
      if (!bound)
        bound.emplace();
      for (const auto &[name, assigned] : block->bindings) {
        if (assigned)
          bound->insert(name);
        else
          bound->erase(name);
      }
      // Sets only shrink from one round to the next, so a change shows in
      // the size.
      auto previous = boundAtEnd.find(block);
      if (previous == boundAtEnd.end() || previous->second.size() != bound->size()) {
        boundAtEnd[block] = std::move(*bound);
        changed = true;
      }
    }
  }
  // Every operand is a value of the function: removed phis must not
  // linger as operands.
  llvm::DenseSet<const Instr *> placed;
  for (Block *block : order) {
    placed.insert(block->phis.begin(), block->phis.end());
    placed.insert(block->instrs.begin(), block->instrs.end());
  }
  auto isValue = [&](const Instr *value) {
    return value && (value->op == Op::Undefined || placed.contains(value));
  };
  for (Block *block : order) {
    llvm::SmallVector<Instr *, 16> users(block->phis.begin(), block->phis.end());
    users.append(block->instrs.begin(), block->instrs.end());
    for (const Instr *user : users)
      for (const Instr *operand : user->operands)
        if (!isValue(operand)) {
          diags.report(DiagID::err_internal_dangling_value, user->range,
                       {"%" + std::to_string(user->id)});
          return false;
        }
    if (block->terminator.value && !isValue(block->terminator.value)) {
      diags.report(DiagID::err_internal_dangling_value, block->terminator.range,
                   {"the terminator of bb" + std::to_string(block->id)});
      return false;
    }
  }
  for (Block *block : order)
    for (Instr *phi : block->phis)
      for (size_t i = 0; i < phi->operands.size(); ++i) {
        const Instr *operand = phi->operands[i];
        if (operand->op != Op::Undefined || !boundAtEnd[phi->incoming[i]].contains(phi->name))
          continue;
        diags.report(DiagID::err_internal_unbound_phi, phi->range,
                     {phi->name, "bb" + std::to_string(phi->incoming[i]->id)});
        return false;
      }
  return true;
}

} // namespace kiln::ssa
