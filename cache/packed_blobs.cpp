//===- cache/packed_blobs.cpp ---------------------------------------------===//

#include "cache/packed_blobs.h"

#include "cache/database_repair.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::cache {

namespace {

/// A rowid table: rows the size of blobs are what WITHOUT ROWID tables do
/// badly.
const char *const kSchema =
    "CREATE TABLE IF NOT EXISTS packed(digest TEXT PRIMARY KEY, bytes BLOB NOT NULL);"
    "PRAGMA user_version = 1;";

llvm::Error newerFormat(const std::string &path, int64_t format) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the packed blobs '" + path + "' have format " +
                                     std::to_string(format) + ", and this Kiln reads format " +
                                     std::to_string(kPackedFormat));
}

bool isCorruption(llvm::Error &error) {
  return isCorruptionCode(sqliteCode(error));
}

} // namespace

llvm::Expected<std::unique_ptr<PackedBlobs>>
PackedBlobs::open(std::string path, std::string cacheDirectory, JournalMode mode, Notice notice) {
  // A folder of its own, for the database and its log, shared memory and
  // copies moved aside. all_all: the umask decides, as for blob folders.
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (std::error_code error = llvm::sys::fs::create_directories(folder, /*IgnoreExisting=*/true,
                                                                llvm::sys::fs::all_all))
    return llvm::createStringError(error,
                                   "cannot create '" + folder.str() + "': " + error.message());
  std::unique_ptr<PackedBlobs> blobs(new PackedBlobs(std::move(path), std::move(cacheDirectory),
                                                     mode, std::move(notice), /*readOnly=*/false));
  std::lock_guard<std::mutex> lock(blobs->mutex);
  llvm::Error error = blobs->connect();
  if (error && blobs->damaged(error)) {
    llvm::consumeError(std::move(error));
    // damaged() connected to a new database, unless that failed too.
    if (!blobs->db.isOpen())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot make the packed blobs '" + blobs->file + "' anew");
    return blobs;
  }
  if (error)
    return error;
  return blobs;
}

llvm::Expected<std::unique_ptr<PackedBlobs>> PackedBlobs::openToRead(std::string path) {
  if (!llvm::sys::fs::exists(path))
    return nullptr;
  std::unique_ptr<PackedBlobs> blobs(
      new PackedBlobs(path, "", JournalMode::Wal, nullptr, /*readOnly=*/true));
  // SQLite's read-only mode sees the write-ahead log where it can map its
  // index; else the file alone, as one no one changes.
  llvm::Expected<Database> shared = Database::open(path, /*create=*/false, /*readOnly=*/true);
  if (shared) {
    blobs->db = std::move(*shared);
    llvm::Expected<std::optional<int64_t>> format = blobs->db.queryInteger("PRAGMA user_version");
    if (format && format->value_or(0) <= kPackedFormat)
      return blobs;
    if (format)
      return newerFormat(path, **format);
    llvm::consumeError(format.takeError());
  } else {
    llvm::consumeError(shared.takeError());
  }
  llvm::Expected<Database> immutable = Database::openImmutable(path);
  if (!immutable)
    return immutable.takeError();
  blobs->db = std::move(*immutable);
  llvm::Expected<std::optional<int64_t>> format = blobs->db.queryInteger("PRAGMA user_version");
  if (!format)
    return format.takeError();
  if (format->value_or(0) > kPackedFormat)
    return newerFormat(path, **format);
  return blobs;
}

llvm::Error PackedBlobs::connect() {
  // Made here rather than by SQLite, whose files get mode 0644: with 0666
  // the umask decides, as for blob files, and SQLite gives its log and
  // shared memory files the database's mode.
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   "cannot create the packed blobs '" + file + "'");
  struct stat info;
  if (::fstat(fd, &info) == 0) {
    device = info.st_dev;
    inode = info.st_ino;
  }
  ::close(fd);
  llvm::Expected<Database> opened = Database::open(file, /*create=*/true);
  if (!opened)
    return opened.takeError();
  db = std::move(*opened);
  db.setBusyTimeout(20000);
  std::optional<int64_t> format;
  if (llvm::Error error = retryWhileBusy([&]() -> llvm::Error {
        llvm::Expected<std::optional<int64_t>> version = db.queryInteger("PRAGMA user_version");
        if (!version)
          return version.takeError();
        format = *version;
        return llvm::Error::success();
      }))
    return error;
  if (format.value_or(0) > kPackedFormat)
    return newerFormat(file, *format);
  bool fresh = format.value_or(0) == 0;
  // As for the index: incremental vacuum before the first table, and no
  // syncing while the file is made.
  if (fresh) {
    if (llvm::Error error = db.commitWithoutSyncing())
      return error;
    if (llvm::Error error = db.execute("PRAGMA auto_vacuum=INCREMENTAL"))
      return error;
  }
  if (llvm::Error error = db.setJournalMode(mode))
    return error;
  if (fresh) {
    llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
    if (!transaction)
      return transaction.takeError();
    if (llvm::Error error = db.execute(kSchema))
      return error;
    if (llvm::Error error = transaction->commit())
      return error;
  }
  return db.commitDurably(mode);
}

void PackedBlobs::closeLocked() {
  selectBytes.reset();
  selectSize.reset();
  selectHead.reset();
  db.close();
}

llvm::Error PackedBlobs::replaceLocked(llvm::StringRef reason) {
  if (readOnly)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the packed blobs '" + file + "' are read-only");
  replaced = true;
  closeLocked();
  RepairLock lock(cacheDirectory);
  struct stat info;
  std::string note;
  if (::stat(file.c_str(), &info) == 0 && info.st_dev == device && info.st_ino == inode) {
    llvm::Expected<std::string> aside = moveDatabaseAside(file);
    if (!aside)
      return aside.takeError();
    note = "the cache's packed blobs '" + file + "' are damaged (" + reason.str() +
           "); moved them to '" + *aside + "'";
  }
  // Else another process has moved them aside already, and made new ones.
  if (llvm::Error error = connect()) {
    closeLocked();
    return error;
  }
  if (!note.empty() && notice)
    notice(note);
  return llvm::Error::success();
}

bool PackedBlobs::damaged(llvm::Error &error) {
  if (!isCorruption(error))
    return false;
  if (!replaced && !readOnly) {
    std::string reason;
    error = llvm::handleErrors(std::move(error), [&](std::unique_ptr<SqliteError> payload) {
      reason = payload->message();
      return llvm::Error(std::move(payload));
    });
    llvm::consumeError(replaceLocked(reason));
  }
  return true;
}

llvm::Error PackedBlobs::replace(llvm::StringRef reason) {
  std::lock_guard<std::mutex> lock(mutex);
  return replaceLocked(reason);
}

llvm::Expected<Statement *> PackedBlobs::prepared(std::optional<Statement> &slot,
                                                  llvm::StringRef sql) {
  if (!db.isOpen())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the packed blobs '" + file + "' could not be opened");
  if (!slot) {
    llvm::Expected<Statement> statement = db.prepare(sql);
    if (!statement)
      return statement.takeError();
    slot = std::move(*statement);
  }
  return &*slot;
}

BlobStatus PackedBlobs::read(llvm::StringRef digest, std::string &bytes,
                             std::optional<uint64_t> size) {
  std::string found;
  {
    std::lock_guard<std::mutex> lock(mutex);
    llvm::Expected<Statement *> select =
        prepared(selectBytes, "SELECT bytes FROM packed WHERE digest = ?1");
    if (!select) {
      llvm::Error error = select.takeError();
      bool broken = damaged(error);
      llvm::consumeError(std::move(error));
      return broken ? BlobStatus::Damaged : BlobStatus::Missing;
    }
    Statement &statement = **select;
    statement.bind(1, digest);
    llvm::Expected<bool> row = statement.step();
    if (!row) {
      llvm::Error error = row.takeError();
      bool broken = damaged(error);
      llvm::consumeError(std::move(error));
      return broken ? BlobStatus::Damaged : BlobStatus::Missing;
    }
    if (!*row) {
      statement.reset();
      return BlobStatus::Missing;
    }
    found = statement.blob(0).str();
    statement.reset();
  }
  // The digest outside the lock: other threads' reads need not wait for it.
  if ((size && found.size() != *size) || digestOf(found) != digest)
    return BlobStatus::Damaged;
  bytes = std::move(found);
  return BlobStatus::Ok;
}

std::optional<uint64_t> PackedBlobs::sizeOf(llvm::StringRef digest) {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::Expected<Statement *> select =
      prepared(selectSize, "SELECT length(bytes) FROM packed WHERE digest = ?1");
  if (!select) {
    llvm::consumeError(select.takeError());
    return std::nullopt;
  }
  Statement &statement = **select;
  statement.bind(1, digest);
  llvm::Expected<bool> row = statement.step();
  std::optional<uint64_t> size;
  if (row && *row)
    size = static_cast<uint64_t>(statement.integer(0));
  if (!row)
    llvm::consumeError(row.takeError());
  statement.reset();
  return size;
}

bool PackedBlobs::contains(llvm::StringRef digest) {
  return sizeOf(digest).has_value();
}

bool PackedBlobs::startsWith(llvm::StringRef digest, llvm::StringRef prefix) {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::Expected<Statement *> select =
      prepared(selectHead, "SELECT substr(bytes, 1, ?2) FROM packed WHERE digest = ?1");
  if (!select) {
    llvm::consumeError(select.takeError());
    return false;
  }
  Statement &statement = **select;
  statement.bind(1, digest).bind(2, static_cast<int64_t>(prefix.size()));
  llvm::Expected<bool> row = statement.step();
  bool starts = row && *row && statement.blob(0) == prefix;
  if (!row)
    llvm::consumeError(row.takeError());
  statement.reset();
  return starts;
}

llvm::Error PackedBlobs::putAll(llvm::ArrayRef<Blob> blobs) {
  if (blobs.empty())
    return llvm::Error::success();
  std::lock_guard<std::mutex> lock(mutex);
  auto attempt = [&]() -> llvm::Error {
    if (!db.isOpen())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the packed blobs '" + file + "' could not be opened");
    llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
    if (!transaction)
      return transaction.takeError();
    llvm::Expected<Statement> existing = db.prepare("SELECT bytes FROM packed WHERE digest = ?1");
    if (!existing)
      return existing.takeError();
    llvm::Expected<Statement> insert =
        db.prepare("INSERT OR REPLACE INTO packed(digest, bytes) VALUES (?1, ?2)");
    if (!insert)
      return insert.takeError();
    for (const Blob &blob : blobs) {
      existing->bind(1, blob.digest);
      llvm::Expected<bool> row = existing->step();
      if (!row)
        return row.takeError();
      // A copy that no longer matches its digest is written anew.
      bool intact = *row && existing->blob(0) == blob.bytes;
      existing->reset();
      if (intact)
        continue;
      if (llvm::Error error = insert->bind(1, blob.digest).bindBlob(2, blob.bytes).run())
        return error;
    }
    return transaction->commit();
  };
  llvm::Error error = attempt();
  // A damaged database was replaced by a new one: write there.
  if (error && damaged(error) && db.isOpen()) {
    llvm::consumeError(std::move(error));
    return attempt();
  }
  return error;
}

llvm::Error PackedBlobs::remove(llvm::ArrayRef<std::string> digests) {
  if (digests.empty())
    return llvm::Error::success();
  std::lock_guard<std::mutex> lock(mutex);
  if (!db.isOpen())
    return llvm::Error::success();
  auto erase = [&]() -> llvm::Error {
    llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
    if (!transaction)
      return transaction.takeError();
    llvm::Expected<Statement> statement = db.prepare("DELETE FROM packed WHERE digest = ?1");
    if (!statement)
      return statement.takeError();
    for (const std::string &digest : digests)
      if (llvm::Error error = statement->bind(1, digest).run())
        return error;
    return transaction->commit();
  };
  if (llvm::Error error = erase()) {
    // What a replaced database held is gone with it.
    if (damaged(error) && db.isOpen()) {
      llvm::consumeError(std::move(error));
      return llvm::Error::success();
    }
    return error;
  }
  return db.execute("PRAGMA incremental_vacuum");
}

llvm::Error PackedBlobs::removeAll() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!db.isOpen())
    return llvm::Error::success();
  if (llvm::Error error = db.execute("DELETE FROM packed")) {
    if (damaged(error) && db.isOpen()) {
      llvm::consumeError(std::move(error));
      return llvm::Error::success();
    }
    return error;
  }
  if (llvm::Error error = db.execute("PRAGMA incremental_vacuum"))
    return error;
  // The freed pages leave the file once the log is written back into it; a
  // reader on an older snapshot keeps the log, and a later checkpoint
  // finishes the job.
  if (mode == JournalMode::Wal)
    llvm::consumeError(db.execute("PRAGMA wal_checkpoint(TRUNCATE)"));
  return llvm::Error::success();
}

llvm::Error PackedBlobs::forEach(llvm::function_ref<void(llvm::StringRef digest)> visit) {
  std::vector<std::string> digests;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!db.isOpen())
      return llvm::Error::success();
    llvm::Expected<Statement> select = db.prepare("SELECT digest FROM packed");
    if (!select)
      return select.takeError();
    if (llvm::Error error =
            select->forEachRow([&](const Statement &row) { digests.push_back(row.text(0)); }))
      return error;
  }
  for (const std::string &digest : digests)
    visit(digest);
  return llvm::Error::success();
}

llvm::Expected<std::string> PackedBlobs::integrityCheck() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!db.isOpen())
    return std::string("ok");
  llvm::Expected<Statement> check = db.prepare("PRAGMA integrity_check");
  if (!check) {
    llvm::Error error = check.takeError();
    if (isCorruption(error))
      return "not a database: " + llvm::toString(std::move(error));
    return std::move(error);
  }
  std::string result;
  if (llvm::Error error = check->forEachRow(
          [&](const Statement &row) { result += (result.empty() ? "" : "\n") + row.text(0); })) {
    if (isCorruption(error))
      return llvm::toString(std::move(error));
    return std::move(error);
  }
  return result;
}

} // namespace kiln::cache
