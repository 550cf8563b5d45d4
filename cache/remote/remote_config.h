//===- cache/remote/remote_config.h - Which remotes, and how ----*- C++ -*-===//
//
// A remote cache is named as ccache names its remote storage: a URL, then
// attributes after '|':
//
//   redis://cache.internal:6379|read-only|operation-timeout=500
//   http://cache-*.internal/kiln|shards=a,b,c(2)|layout=subdirs|bearer-token-env=CACHE_TOKEN
//
// Several remotes are tried in order. --remote-cache (repeatable) wins over
// $KILN_REMOTE_CACHE (remotes separated by spaces); --no-remote-cache or
// KILN_REMOTE_CACHE=off turns the tier off. Secrets never sit in the
// attributes: a token or password comes from the environment variable an
// attribute names, from the URL's user-info (shown as *** in messages), or
// from ~/.netrc.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/remote/remote_store.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cache::remote {

/// One server of a sharded remote: its name replaces '*' in the URL; a key
/// goes to the shard that rendezvous hashing picks, weighted.
struct Shard {
  std::string name;
  unsigned weight = 1;
};

struct RemoteConfig {
  /// As written, '*' standing for the shard's name.
  std::string url;
  /// `url` without a password, for messages.
  std::string displayName;
  std::vector<Shard> shards;
  bool readOnly = false;
  std::chrono::milliseconds connectTimeout{250};
  std::chrono::milliseconds operationTimeout{1000};
  /// How long the build waits at its end for uploads still queued.
  std::chrono::milliseconds uploadWait{2000};
  std::string layout = "flat";
  /// Names of environment variables holding secrets.
  std::optional<std::string> bearerTokenEnv, passwordEnv;
  std::string caFile;
  /// Accept entries whoever made them (digests and keys are still checked),
  /// and upload unsigned ones when there is no signing key.
  bool skipSignature = false;
};

/// Parses one remote: a URL and its attributes. An error names the remote
/// (without its password) and the attribute that is wrong.
llvm::Expected<RemoteConfig> parseRemoteConfig(llvm::StringRef text);

/// What the command line says about remotes.
struct RemoteFlags {
  std::vector<std::string> urls;
  bool disabled = false;
};

/// What a project's configuration says (pyproject.toml's [tool.kiln]
/// remote-cache), below the environment.
struct RemoteConfiguration {
  std::optional<std::vector<std::string>> urls;
  /// Where it is written, for messages.
  std::string origin;
};

/// The remotes to use, in order: the flags', else $KILN_REMOTE_CACHE's
/// (`environment`), else the configured ones, else none.
llvm::Expected<std::vector<RemoteConfig>>
resolveRemoteConfigs(const RemoteFlags &flags, const std::optional<std::string> &environment,
                     const RemoteConfiguration &configured = {});

/// The endpoint of `config`'s shard `shard` (empty for an unsharded remote),
/// with the secrets its attributes name read through `getenv`; an error
/// when a named variable is not set.
llvm::Expected<Endpoint>
endpointFor(const RemoteConfig &config, llvm::StringRef shard,
            const std::function<std::optional<std::string>(llvm::StringRef)> &getenv);

/// The shard of `shards` that `key` belongs to: weighted rendezvous
/// hashing, so that adding a shard moves only the keys it takes.
size_t shardFor(llvm::ArrayRef<Shard> shards, llvm::StringRef key);

} // namespace kiln::cache::remote
