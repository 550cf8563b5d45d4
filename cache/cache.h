//===- cache/cache.h - The specialization cache -----------------*- C++ -*-===//
//
// [Note: the specialization cache]
//
//   <cache>/index.sqlite        key → the blobs of one entry (cache_index.h)
//   <cache>/objects/ab/cdef...  content-addressed blobs (blob_store.h)
//
// The driver asks for a key (pipeline/build_cache.h); a hit hands back the
// entry's blobs, each read in full and checked against its digest. A
// missing or damaged blob makes the lookup a miss: it is counted, reported
// once, and the entry's row dropped so that the next store replaces it.
//
// Nothing here ever fails a build. A cache that cannot be opened (read-only
// folder, an index from a newer Kiln) is no cache, with one warning; a
// damaged index or one in an older format is moved aside and rebuilt from
// the metadata blobs; a store that fails (full disk) is skipped, and the
// process stores nothing more, with one warning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/blob_store.h"
#include "cache/cache_index.h"
#include "cache/entry_metadata.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cache {

struct CacheOptions {
  std::string directory;
  uint64_t maxSize = 0;
};

/// What a build hands the cache to keep.
struct EntryContents {
  HexDigest key;
  std::string kind, target, name;
  /// JSON text, or empty.
  std::string info;
  /// (role, bytes), in order.
  std::vector<std::pair<std::string, std::string>> blobs;
};

/// What a hit hands back.
struct CachedEntry {
  EntryMetadata metadata;
  /// By role.
  std::map<std::string, std::string> blobs;
};

class Cache {
public:
  using WarningHandler = std::function<void(llvm::StringRef)>;

  /// Opens the cache in `options.directory`, creating it, and repairing an
  /// index that is damaged, gone or in an older format (reported through
  /// `warn`). A folder this process cannot write (a read-only mount of a
  /// cache filled elsewhere) opens read-only: lookups are served, stores are
  /// skipped with one warning. An error means there is no usable cache.
  static llvm::Expected<std::unique_ptr<Cache>> open(const CacheOptions &options,
                                                     WarningHandler warn);

  /// The entry of `key`, verified; nothing on a miss. Thread-safe.
  std::optional<CachedEntry> lookup(llvm::StringRef key);

  /// Keeps an entry. Problems are warnings. Thread-safe.
  void store(const EntryContents &contents);
  /// Keeps many entries, publishing them in one transaction: a build keeps
  /// what it made at its end. Problems are warnings. Thread-safe.
  void storeAll(llvm::ArrayRef<EntryContents> entries);

  /// Adds to the counters `finish` records (the remote tier's, say).
  /// Thread-safe.
  void addCounters(const CounterDeltas &more);

  /// Records uses and counters, then applies the size limit. Call once, at
  /// the end; the destructor does otherwise.
  void finish();
  ~Cache();

  CacheIndex &index() { return *indexPtr; }
  const BlobStore &blobs() const { return blobStore; }
  const std::string &directory() const { return options.directory; }
  /// Whether the folder could not be written when the cache was opened.
  bool isReadOnly() const { return readOnly; }
  /// The file system's name when the cache is on a network file system.
  const std::optional<std::string> &networkFileSystem() const { return network; }

  /// Reads `key`'s entry through `metaDigest`: Ok, or the first missing or
  /// damaged blob (`bad`).
  BlobStatus readEntry(llvm::StringRef key, llvm::StringRef metaDigest, CachedEntry &entry,
                       HexDigest &bad) const;

  /// Rebuilds index rows from every intact metadata blob whose blobs all
  /// exist. Returns how many entries it added.
  llvm::Expected<uint64_t> indexFromBlobs();

  /// Writes an entry's blobs and metadata blob; the metadata to publish.
  llvm::Expected<CacheIndex::NewEntry> writeBlobs(const EntryContents &contents);

private:
  Cache(CacheOptions options, WarningHandler warn, std::unique_ptr<CacheIndex> index,
        std::optional<std::string> network, bool readOnly = false);
  void warnOnce(const llvm::Twine &message);

  CacheOptions options;
  WarningHandler warn;
  BlobStore blobStore;
  std::unique_ptr<CacheIndex> indexPtr;
  std::optional<std::string> network;
  std::mutex mutex;
  bool readOnly;
  bool warned = false;
  bool storesDisabled = false;
  bool lookupsDisabled = false;
  bool finished = false;
  bool stored = false;
  std::vector<HexDigest> used;
  CounterDeltas deltas;
};

/// The cache index's file in `directory`.
std::string indexPath(llvm::StringRef directory);

} // namespace kiln::cache
