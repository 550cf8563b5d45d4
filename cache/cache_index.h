//===- cache/cache_index.h - The SQLite index of the cache ------*- C++ -*-===//
//
// index.sqlite maps each key to the blobs of one entry:
//
//   entries(key, meta, kind, target, name, size, created, last_used)
//   entry_blobs(key, digest)        every blob of an entry, metadata included
//   blobs(digest, size)             every blob some entry uses
//   garbage(digest)                 blobs no entry uses, to be deleted
//   counters(name, value)           hits, misses, corrupt, evictions, stores
//   settings(name, value)           the size limit `kiln cache limit` or a
//                                   build's --max-size set ("max_size")
//
// The index is made with auto_vacuum=INCREMENTAL, so that prune and clear
// can hand the pages of dropped rows back to the file system (an index
// from before is converted by one VACUUM the first time they run).
//
// PRAGMA user_version holds the format (kIndexFormat). Writes run in BEGIN
// IMMEDIATE transactions, with a busy timeout; an entry and all its blob
// references are published in one, so a reader never sees half an entry.
//
// Blobs (files, or rows of the packed blobs) are deleted in two steps: a
// transaction that drops entries moves the blobs nobody uses any more to
// `garbage`; a later one deletes the garbage blobs still unused, holding the
// write lock, while a writer that publishes a blob takes it out of
// `garbage` and checks that the blob exists under the same lock. So a
// published row always has its blob, and a crash between the steps leaves
// only garbage rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/blob_store.h"
#include "cache/entry_metadata.h"
#include "cache/sqlite_database.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cache {

inline constexpr int64_t kIndexFormat = 1;

/// The index was written in another format.
class IndexFormatError : public llvm::ErrorInfo<IndexFormatError> {
public:
  static char ID;
  IndexFormatError(std::string path, int64_t format) : path(std::move(path)), format(format) {}
  int64_t found() const { return format; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string path;
  int64_t format;
};

struct EntryRow {
  HexDigest key;
  HexDigest meta;
  std::string kind, target, name;
  uint64_t size = 0;
  int64_t created = 0, lastUsed = 0;
};

struct CounterDeltas {
  std::map<std::string, int64_t> values;
  bool empty() const { return values.empty(); }
};

struct IndexStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  std::map<std::string, int64_t> counters;
  /// (target, kind) → (entries, bytes).
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> byTarget;
};

class CacheIndex {
public:
  /// Opens or creates the index at `path` and checks it (PRAGMA
  /// quick_check). `created` says whether this call made the schema.
  static llvm::Expected<CacheIndex> open(llvm::StringRef path, JournalMode mode, bool &created);
  /// Opens the index at `path` of a folder this process cannot write, to
  /// read: through SQLite's read-only mode, which sees the write-ahead log
  /// where SQLite can map its index, else as an immutable file.
  static llvm::Expected<CacheIndex> openReadOnly(llvm::StringRef path);

  /// The metadata digest of `key`'s entry.
  llvm::Expected<std::optional<HexDigest>> find(llvm::StringRef key);

  /// Publishes an entry; `ensureBlobs` runs under the write lock and must
  /// make sure that every blob exists.
  llvm::Error publish(const EntryMetadata &metadata, llvm::StringRef metaDigest, uint64_t metaSize,
                      llvm::function_ref<llvm::Error()> ensureBlobs);

  /// Publishes many entries in one transaction (import, index rebuild).
  struct NewEntry {
    EntryMetadata metadata;
    HexDigest metaDigest;
    uint64_t metaSize;
  };
  llvm::Error publishAll(llvm::ArrayRef<NewEntry> entries,
                         llvm::function_ref<llvm::Error()> ensureBlobs);

  /// Drops `key`'s entry if its metadata is still `metaDigest`, and deletes
  /// `damaged` blobs at once. Returns whether a row was dropped.
  llvm::Expected<bool> dropEntry(llvm::StringRef key, llvm::StringRef metaDigest,
                                 llvm::ArrayRef<HexDigest> damaged, const BlobStore &store);

  /// Records uses and adds to the counters, in one transaction.
  llvm::Error recordUse(llvm::ArrayRef<HexDigest> usedKeys, int64_t now,
                        const CounterDeltas &deltas);

  struct Eviction {
    uint64_t dropped = 0;
    /// Whether the limit forced dropping entries of `keep`, and what those
    /// entries took together before.
    bool droppedKept = false;
    uint64_t keptEntries = 0, keptBytes = 0;
  };
  /// Drops entries last used before `usedBefore` (if given), then the least
  /// recently used until the blobs take at most `maxBytes`, those in `keep`
  /// (a build's own) only once no other is left; then deletes unused
  /// blobs.
  llvm::Expected<Eviction> evict(std::optional<uint64_t> maxBytes,
                                 std::optional<int64_t> usedBefore, const BlobStore &store,
                                 llvm::ArrayRef<HexDigest> keep = {});

  /// Hands the pages dropped rows left free back to the file system (and
  /// empties the write-ahead log), converting an index made without
  /// incremental vacuum first. Readers and writers of other processes wait
  /// or are waited for, as for any write.
  llvm::Error releaseFreePages();

  /// The size limit stored in the index, if one is.
  llvm::Expected<std::optional<uint64_t>> storedMaxSize();
  llvm::Error storeMaxSize(uint64_t bytes);

  /// Deletes the garbage blobs that are still unused.
  llvm::Error collectGarbage(const BlobStore &store);

  /// Drops every entry (and deletes every blob).
  llvm::Error clear(const BlobStore &store);

  llvm::Expected<uint64_t> totalBytes();
  llvm::Expected<IndexStats> stats();
  llvm::Expected<std::vector<EntryRow>> entries();
  /// Every digest in `blobs`, with its size.
  llvm::Expected<std::map<HexDigest, uint64_t>> blobSizes();
  /// Every (key, digest) in `entry_blobs`.
  llvm::Expected<std::vector<std::pair<HexDigest, HexDigest>>> entryBlobs();
  llvm::Expected<std::string> integrityCheck();

  Database &database() { return db; }

private:
  explicit CacheIndex(Database db) : db(std::move(db)) {}
  llvm::Error insert(const EntryMetadata &metadata, llvm::StringRef metaDigest, uint64_t metaSize,
                     int64_t lastUsed);
  /// Removes `key`'s rows; unused blobs go to `garbage`.
  llvm::Expected<uint64_t> detach(llvm::StringRef key);
  llvm::Error addCounters(const CounterDeltas &deltas);
  /// What the blobs of `keys`' entries take, each blob once.
  llvm::Expected<uint64_t> bytesOf(llvm::ArrayRef<std::pair<HexDigest, int64_t>> keys);

  Database db;
};

/// Seconds since the epoch.
int64_t unixNow();

} // namespace kiln::cache
