//===- cache/key_location.h - Where signing and trusted keys live -*- C++ -*-===//
//
// Kiln's configuration folder is the first of $KILN_CONFIG_DIR,
// $XDG_CONFIG_HOME/kiln, ~/.config/kiln. It holds
//
//   keys/<name>.key     private signing keys (folder 0700, files 0600)
//   trusted-keys        the public keys whose archives import accepts
//
// A trusted-keys file elsewhere (one committed with a project, say) takes
// the place of the default one through --trusted-keys or
// $KILN_TRUSTED_KEYS; $KILN_SIGNING_KEY names the key exports sign with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Support/Error.h>

#include <optional>
#include <string>

namespace kiln::cache {

/// The environment variables that matter; fromProcess() reads them, and
/// takes empty ones for unset.
struct KeyEnvironment {
  std::optional<std::string> configDir;   // KILN_CONFIG_DIR
  std::optional<std::string> xdgConfig;   // XDG_CONFIG_HOME
  std::optional<std::string> home;        // HOME
  std::optional<std::string> trustedKeys; // KILN_TRUSTED_KEYS
  std::optional<std::string> signingKey;  // KILN_SIGNING_KEY
  static KeyEnvironment fromProcess();
};

struct KeyLocation {
  std::string keysDirectory;
  std::string trustedKeysFile;
  /// Whether the trusted-keys file was named (flag or environment) rather
  /// than the default; a named file must exist.
  bool trustedKeysNamed = false;
  /// $KILN_SIGNING_KEY: the key (a name or a file) to sign with when none
  /// is named on the command line.
  std::optional<std::string> signingKey;
};

/// The folders and files; `trustedKeysFlag` is --trusted-keys. An error
/// when no folder can be named (no HOME).
llvm::Expected<KeyLocation> resolveKeyLocation(const KeyEnvironment &environment,
                                               const std::optional<std::string> &trustedKeysFlag);

} // namespace kiln::cache
