//===- driver/command_line.cpp --------------------------------------------===//

#include "driver/command_line.h"

#include "cache/cache_location.h"
#include "driver/arch_option.h"

namespace kiln::driver {

CLI::Validator archListValidator() {
  return CLI::Validator(
      [](std::string &list) { return archListSyntaxProblem(list).value_or(std::string()); },
      "ARCHS");
}

CLI::Validator sizeValidator() {
  return CLI::Validator(
      [](std::string &size) -> std::string {
        llvm::Expected<uint64_t> parsed = cache::parseSize(size);
        return parsed ? std::string() : llvm::toString(parsed.takeError());
      },
      "SIZE");
}

CLI::Validator ageValidator() {
  return CLI::Validator(
      [](std::string &age) -> std::string {
        llvm::Expected<uint64_t> parsed = cache::parseAge(age);
        return parsed ? std::string() : llvm::toString(parsed.takeError());
      },
      "AGE");
}

} // namespace kiln::driver
