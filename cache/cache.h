//===- cache/cache.h - The specialization cache -----------------*- C++ -*-===//
//
// [Note: the specialization cache]
//
//   <cache>/index.sqlite           key → the blobs of one entry (cache_index.h)
//   <cache>/objects/packed/blobs.sqlite  the small content-addressed blobs
//   <cache>/objects/ab/cdef...     the others (blob_store.h)
//
// The driver asks for a key (pipeline/build_cache.h); a hit hands back the
// entry's blobs, each read in full and checked against its digest. A
// missing or damaged blob makes the lookup a miss: it is counted, reported
// once, and the entry's row dropped so that the next store replaces it.
//
// Nothing here ever fails a build. A cache that cannot be opened (read-only
// folder, an index from a newer Kiln) is no cache, with one warning; a
// damaged index or one in an older format is moved aside and rebuilt from
// the metadata blobs; damaged packed blobs are moved aside, and their
// entries recompiled; a store that fails (full disk) is skipped, and the
// process stores nothing more, with one warning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/blob_store.h"
#include "cache/cache_index.h"
#include "cache/cache_location.h"
#include "cache/entry_metadata.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

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
  /// The limit the command line or the environment gives; without one, the
  /// limit stored in the index, else kDefaultMaxSize.
  std::optional<uint64_t> maxSize;
  /// Store `maxSize` in the index as the limit for later builds and
  /// commands (a build's --max-size).
  bool keepMaxSize = false;
};

/// What a build hands the cache to keep.
struct EntryContents {
  HexDigest key;
  std::string kind, target, name;
  /// See EntryMetadata::info.
  llvm::json::Value info = nullptr;
  /// (role, bytes), in order.
  std::vector<std::pair<std::string, std::string>> blobs;
  /// Bytes the caller hands back at lookup (a fat binary's images, which
  /// its key names): a blob that contains one keeps it by digest only, so
  /// that the bytes are stored once, with the entry they belong to.
  std::vector<std::string> implied = {};
  /// Blobs already kept in parts (an archive's entries), and the bytes of
  /// their stored parts by digest.
  std::vector<EntryBlob> parted = {};
  std::map<HexDigest, std::string> partBytes = {};
};

/// Lays `contents` out as blobs: fills `metadata.blobs` and returns the
/// blobs to store (which point into `contents`), each once.
std::vector<Blob> layOutBlobs(const EntryContents &contents, EntryMetadata &metadata);

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

  /// The entry of `key`, verified; nothing on a miss. `implied` is what
  /// the entry may hold by digest only (EntryContents::implied); an entry
  /// that needs bytes not among them is a miss. Thread-safe.
  std::optional<CachedEntry> lookup(llvm::StringRef key, llvm::ArrayRef<std::string> implied = {});

  /// Whether the index has an entry of `key`, read or not. Thread-safe.
  bool contains(llvm::StringRef key);

  /// Keeps an entry. Problems are warnings. Thread-safe.
  void store(const EntryContents &contents);
  /// Keeps many entries, publishing them in one transaction: a build keeps
  /// what it made at its end. Problems are warnings. Thread-safe.
  void storeAll(llvm::ArrayRef<EntryContents> entries);

  /// Adds to the counters `finish` records (the remote tier's, say).
  /// Thread-safe.
  void addCounters(const CounterDeltas &more);

  /// Records uses and counters, then applies the size limit: the least
  /// recently used entries of other builds go first, this process's own
  /// (those it used or stored) only when the limit is smaller than they
  /// are, with one warning. Call once, at the end; the destructor does
  /// otherwise.
  void finish();
  ~Cache();

  CacheIndex &index() { return *indexPtr; }
  const BlobStore &blobs() const { return blobStore; }
  const std::string &directory() const { return options.directory; }
  /// The size limit in force, and whether it is the one stored in the index.
  uint64_t maxSize() const { return limit; }
  bool maxSizeIsStored() const { return limitStored; }
  /// Whether the folder could not be written when the cache was opened.
  bool isReadOnly() const { return readOnly; }
  /// The file system's name when the cache is on a network file system.
  const std::optional<std::string> &networkFileSystem() const { return network; }

  /// Reads `key`'s entry through `metaDigest`: Ok, or the first missing or
  /// damaged blob (`bad`). A blob kept in parts is put together only when
  /// `implied` holds the parts it keeps by digest; else it is left out of
  /// `entry.blobs`, its stored parts checked all the same.
  BlobStatus readEntry(llvm::StringRef key, llvm::StringRef metaDigest, CachedEntry &entry,
                       HexDigest &bad, llvm::ArrayRef<std::string> implied = {}) const;

  /// Rebuilds index rows from every intact metadata blob whose blobs all
  /// exist. Returns how many entries it added.
  llvm::Expected<uint64_t> indexFromBlobs();

  /// Writes the blobs of `entries` (their metadata blobs among them), then
  /// publishes the entries in one transaction. `published`, when given,
  /// receives what was published.
  llvm::Error writeAndPublish(llvm::ArrayRef<EntryContents> entries,
                              std::vector<CacheIndex::NewEntry> *published = nullptr);

private:
  Cache(CacheOptions options, WarningHandler warn, std::unique_ptr<CacheIndex> index,
        std::optional<std::string> network, bool readOnly = false);
  /// Opens the packed blobs: for writing, or, in a read-only cache, to read
  /// (where there are some).
  llvm::Error openPackedBlobs(JournalMode mode);
  void warnOnce(const llvm::Twine &message);
  /// Sets `limit` from the options, else the index, else the default.
  void resolveLimit();

  CacheOptions options;
  WarningHandler warn;
  BlobStore blobStore;
  std::unique_ptr<CacheIndex> indexPtr;
  std::optional<std::string> network;
  std::mutex mutex;
  bool readOnly;
  std::atomic<bool> warned{false};
  bool storesDisabled = false;
  bool lookupsDisabled = false;
  bool finished = false;
  bool stored = false;
  /// The keys this process looked up with a hit, and those it stored.
  std::vector<HexDigest> used, storedKeys;
  CounterDeltas deltas;
  uint64_t limit = 0;
  bool limitStored = false;
};

/// The cache index's file in `directory`.
std::string indexPath(llvm::StringRef directory);

} // namespace kiln::cache
