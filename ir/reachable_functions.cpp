//===- ir/reachable_functions.cpp - What a kernel reaches through calls ----===//

#include "ir/reachable_functions.h"

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

std::vector<const Instruction *> localArrays(const Function &kernel) {
  std::vector<const Instruction *> arrays;
  for (const Function *function : reachableFunctions(kernel))
    for (const auto &block : function->blocks)
      for (const Instruction *instruction : block->instructions)
        if (instruction->opcode == Opcode::LocalArray)
          arrays.push_back(instruction);
  return arrays;
}

} // namespace kiln::ir
