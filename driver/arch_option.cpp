//===- driver/arch_option.cpp - Checking an --arch value ------------------===//

#include "driver/arch_option.h"

#include "backend/cuda_tools/arch_list.h"

namespace kiln::driver {

std::optional<std::string> archListSyntaxProblem(llvm::StringRef list) {
  // Any GPU will do for `native`: only the grammar counts here.
  auto anyGpu = []() -> llvm::Expected<std::vector<unsigned>> {
    return std::vector<unsigned>{*cuda_tools::defaultArchSet().cubins.begin()};
  };
  llvm::Expected<cuda_tools::ArchSet> parsed = cuda_tools::parseArchList(list, anyGpu);
  if (parsed)
    return std::nullopt;
  return llvm::toString(parsed.takeError());
}

} // namespace kiln::driver
