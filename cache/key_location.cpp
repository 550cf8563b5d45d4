//===- cache/key_location.cpp ---------------------------------------------===//

#include "cache/key_location.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>

namespace kiln::cache {

namespace {

std::optional<std::string> variable(const char *name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  if (value && value->empty())
    return std::nullopt;
  return value;
}

} // namespace

KeyEnvironment KeyEnvironment::fromProcess() {
  return {variable("KILN_CONFIG_DIR"), variable("XDG_CONFIG_HOME"), variable("HOME"),
          variable("KILN_TRUSTED_KEYS"), variable("KILN_SIGNING_KEY")};
}

llvm::Expected<KeyLocation> resolveKeyLocation(const KeyEnvironment &environment,
                                               const std::optional<std::string> &trustedKeysFlag) {
  llvm::SmallString<256> config;
  if (environment.configDir) {
    config = *environment.configDir;
  } else if (environment.xdgConfig) {
    config = *environment.xdgConfig;
    llvm::sys::path::append(config, "kiln");
  } else if (environment.home) {
    config = *environment.home;
    llvm::sys::path::append(config, ".config", "kiln");
  } else {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no folder for Kiln's keys: set KILN_CONFIG_DIR, "
                                   "XDG_CONFIG_HOME or HOME");
  }
  KeyLocation location;
  location.signingKey = environment.signingKey;
  llvm::SmallString<256> keys(config);
  llvm::sys::path::append(keys, "keys");
  location.keysDirectory = keys.str().str();
  if (trustedKeysFlag && !trustedKeysFlag->empty()) {
    location.trustedKeysFile = *trustedKeysFlag;
    location.trustedKeysNamed = true;
  } else if (environment.trustedKeys) {
    location.trustedKeysFile = *environment.trustedKeys;
    location.trustedKeysNamed = true;
  } else {
    llvm::SmallString<256> trusted(config);
    llvm::sys::path::append(trusted, "trusted-keys");
    location.trustedKeysFile = trusted.str().str();
  }
  return location;
}

} // namespace kiln::cache
