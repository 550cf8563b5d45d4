//===- cache/sqlite_database.cpp ------------------------------------------===//

#include "cache/sqlite_database.h"

#include <llvm/Support/FormatVariadic.h>

#include <chrono>
#include <sqlite3.h>
#include <thread>

namespace kiln::cache {

char SqliteError::ID = 0;

bool SqliteError::isCorruption() const {
  return isCorruptionCode(code());
}

bool isCorruptionCode(int code) {
  return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

int sqliteCode(llvm::Error &error) {
  int code = 0;
  error = llvm::handleErrors(std::move(error),
                             [&](std::unique_ptr<SqliteError> payload) -> llvm::Error {
                               code = payload->code();
                               return llvm::Error(std::move(payload));
                             });
  return code;
}

llvm::Error retryWhileBusy(llvm::function_ref<llvm::Error()> attempt) {
  for (int tries = 0;; ++tries) {
    llvm::Error error = attempt();
    if (!error || tries == 50)
      return error;
    int code = sqliteCode(error);
    if (code != SQLITE_BUSY && code != SQLITE_LOCKED)
      return error;
    llvm::consumeError(std::move(error));
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + tries * 10));
  }
}

Statement &Statement::operator=(Statement &&other) noexcept {
  if (this != &other) {
    if (handle)
      sqlite3_finalize(handle);
    handle = other.handle;
    db = other.db;
    other.handle = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  if (handle)
    sqlite3_finalize(handle);
}

Statement &Statement::bind(int index, llvm::StringRef text) {
  sqlite3_bind_text(handle, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement &Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(handle, index, value);
  return *this;
}

Statement &Statement::bindBlob(int index, llvm::StringRef bytes) {
  // A zero-length BLOB, not NULL, for no bytes.
  static const char nothing = 0;
  sqlite3_bind_blob64(handle, index, bytes.empty() ? &nothing : bytes.data(), bytes.size(),
                      SQLITE_STATIC);
  return *this;
}

llvm::Expected<bool> Statement::step() {
  int status = sqlite3_step(handle);
  if (status == SQLITE_ROW)
    return true;
  if (status == SQLITE_DONE)
    return false;
  int code = sqlite3_extended_errcode(db);
  std::string message = sqlite3_errmsg(db);
  sqlite3_reset(handle);
  return llvm::make_error<SqliteError>(code, "cache index: " + message);
}

llvm::Error Statement::forEachRow(llvm::function_ref<void(const Statement &row)> visit) {
  while (true) {
    llvm::Expected<bool> row = step();
    if (!row)
      return row.takeError();
    if (!*row)
      return llvm::Error::success();
    visit(*this);
  }
}

llvm::Error Statement::run() {
  llvm::Expected<bool> row = step();
  if (!row)
    return row.takeError();
  reset();
  return llvm::Error::success();
}

void Statement::reset() {
  sqlite3_reset(handle);
  sqlite3_clear_bindings(handle);
}

std::string Statement::text(int column) const {
  const unsigned char *value = sqlite3_column_text(handle, column);
  int size = sqlite3_column_bytes(handle, column);
  return value ? std::string(reinterpret_cast<const char *>(value), size) : std::string();
}

llvm::StringRef Statement::blob(int column) const {
  const void *bytes = sqlite3_column_blob(handle, column);
  int size = sqlite3_column_bytes(handle, column);
  return bytes ? llvm::StringRef(static_cast<const char *>(bytes), size) : llvm::StringRef();
}

int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(handle, column);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(handle, column) == SQLITE_NULL;
}

llvm::Expected<Database> Database::open(llvm::StringRef path, bool create, bool readOnly) {
  sqlite3 *db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !readOnly)
    flags |= SQLITE_OPEN_CREATE;
  int status = sqlite3_open_v2(path.str().c_str(), &db, flags, nullptr);
  return finishOpening(db, status, path);
}

llvm::Expected<Database> Database::openImmutable(llvm::StringRef path) {
  // A URI, so that '?' or '#' in the path are not taken for its parts.
  std::string uri = "file:";
  for (char c : path) {
    if (c == '?' || c == '#' || c == '%')
      uri += llvm::formatv("%{0:X-2}", unsigned(static_cast<unsigned char>(c))).str();
    else
      uri += c;
  }
  uri += "?immutable=1";
  sqlite3 *db = nullptr;
  int status = sqlite3_open_v2(
      uri.c_str(), &db, SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  return finishOpening(db, status, path);
}

llvm::Expected<Database> Database::finishOpening(sqlite3 *db, int status, llvm::StringRef path) {
  if (status != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(status);
    int code = db ? sqlite3_extended_errcode(db) : status;
    sqlite3_close(db);
    return llvm::make_error<SqliteError>(code, "cannot open the cache index '" + path.str() +
                                                   "': " + message);
  }
  sqlite3_extended_result_codes(db, 1);
  return Database(db);
}

Database &Database::operator=(Database &&other) noexcept {
  if (this != &other) {
    close();
    db = other.db;
    other.db = nullptr;
  }
  return *this;
}

Database::~Database() {
  close();
}

void Database::close() {
  if (db)
    sqlite3_close_v2(db);
  db = nullptr;
}

llvm::Error Database::error(llvm::StringRef what) const {
  return llvm::make_error<SqliteError>(sqlite3_extended_errcode(db),
                                       "cache index: " + what.str() + ": " + sqlite3_errmsg(db));
}

llvm::Error Database::execute(llvm::StringRef sql) {
  if (sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    return error(sql.take_until([](char c) { return c == '(' || c == ';'; }).trim());
  return llvm::Error::success();
}

llvm::Expected<Statement> Database::prepare(llvm::StringRef sql) {
  sqlite3_stmt *statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) !=
      SQLITE_OK)
    return error("preparing '" + sql.str() + "'");
  return Statement(statement, db);
}

llvm::Expected<std::optional<int64_t>> Database::queryInteger(llvm::StringRef sql) {
  llvm::Expected<Statement> statement = prepare(sql);
  if (!statement)
    return statement.takeError();
  llvm::Expected<bool> row = statement->step();
  if (!row)
    return row.takeError();
  if (!*row || statement->isNull(0))
    return std::nullopt;
  return statement->integer(0);
}

void Database::setBusyTimeout(int milliseconds) {
  sqlite3_busy_timeout(db, milliseconds);
}

llvm::Error Database::setJournalMode(JournalMode mode) {
  return retryWhileBusy([&] {
    return execute(mode == JournalMode::Wal ? "PRAGMA journal_mode=WAL"
                                            : "PRAGMA journal_mode=DELETE");
  });
}

llvm::Error Database::commitDurably(JournalMode mode) {
  if (mode == JournalMode::Rollback)
    return execute("PRAGMA synchronous=FULL");
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  return execute("PRAGMA synchronous=NORMAL");
}

llvm::Error Database::commitWithoutSyncing() {
  return execute("PRAGMA synchronous=OFF");
}

llvm::Expected<WriteTransaction> WriteTransaction::begin(Database &db) {
  if (llvm::Error error = db.execute("BEGIN IMMEDIATE"))
    return error;
  return WriteTransaction(&db);
}

WriteTransaction::~WriteTransaction() {
  if (db)
    llvm::consumeError(db->execute("ROLLBACK"));
}

llvm::Error WriteTransaction::commit() {
  Database *database = db;
  if (llvm::Error error = database->execute("COMMIT"))
    return error; // the destructor rolls back
  db = nullptr;
  return llvm::Error::success();
}

} // namespace kiln::cache
