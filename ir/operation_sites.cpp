//===- ir/operation_sites.cpp - Operations numbered, not placed -----------===//

#include "ir/operation_sites.h"

namespace kiln::ir {

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
