//===- cache/remote/remote_tier.h - Remote caches behind the local one -*- C++ -*-===//
//
// The remote tier sits behind the local cache: a key the local cache lacks
// is asked of each remote in order; a hit is checked (remote_entry.h) and
// handed back for the local cache to keep. What the build compiles is
// uploaded to every remote that takes uploads, in the background
// (upload_queue.h), signed by the builder's key.
//
// Nothing here fails or stalls a build. A remote that misbehaves gets one
// warning per build, and its circuit breaker (circuit_breaker.h) decides
// whether it is asked again; entries that fail their checks are rejected,
// counted and compiled instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache.h"
#include "cache/remote/circuit_breaker.h"
#include "cache/remote/remote_config.h"
#include "cache/remote/remote_store.h"
#include "cache/remote/upload_queue.h"
#include "cache/signature.h"
#include "cache/trusted_keys.h"

#include <llvm/ADT/StringRef.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cache::remote {

struct TierOptions {
  std::vector<RemoteConfig> remotes;
  /// Whose signatures make a remote entry acceptable.
  TrustPolicy trust;
  /// Signs uploads. Without it, only remotes that skip signatures take
  /// (unsigned) uploads; `noSignerReason` says why there is none.
  std::optional<SigningKey> signer;
  std::string noSignerReason;
  /// Reads the environment variables attributes name.
  std::function<std::optional<std::string>(llvm::StringRef)> getenv;
};

/// What the tier did in one build; the local cache keeps the totals for
/// `kiln cache stats`.
struct TierCounters {
  uint64_t hits = 0, misses = 0, errors = 0, rejected = 0;
  uint64_t bytesDown = 0, bytesUp = 0, uploads = 0, uploadsDropped = 0;
  /// Time the build waited for lookups, and time uploads took.
  uint64_t lookupMicroseconds = 0, uploadMicroseconds = 0;
};

class RemoteTier {
public:
  using Report = std::function<void(llvm::StringRef)>;

  /// `warn` gets one line per misbehaving remote and build; `note` the
  /// details that only -v shows. Both may be called from any thread.
  RemoteTier(TierOptions options, Report warn, Report note);
  ~RemoteTier();

  /// The entry of `key` from the first remote that has an acceptable one:
  /// what prefetch() kept for it, else the remotes' answer now.
  std::optional<CachedEntry> lookup(llvm::StringRef key);

  /// Asks the remotes for `keys` in batches (RemoteStore::getMany: one
  /// round trip for up to kBatchKeys keys) and keeps their answers, checked
  /// as lookup() checks them, for the lookups of those keys that follow.
  /// A key whose batch failed is left for lookup() to ask again.
  void prefetch(llvm::ArrayRef<std::string> keys);

  /// Queues `contents` for upload; returns at once.
  void upload(const EntryContents &contents);

  /// Waits for queued uploads, each remote at most its upload-wait, and
  /// stops. Call once, at the end of the build.
  void finish();

  TierCounters counters() const;

private:
  struct ShardStore {
    std::string name;
    unsigned weight = 1;
    std::unique_ptr<RemoteStore> store;
  };
  struct Remote {
    RemoteConfig config;
    /// The tier's trust, with the remote's insecure-skip-signature.
    TrustPolicy trust;
    std::vector<ShardStore> shards;
    CircuitBreaker breaker;
    std::unique_ptr<UploadQueue> uploads;
    bool takesUploads = false;
    std::atomic<bool> warned{false};
    std::atomic<bool> notedDrop{false};
    std::atomic<uint64_t> rejections{0};
  };

  void open(Remote &remote);
  RemoteStore &storeFor(Remote &remote, llvm::StringRef key);
  /// Tells `remote`'s breaker how long a request that was answered took.
  void answered(Remote &remote, uint64_t microseconds);
  /// The entry in `object`, which `remote` returned for `key`, if it
  /// passes the checks; else counts and reports the rejection.
  std::optional<CachedEntry> accept(Remote &remote, llvm::StringRef key, llvm::StringRef object);
  /// Asks `remote` for `keys` in batches; fills `found` with the entries
  /// it has, and returns the keys it answered (with an entry or without).
  std::vector<std::string> prefetchFrom(Remote &remote, llvm::ArrayRef<std::string> keys,
                                        std::map<std::string, CachedEntry> &found);
  void failed(Remote &remote, CircuitBreaker::Request request, llvm::Error error,
              uint64_t objectBytes = 0);
  void put(Remote &remote, const std::string &key, const std::string &bytes);
  void warnOnce(Remote &remote, const llvm::Twine &message);
  void noteLine(const llvm::Twine &message);

  TierOptions options;
  Report warn, note;
  std::vector<std::unique_ptr<Remote>> remotes;
  std::mutex reportMutex;
  /// What prefetch() learnt: each key every remote answered, with the
  /// entry of the first that had one, or nothing when none had.
  std::mutex prefetchedMutex;
  std::map<std::string, std::optional<CachedEntry>> prefetched;
  std::atomic<uint64_t> hits{0}, misses{0}, errors{0}, rejected{0}, bytesDown{0}, bytesUp{0},
      uploads{0}, uploadsDropped{0}, lookupMicroseconds{0}, uploadMicroseconds{0};
  bool finished = false;
};

} // namespace kiln::cache::remote
