//===- cache/sqlite_database.h - A thin SQLite wrapper ----------*- C++ -*-===//
//
// RAII handles for a SQLite connection and its prepared statements, with
// failures as llvm::Error. A SqliteError keeps SQLite's primary result
// code, so that callers can tell a busy database (SQLITE_BUSY), a full disk
// (SQLITE_FULL), a read-only one (SQLITE_READONLY) and a damaged one
// (SQLITE_CORRUPT, SQLITE_NOTADB) apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kiln::cache {

class SqliteError : public llvm::ErrorInfo<SqliteError> {
public:
  static char ID;
  SqliteError(int code, std::string message) : resultCode(code), text(std::move(message)) {}
  /// The primary result code (SQLITE_BUSY, SQLITE_CORRUPT, ...).
  int code() const { return resultCode & 0xff; }
  /// Whether the database file is damaged or is no database at all.
  bool isCorruption() const;
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  int resultCode;
  std::string text;
};

/// The SQLite primary result code `error` carries (0 for other errors),
/// leaving `error` as it was.
int sqliteCode(llvm::Error &error);

/// Whether `code` says the database file is damaged or no database at all.
bool isCorruptionCode(int code);

/// Runs `attempt` again while the database is busy beyond its timeout
/// (setting the journal mode does not wait on the busy handler).
llvm::Error retryWhileBusy(llvm::function_ref<llvm::Error()> attempt);

/// How a database of the cache keeps its journal: a write-ahead log on a
/// local disk; a rollback journal on a network file system, where
/// processes of other machines share no memory.
enum class JournalMode { Wal, Rollback };

class Statement {
public:
  Statement() = default;
  Statement(Statement &&other) noexcept : handle(other.handle), db(other.db) {
    other.handle = nullptr;
  }
  Statement &operator=(Statement &&other) noexcept;
  ~Statement();

  Statement &bind(int index, llvm::StringRef text);
  Statement &bind(int index, int64_t value);
  /// Binds `bytes` as a BLOB without copying them: they must outlive the
  /// statement's next run() or reset().
  Statement &bindBlob(int index, llvm::StringRef bytes);
  /// Runs to the next row: true for a row, false when done.
  llvm::Expected<bool> step();
  /// Steps through every row, handing each to `visit`.
  llvm::Error forEachRow(llvm::function_ref<void(const Statement &row)> visit);
  /// Runs a statement that returns no rows, then resets it.
  llvm::Error run();
  void reset();

  std::string text(int column) const;
  /// A BLOB column's bytes, valid until the next step() or reset().
  llvm::StringRef blob(int column) const;
  int64_t integer(int column) const;
  bool isNull(int column) const;

private:
  friend class Database;
  Statement(sqlite3_stmt *handle, sqlite3 *db) : handle(handle), db(db) {}
  sqlite3_stmt *handle = nullptr;
  sqlite3 *db = nullptr;
};

class Database {
public:
  /// Opens (creating if `create`) the database at `path`.
  static llvm::Expected<Database> open(llvm::StringRef path, bool create, bool readOnly = false);
  /// Opens the database at `path` read-only as a file no one changes
  /// (SQLite's immutable=1): no locks, no journal, for a read-only folder,
  /// where SQLite cannot make the files locking needs.
  static llvm::Expected<Database> openImmutable(llvm::StringRef path);

  Database() = default;
  Database(Database &&other) noexcept : db(other.db) { other.db = nullptr; }
  Database &operator=(Database &&other) noexcept;
  ~Database();

  llvm::Error execute(llvm::StringRef sql);
  llvm::Expected<Statement> prepare(llvm::StringRef sql);
  /// The first column of the first row of `sql`, if there is one.
  llvm::Expected<std::optional<int64_t>> queryInteger(llvm::StringRef sql);
  void setBusyTimeout(int milliseconds);
  /// Sets the journal's `mode` (waiting while the database is busy).
  llvm::Error setJournalMode(JournalMode mode);
  /// Commits as durably as `mode` needs: in WAL mode, synchronous=NORMAL,
  /// and closing leaves the log to the next writer's automatic checkpoint
  /// (a checkpoint on close costs two syncs to disk, the next writer one
  /// more); with a rollback journal, synchronous=FULL. Durable enough: a
  /// crash of the machine may lose the last commits, never corrupt.
  llvm::Error commitDurably(JournalMode mode);
  /// Commits without waiting for the disk, for a database being created:
  /// a crash of the machine may leave it damaged, which opening it again
  /// finds and repairs.
  llvm::Error commitWithoutSyncing();
  /// Closes now; the destructor would otherwise.
  void close();
  bool isOpen() const { return db != nullptr; }

  /// The current error as a SqliteError, prefixed with `what`.
  llvm::Error error(llvm::StringRef what) const;

private:
  explicit Database(sqlite3 *db) : db(db) {}
  static llvm::Expected<Database> finishOpening(sqlite3 *db, int status, llvm::StringRef path);
  sqlite3 *db = nullptr;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back unless committed.
class WriteTransaction {
public:
  static llvm::Expected<WriteTransaction> begin(Database &db);
  WriteTransaction(WriteTransaction &&other) noexcept : db(other.db) { other.db = nullptr; }
  WriteTransaction &operator=(WriteTransaction &&) = delete;
  ~WriteTransaction();
  llvm::Error commit();

private:
  explicit WriteTransaction(Database *db) : db(db) {}
  Database *db;
};

} // namespace kiln::cache
