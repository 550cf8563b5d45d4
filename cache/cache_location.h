//===- cache/cache_location.h - Where the cache lives, how big --*- C++ -*-===//
//
// The cache folder is the first of: --cache-dir, $KILN_CACHE_DIR, the
// project's configured folder, $XDG_CACHE_HOME/kiln, ~/.cache/kiln.
// --no-cache or KILN_CACHE=0 (also "off", "false", "no") turn the cache
// off. The size limit is --max-size, else $KILN_CACHE_MAX_SIZE, else the
// project's configured limit, else the limit stored in the cache's index
// (cache.h), else 2 GiB.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::cache {

inline constexpr uint64_t kDefaultMaxSize = uint64_t(2) << 30;

/// What the command line says about the cache.
struct CacheFlags {
  std::optional<std::string> directory;
  std::optional<std::string> maxSize;
  bool disabled = false;
};

/// The environment variables that matter; fromProcess() reads them.
struct CacheEnvironment {
  std::optional<std::string> cacheDir; // KILN_CACHE_DIR
  std::optional<std::string> cache;    // KILN_CACHE
  std::optional<std::string> maxSize;  // KILN_CACHE_MAX_SIZE
  std::optional<std::string> xdgCache; // XDG_CACHE_HOME
  std::optional<std::string> home;     // HOME
  static CacheEnvironment fromProcess();
};

/// What a project's configuration says (pyproject.toml's [tool.kiln]
/// cache-dir and cache-max-size), below the environment.
struct CacheConfiguration {
  std::optional<std::string> directory;
  std::optional<std::string> maxSize;
  /// Where it is written, for messages.
  std::string origin;
};

/// Where a size limit was given.
enum class SizeSource { Flag, Environment, Configured, Stored, Default };

/// "flag", "environment", "configured", "stored", "default".
llvm::StringRef sizeSourceName(SizeSource source);

struct CacheLocation {
  /// Empty when the cache is off.
  std::string directory;
  /// The limit of the flag or the environment, else the default: the
  /// cache replaces the default with the limit it stores.
  uint64_t maxSize = kDefaultMaxSize;
  SizeSource maxSizeSource = SizeSource::Default;
  bool enabled() const { return !directory.empty(); }
  /// The limit the flag or the environment gives, if either does.
  std::optional<uint64_t> givenMaxSize() const {
    if (maxSizeSource == SizeSource::Default)
      return std::nullopt;
    return maxSize;
  }
};

/// The folder and size limit. An error for an unreadable size, or when no
/// folder can be named (no HOME).
llvm::Expected<CacheLocation> resolveCacheLocation(const CacheFlags &flags,
                                                   const CacheEnvironment &environment,
                                                   const CacheConfiguration &configured = {});

/// "2G", "500M", "64K", "1GiB", "1.5G", "1048576": a size in bytes (powers
/// of 1024).
llvm::Expected<uint64_t> parseSize(llvm::StringRef text);

/// "30d", "12h", "45m", "90s", "2w": an age in seconds.
llvm::Expected<uint64_t> parseAge(llvm::StringRef text);

/// "1.5 MiB".
std::string formatSize(uint64_t bytes);

} // namespace kiln::cache
