//===- ir/operation_sites.cpp - Operations numbered, not placed -----------===//

#include "ir/operation_sites.h"

#include <llvm/ADT/SmallPtrSet.h>

namespace kiln::ir {

std::vector<const Function *> reachableFunctions(const Function &kernel) {
  std::vector<const Function *> order;
  llvm::SmallPtrSet<const Function *, 8> seen{&kernel};
  std::vector<const Function *> stack{&kernel};
  while (!stack.empty()) {
    const Function *function = stack.back();
    stack.pop_back();
    order.push_back(function);
    // Pushed in reverse, so that the first callee is visited first.
    std::vector<const Function *> callees;
    for (const auto &block : function->blocks)
      for (const Instruction *instruction : block->instructions)
        if (instruction->opcode == Opcode::Call && instruction->callee &&
            seen.insert(instruction->callee).second)
          callees.push_back(instruction->callee);
    stack.insert(stack.end(), callees.rbegin(), callees.rend());
  }
  return order;
}

OperationSites::OperationSites(const Function &kernel) {
  for (const Function *function : reachableFunctions(kernel))
    for (const auto &block : function->blocks) {
      for (const Instruction *instruction : block->instructions) {
        numbers[instruction] = static_cast<uint32_t>(positions.size());
        positions.push_back({function, instruction->location});
      }
      numbers[&block->terminator] = static_cast<uint32_t>(positions.size());
      positions.push_back({function, block->terminator.location});
    }
}

std::string OperationSites::describe(uint32_t site) const {
  if (site >= positions.size())
    return "";
  const Position &position = positions[site];
  if (!position.location.isValid() || position.function->path.empty())
    return "";
  return position.function->path + ":" + std::to_string(position.location.line);
}

} // namespace kiln::ir
