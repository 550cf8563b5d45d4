//===- driver/command_line.cpp --------------------------------------------===//

#include "driver/command_line.h"

#include "cache/cache_location.h"
#include "driver/arch_option.h"
#include "frontend/source/file_prefix_map.h"

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

CLI::Validator prefixMapValidator() {
  return CLI::Validator(
      [](std::string &entry) -> std::string {
        if (FilePrefixMap::parse(entry))
          return std::string();
        return "'" + entry + "' is no OLD=NEW, such as --file-prefix-map=$PWD=/src";
      },
      "");
}

} // namespace kiln::driver
