//===- driver/cache_key_command.h - `kiln cache key ...` --------*- C++ -*-===//
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

enum class CacheKeyAction { Generate, List, ExportPublic, Trust, Untrust };

struct CacheKeyOptions {
  CacheKeyAction action = CacheKeyAction::List;
  /// generate --name.
  std::optional<std::string> name;
  /// generate --file: where to write the private key instead of the keys
  /// folder.
  std::optional<std::string> file;
  /// export-public: a key name or file; trust: a public key line, a file
  /// of them, or `-`; untrust: a name or fingerprint.
  std::optional<std::string> argument;
  /// --trusted-keys.
  std::optional<std::string> trustedKeys;
  /// --json: print the result as one JSON object.
  bool json = false;
};

/// Runs one `kiln cache key` subcommand; returns the exit status.
int runCacheKeyCommand(const CacheKeyOptions &options);

/// Declares `kiln cache key` and its options on `cacheCommand`; parsing fills `keyOptions`.
CLI::App *addCacheKeyCommand(CLI::App &cacheCommand, CacheKeyOptions &keyOptions);

} // namespace kiln::driver
