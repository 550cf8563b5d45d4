//===- cache/remote/remote_tier.cpp ---------------------------------------===//

#include "cache/remote/remote_tier.h"

#include "cache/cache_location.h"
#include "cache/remote/remote_entry.h"

#include <llvm/Support/FormatVariadic.h>

#include <set>

namespace kiln::cache::remote {

namespace {

/// What one remote's upload queue may hold before entries are dropped.
constexpr uint64_t kQueuedBytesLimit = uint64_t(256) << 20;
constexpr size_t kQueuedEntriesLimit = 4096;

uint64_t microsecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

std::string shortKey(llvm::StringRef key) {
  return key.take_front(16).str() + "...";
}

} // namespace

RemoteTier::RemoteTier(TierOptions options, Report warn, Report note)
    : options(std::move(options)), warn(std::move(warn)), note(std::move(note)) {
  for (RemoteConfig &config : this->options.remotes) {
    auto remote = std::make_unique<Remote>();
    remote->config = config;
    remote->trust = this->options.trust;
    remote->trust.skipSignature |= config.skipSignature;
    open(*remote);
    remotes.push_back(std::move(remote));
  }
}

RemoteTier::~RemoteTier() {
  finish();
}

void RemoteTier::open(Remote &remote) {
  const RemoteConfig &config = remote.config;
  std::vector<Shard> shards = config.shards;
  if (shards.empty())
    shards.push_back({"", 1});
  for (const Shard &shard : shards) {
    llvm::Expected<Endpoint> endpoint = endpointFor(config, shard.name, options.getenv);
    llvm::Expected<std::unique_ptr<RemoteStore>> store =
        endpoint ? openRemoteStore(*endpoint) : endpoint.takeError();
    if (!store) {
      remote.shards.clear();
      warnOnce(remote, llvm::toString(store.takeError()) + "; not using it");
      return;
    }
    remote.shards.push_back({shard.name, shard.weight, std::move(*store)});
  }
  if (config.readOnly)
    return;
  if (!options.signer && !config.skipSignature) {
    // A setting to mend, not a remote misbehaving: it does not take the
    // remote's one warning.
    std::lock_guard<std::mutex> lock(reportMutex);
    if (warn)
      warn("remote cache " + config.displayName + ": no key to sign uploads with (" +
           options.noSignerReason +
           "); using it read-only. Make one with `kiln cache key generate`, or add |read-only "
           "to the remote");
    return;
  }
  remote.takesUploads = true;
  remote.uploads = std::make_unique<UploadQueue>(
      [this, &remote](const std::string &key, const std::string &bytes) {
        put(remote, key, bytes);
      },
      kQueuedBytesLimit, kQueuedEntriesLimit);
}

RemoteStore &RemoteTier::storeFor(Remote &remote, llvm::StringRef key) {
  if (remote.shards.size() == 1)
    return *remote.shards.front().store;
  return *remote.shards[shardFor(remote.config.shards, key)].store;
}

void RemoteTier::warnOnce(Remote &remote, const llvm::Twine &message) {
  if (remote.warned.exchange(true))
    return noteLine("remote cache " + remote.config.displayName + ": " + message);
  std::lock_guard<std::mutex> lock(reportMutex);
  if (warn)
    warn(("remote cache " + remote.config.displayName + ": " + message).str());
}

void RemoteTier::noteLine(const llvm::Twine &message) {
  std::lock_guard<std::mutex> lock(reportMutex);
  if (note)
    note(("  " + message).str());
}

void RemoteTier::failed(Remote &remote, CircuitBreaker::Request request, llvm::Error error,
                        uint64_t objectBytes) {
  llvm::StringRef action = request == CircuitBreaker::Request::Lookup ? "a lookup" : "an upload";
  RemoteFailure failure = RemoteFailure::ServerError;
  std::string message;
  llvm::handleAllErrors(
      std::move(error),
      [&](const RemoteError &remoteError) {
        failure = remoteError.failure();
        message = remoteError.message();
      },
      [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
  ++errors;
  switch (remote.breaker.recordFailure(failure, request)) {
  case CircuitBreaker::Verdict::Continue:
    return noteLine("remote cache " + remote.config.displayName + ": " + action +
                    " failed: " + message);
  case CircuitBreaker::Verdict::SkipEntry:
    return noteLine("remote cache " + remote.config.displayName + ": an entry of " +
                    formatSize(objectBytes) + " is too large for it (" + message +
                    "); not uploaded");
  case CircuitBreaker::Verdict::StopUploads:
    return warnOnce(remote, action + " failed: " + message +
                                "; uploading nothing more to it in this build");
  case CircuitBreaker::Verdict::Stop:
    return warnOnce(remote,
                    action + " failed: " + message + "; not using it for the rest of this build");
  }
}

void RemoteTier::answered(Remote &remote, uint64_t microseconds) {
  uint64_t slow =
      std::chrono::duration_cast<std::chrono::microseconds>(remote.config.operationTimeout)
          .count() /
      2;
  if (microseconds <= slow)
    remote.breaker.recordSuccess(CircuitBreaker::Request::Lookup);
  else if (remote.breaker.recordSlowLookup() == CircuitBreaker::Verdict::Stop)
    warnOnce(remote, llvm::formatv("answers slowly: {0} lookups in a row took more than half "
                                   "its operation-timeout ({1} ms); not using it for the rest "
                                   "of this build",
                                   CircuitBreaker::kErrorsInARow, slow / 1000)
                         .str());
}

std::optional<CachedEntry> RemoteTier::accept(Remote &remote, llvm::StringRef key,
                                              llvm::StringRef object) {
  bytesDown += object.size();
  llvm::Expected<CachedEntry> entry = decodeRemoteEntry(key, object, remote.trust);
  if (!entry) {
    ++rejected;
    ++remote.rejections;
    warnOnce(remote, "entry " + shortKey(key) + " rejected: " + llvm::toString(entry.takeError()) +
                         "; compiling it instead");
    return std::nullopt;
  }
  return std::move(*entry);
}

std::optional<CachedEntry> RemoteTier::lookup(llvm::StringRef key) {
  {
    std::lock_guard<std::mutex> lock(prefetchedMutex);
    if (auto found = prefetched.find(key.str()); found != prefetched.end()) {
      std::optional<CachedEntry> entry = std::move(found->second);
      prefetched.erase(found);
      ++(entry ? hits : misses);
      return entry;
    }
  }
  bool asked = false;
  for (std::unique_ptr<Remote> &remotePointer : remotes) {
    Remote &remote = *remotePointer;
    if (remote.shards.empty() || !remote.breaker.allowsRequests())
      continue;
    asked = true;
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<std::optional<std::string>> object = storeFor(remote, key).get(key);
    uint64_t took = microsecondsSince(start);
    lookupMicroseconds += took;
    if (!object) {
      failed(remote, CircuitBreaker::Request::Lookup, object.takeError());
      continue;
    }
    answered(remote, took);
    if (!*object)
      continue;
    if (std::optional<CachedEntry> entry = accept(remote, key, **object)) {
      ++hits;
      return entry;
    }
  }
  if (asked)
    ++misses;
  return std::nullopt;
}

void RemoteTier::prefetch(llvm::ArrayRef<std::string> keys) {
  std::vector<std::string> left;
  {
    std::set<llvm::StringRef> seen;
    std::lock_guard<std::mutex> lock(prefetchedMutex);
    for (const std::string &key : keys)
      if (!prefetched.count(key) && seen.insert(key).second)
        left.push_back(key);
  }
  std::map<std::string, CachedEntry> found;
  // Every remote must have answered a key for its miss to be known.
  std::map<std::string, unsigned> answers;
  unsigned asked = 0;
  for (std::unique_ptr<Remote> &remotePointer : remotes) {
    Remote &remote = *remotePointer;
    if (remote.shards.empty() || !remote.breaker.allowsRequests())
      continue;
    ++asked;
    std::vector<std::string> missing;
    for (const std::string &key : left)
      if (!found.count(key))
        missing.push_back(key);
    for (const std::string &key : prefetchFrom(remote, missing, found))
      ++answers[key];
  }
  std::lock_guard<std::mutex> lock(prefetchedMutex);
  for (const std::string &key : left) {
    if (auto entry = found.find(key); entry != found.end())
      prefetched.emplace(key, std::move(entry->second));
    else if (asked && answers[key] == asked)
      prefetched.emplace(key, std::nullopt);
  }
}

std::vector<std::string> RemoteTier::prefetchFrom(Remote &remote, llvm::ArrayRef<std::string> keys,
                                                  std::map<std::string, CachedEntry> &found) {
  // By shard, then in batches of kBatchKeys.
  std::map<RemoteStore *, std::vector<std::string>> byStore;
  for (const std::string &key : keys)
    byStore[&storeFor(remote, key)].push_back(key);
  std::vector<std::string> answered;
  for (auto &[store, storeKeys] : byStore)
    for (size_t first = 0; first < storeKeys.size(); first += kBatchKeys) {
      if (!remote.breaker.allowsRequests())
        return answered;
      llvm::ArrayRef<std::string> batch =
          llvm::ArrayRef(storeKeys).slice(first, std::min(kBatchKeys, storeKeys.size() - first));
      auto start = std::chrono::steady_clock::now();
      llvm::Expected<std::vector<std::optional<std::string>>> objects = store->getMany(batch);
      uint64_t took = microsecondsSince(start);
      lookupMicroseconds += took;
      if (!objects) {
        failed(remote, CircuitBreaker::Request::Lookup, objects.takeError());
        continue;
      }
      this->answered(remote, took);
      for (size_t i = 0; i < batch.size(); ++i) {
        answered.push_back(batch[i]);
        if ((*objects)[i])
          if (std::optional<CachedEntry> entry = accept(remote, batch[i], *(*objects)[i]))
            found.emplace(batch[i], std::move(*entry));
      }
    }
  return answered;
}

void RemoteTier::upload(const EntryContents &contents) {
  if (llvm::none_of(remotes, [](const std::unique_ptr<Remote> &remote) {
        return remote->takesUploads && remote->breaker.allowsUploads();
      }))
    return;
  llvm::Expected<std::string> object =
      encodeRemoteEntry(contents, options.signer ? &*options.signer : nullptr);
  if (!object) {
    noteLine("remote cache: cannot sign the entry " + shortKey(contents.key) + ": " +
             llvm::toString(object.takeError()));
    return;
  }
  auto shared = std::make_shared<const std::string>(std::move(*object));
  for (std::unique_ptr<Remote> &remotePointer : remotes) {
    Remote &remote = *remotePointer;
    if (!remote.takesUploads || !remote.breaker.allowsUploads())
      continue;
    if (!remote.uploads->push(contents.key, shared)) {
      ++uploadsDropped;
      if (!remote.notedDrop.exchange(true))
        noteLine("remote cache " + remote.config.displayName +
                 ": its upload queue is full; entries it cannot take are not uploaded");
    }
  }
}

void RemoteTier::put(Remote &remote, const std::string &key, const std::string &bytes) {
  if (!remote.breaker.allowsUploads())
    return;
  auto start = std::chrono::steady_clock::now();
  llvm::Error error = storeFor(remote, key).put(key, bytes);
  uploadMicroseconds += microsecondsSince(start);
  if (error)
    return failed(remote, CircuitBreaker::Request::Upload, std::move(error), bytes.size());
  remote.breaker.recordSuccess(CircuitBreaker::Request::Upload);
  bytesUp += bytes.size();
  ++uploads;
}

void RemoteTier::finish() {
  if (finished)
    return;
  finished = true;
  auto start = std::chrono::steady_clock::now();
  for (std::unique_ptr<Remote> &remote : remotes) {
    if (remote->rejections > 1)
      noteLine(llvm::formatv("remote cache {0}: {1} entries rejected in all",
                             remote->config.displayName, remote->rejections.load())
                   .str());
    if (!remote->uploads)
      continue;
    size_t dropped = remote->uploads->finish(start + remote->config.uploadWait);
    if (!dropped)
      continue;
    uploadsDropped += dropped;
    noteLine(
        llvm::formatv("remote cache {0}: {1} uploads were still queued after upload-wait={2}ms; "
                      "not uploaded",
                      remote->config.displayName, dropped, remote->config.uploadWait.count())
            .str());
  }
}

TierCounters RemoteTier::counters() const {
  TierCounters counters;
  counters.hits = hits;
  counters.misses = misses;
  counters.errors = errors;
  counters.rejected = rejected;
  counters.bytesDown = bytesDown;
  counters.bytesUp = bytesUp;
  counters.uploads = uploads;
  counters.uploadsDropped = uploadsDropped;
  counters.lookupMicroseconds = lookupMicroseconds;
  counters.uploadMicroseconds = uploadMicroseconds;
  return counters;
}

} // namespace kiln::cache::remote
