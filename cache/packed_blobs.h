//===- cache/packed_blobs.h - Small blobs, packed in one file ---*- C++ -*-===//
//
// The blobs of at most kPackedBlobLimit bytes (every entry's metadata, host
// objects, PTX, most cubins) are rows of one SQLite database,
//
//   <cache>/objects/packed/blobs.sqlite    packed(digest, bytes)
//
// rather than a file each. A file costs a create and a rename, and a new
// cache a folder per digest prefix besides: in a build served by a remote,
// which keeps every entry it gets, those took a third of the build. Larger
// blobs stay files (blob_store.h), which SQLite reads and writes slower
// than the file system does.
//
// It is a database of its own, not the index's, so that the index's rules
// for blobs hold as they did for files (a blob is written before the rows
// that name it, made sure of under the index's write lock, deleted as
// garbage under it), and a lost index is still rebuilt from the blobs.
//
// Durability is the index's: a write-ahead log with synchronous=NORMAL (a
// rollback journal with FULL on a network file system), so no commit waits
// for the disk. A batch of blobs is one transaction: a killed process loses
// at most the batch it had not committed, never a blob half written; a
// crash of the machine at most the last commits, whose entries are then
// misses (as a lost file was).
//
// Damage: bytes that do not match their digest are a damaged blob, as a
// file would be. A database SQLite finds damaged (not a database, a damaged
// page) is moved aside to blobs.sqlite.damaged-<time>-<pid> under the
// cache's repair lock (database_repair.h), once per process, and a new one
// made: its blobs are missing from then on, so their entries are misses,
// dropped and recompiled.
//
// Every method is thread-safe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/blob.h"
#include "cache/sqlite_database.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kiln::cache {

/// The largest blob kept packed. Measured on ext4: SQLite writes blobs of
/// 4 to 64 KiB in a tenth to a half of the time a file takes, and from
/// about 96 KiB on it is slower (its overflow pages).
inline constexpr uint64_t kPackedBlobLimit = 64 * 1024;

/// The format of the packed blobs' database (PRAGMA user_version).
inline constexpr int64_t kPackedFormat = 1;

class PackedBlobs {
public:
  /// Says that a damaged database was moved aside, and why.
  using Notice = std::function<void(const std::string &)>;

  /// Opens the database at `path`, creating it (its file mode follows the
  /// umask, as blob files do). `cacheDirectory` holds the repair lock. A
  /// damaged database is replaced, with a `notice`; an error means one from
  /// a newer Kiln, or a file that cannot be made.
  static llvm::Expected<std::unique_ptr<PackedBlobs>>
  open(std::string path, std::string cacheDirectory, JournalMode mode, Notice notice);
  /// Opens the database at `path` to read, in a cache folder this process
  /// cannot write; nothing when there is none.
  static llvm::Expected<std::unique_ptr<PackedBlobs>> openToRead(std::string path);

  /// Reads the blob `digest` and checks its bytes (and `size`, if given).
  BlobStatus read(llvm::StringRef digest, std::string &bytes,
                  std::optional<uint64_t> size = std::nullopt);
  bool contains(llvm::StringRef digest);
  /// The blob's size, if it is here.
  std::optional<uint64_t> sizeOf(llvm::StringRef digest);
  /// Whether the blob is here and starts with `prefix`.
  bool startsWith(llvm::StringRef digest, llvm::StringRef prefix);

  /// Keeps `blobs` (each at most kPackedBlobLimit bytes), in one
  /// transaction; one already here intact is left as it is.
  llvm::Error putAll(llvm::ArrayRef<Blob> blobs);
  /// Deletes the blobs `digests` (those here), in one transaction, and
  /// hands the file the pages they took.
  llvm::Error remove(llvm::ArrayRef<std::string> digests);
  /// Deletes every blob, and shrinks the file.
  llvm::Error removeAll();
  /// Calls `visit` with every blob's digest.
  llvm::Error forEach(llvm::function_ref<void(llvm::StringRef digest)> visit);

  /// SQLite's integrity check: "ok", or what is wrong.
  llvm::Expected<std::string> integrityCheck();
  /// Moves the database aside and starts a new one (kiln cache verify
  /// --repair, when integrityCheck finds it damaged).
  llvm::Error replace(llvm::StringRef reason);

  const std::string &path() const { return file; }

private:
  PackedBlobs(std::string file, std::string cacheDirectory, JournalMode mode, Notice notice,
              bool readOnly)
      : file(std::move(file)), cacheDirectory(std::move(cacheDirectory)), mode(mode),
        notice(std::move(notice)), readOnly(readOnly) {}

  /// Opens or creates `file` as `db`.
  llvm::Error connect();
  /// A prepared statement, kept in `slot` for the next call.
  llvm::Expected<Statement *> prepared(std::optional<Statement> &slot, llvm::StringRef sql);
  /// Moves a damaged database aside and connects to a new one; `mutex`
  /// held.
  llvm::Error replaceLocked(llvm::StringRef reason);
  /// Whether `error` says the database is damaged; if so, and it was not
  /// replaced before, replaces it (`mutex` held). `error` stays as it was.
  bool damaged(llvm::Error &error);
  void closeLocked();

  std::string file, cacheDirectory;
  JournalMode mode;
  Notice notice;
  bool readOnly;
  bool replaced = false;
  /// The file `db` is, so that a replacement moves aside only that one,
  /// never one another process made meanwhile.
  dev_t device = 0;
  ino_t inode = 0;
  std::mutex mutex;
  Database db;
  std::optional<Statement> selectBytes, selectSize, selectHead;
};

} // namespace kiln::cache
