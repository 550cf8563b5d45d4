//===- cache/cache_index.cpp ----------------------------------------------===//

#include "cache/cache_index.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>

#include <chrono>
#include <set>

namespace kiln::cache {

char IndexFormatError::ID = 0;

void IndexFormatError::log(llvm::raw_ostream &os) const {
  os << "the cache index '" << path << "' has format " << format << ", and this Kiln reads format "
     << kIndexFormat;
}

int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

const char *const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS entries(
  key TEXT PRIMARY KEY, meta TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  name TEXT NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL,
  last_used INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_last_use ON entries(last_used);
CREATE TABLE IF NOT EXISTS entry_blobs(
  key TEXT NOT NULL, digest TEXT NOT NULL, PRIMARY KEY(key, digest)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_blobs_by_digest ON entry_blobs(digest);
CREATE TABLE IF NOT EXISTS blobs(digest TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS garbage(digest TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

/// Indexes made before the size limit was kept in them have no settings
/// table; it is made when first needed, so that their format stays 1.
const char *const kSettingsTable =
    "CREATE TABLE IF NOT EXISTS settings(name TEXT PRIMARY KEY, value INTEGER NOT NULL) "
    "WITHOUT ROWID";

} // namespace

llvm::Expected<CacheIndex> CacheIndex::openReadOnly(llvm::StringRef path) {
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError(std::make_error_code(std::errc::read_only_file_system),
                                   "the cache index '" + path.str() +
                                       "' does not exist, and its folder is read-only");
  auto checked = [&](Database db) -> llvm::Expected<CacheIndex> {
    llvm::Expected<std::optional<int64_t>> format = db.queryInteger("PRAGMA user_version");
    if (!format)
      return format.takeError();
    if (format->value_or(0) != kIndexFormat)
      return llvm::make_error<IndexFormatError>(path.str(), format->value_or(0));
    return CacheIndex(std::move(db));
  };
  llvm::Expected<Database> shared = Database::open(path, /*create=*/false, /*readOnly=*/true);
  if (shared) {
    llvm::Expected<CacheIndex> index = checked(std::move(*shared));
    if (index)
      return index;
    llvm::consumeError(index.takeError());
  } else {
    llvm::consumeError(shared.takeError());
  }
  llvm::Expected<Database> immutable = Database::openImmutable(path);
  if (!immutable)
    return immutable.takeError();
  return checked(std::move(*immutable));
}

llvm::Expected<CacheIndex> CacheIndex::open(llvm::StringRef path, JournalMode mode, bool &created) {
  created = false;
  llvm::Expected<Database> opened = Database::open(path, /*create=*/true);
  if (!opened)
    return opened.takeError();
  CacheIndex index(std::move(*opened));
  Database &db = index.db;
  db.setBusyTimeout(20000);
  // The format first: a damaged file fails here (SQLITE_NOTADB).
  std::optional<int64_t> format;
  if (llvm::Error error = retryWhileBusy([&]() -> llvm::Error {
        llvm::Expected<std::optional<int64_t>> version = db.queryInteger("PRAGMA user_version");
        if (!version)
          return version.takeError();
        format = *version;
        return llvm::Error::success();
      }))
    return error;
  if (format && *format > kIndexFormat)
    return llvm::make_error<IndexFormatError>(path.str(), *format);
  // Only a file without tables takes it, and only before the journal mode
  // is set: incremental vacuum, so that prune and clear can shrink it. A new
  // index is made without syncing (a build in a new cache folder would wait
  // for eight syncs): one a crash damaged is repaired when next opened.
  if (format.value_or(0) == 0) {
    if (llvm::Error error = db.commitWithoutSyncing())
      return error;
    if (llvm::Error error = db.execute("PRAGMA auto_vacuum=INCREMENTAL"))
      return error;
  }
  if (llvm::Error error = db.setJournalMode(mode))
    return error;
  if (format.value_or(0) == 0) {
    llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
    if (!transaction)
      return transaction.takeError();
    llvm::Expected<std::optional<int64_t>> again = db.queryInteger("PRAGMA user_version");
    if (!again)
      return again.takeError();
    if (again->value_or(0) == 0) {
      llvm::Expected<std::optional<int64_t>> tables =
          db.queryInteger("SELECT COUNT(*) FROM sqlite_master");
      if (!tables)
        return tables.takeError();
      if (tables->value_or(0) != 0)
        return llvm::make_error<IndexFormatError>(path.str(), 0);
      if (llvm::Error error = db.execute(kSchema))
        return error;
      created = true;
    } else if (**again != kIndexFormat) {
      return llvm::make_error<IndexFormatError>(path.str(), **again);
    }
    if (llvm::Error error = transaction->commit())
      return error;
  } else if (*format != kIndexFormat) {
    return llvm::make_error<IndexFormatError>(path.str(), *format);
  }
  if (llvm::Error error = db.commitDurably(mode))
    return error;
  if (!created) {
    llvm::Expected<Statement> check = db.prepare("PRAGMA quick_check");
    if (!check)
      return check.takeError();
    llvm::Expected<bool> row = check->step();
    if (!row)
      return row.takeError();
    if (*row && check->text(0) != "ok")
      return llvm::make_error<SqliteError>(11 /*SQLITE_CORRUPT*/,
                                           "the cache index is damaged: " + check->text(0));
  }
  return index;
}

llvm::Expected<std::optional<HexDigest>> CacheIndex::find(llvm::StringRef key) {
  llvm::Expected<Statement> statement = db.prepare("SELECT meta FROM entries WHERE key = ?1");
  if (!statement)
    return statement.takeError();
  statement->bind(1, key);
  llvm::Expected<bool> row = statement->step();
  if (!row)
    return row.takeError();
  if (!*row)
    return std::nullopt;
  return statement->text(0);
}

llvm::Expected<uint64_t> CacheIndex::detach(llvm::StringRef key) {
  std::vector<HexDigest> digests;
  {
    llvm::Expected<Statement> select = db.prepare("SELECT digest FROM entry_blobs WHERE key = ?1");
    if (!select)
      return select.takeError();
    select->bind(1, key);
    if (llvm::Error error =
            select->forEachRow([&](const Statement &row) { digests.push_back(row.text(0)); }))
      return error;
  }
  for (const char *sql :
       {"DELETE FROM entry_blobs WHERE key = ?1", "DELETE FROM entries WHERE key = ?1"}) {
    llvm::Expected<Statement> statement = db.prepare(sql);
    if (!statement)
      return statement.takeError();
    if (llvm::Error error = statement->bind(1, key).run())
      return error;
  }
  uint64_t freed = 0;
  llvm::Expected<Statement> used =
      db.prepare("SELECT 1 FROM entry_blobs WHERE digest = ?1 LIMIT 1");
  llvm::Expected<Statement> size = db.prepare("SELECT size FROM blobs WHERE digest = ?1");
  llvm::Expected<Statement> unlist = db.prepare("DELETE FROM blobs WHERE digest = ?1");
  llvm::Expected<Statement> discard =
      db.prepare("INSERT OR IGNORE INTO garbage(digest) VALUES (?1)");
  if (!used || !size || !unlist || !discard)
    return llvm::joinErrors(llvm::joinErrors(used.takeError(), size.takeError()),
                            llvm::joinErrors(unlist.takeError(), discard.takeError()));
  for (const HexDigest &digest : digests) {
    used->bind(1, digest);
    llvm::Expected<bool> stillUsed = used->step();
    used->reset();
    if (!stillUsed)
      return stillUsed.takeError();
    if (*stillUsed)
      continue;
    size->bind(1, digest);
    llvm::Expected<bool> sized = size->step();
    if (!sized)
      return sized.takeError();
    if (*sized)
      freed += static_cast<uint64_t>(size->integer(0));
    size->reset();
    if (llvm::Error error = unlist->bind(1, digest).run())
      return error;
    if (llvm::Error error = discard->bind(1, digest).run())
      return error;
  }
  return freed;
}

llvm::Error CacheIndex::insert(const EntryMetadata &metadata, llvm::StringRef metaDigest,
                               uint64_t metaSize, int64_t lastUsed) {
  llvm::Expected<uint64_t> freed = detach(metadata.key);
  if (!freed)
    return freed.takeError();
  // A blob the metadata lists twice (two roles with the same bytes, or a
  // forged list) is stored once, so it counts once.
  std::vector<BlobPart> files = storedBlobs(metadata);
  uint64_t size = metaSize;
  for (const BlobPart &file : files)
    size += file.size;
  llvm::Expected<Statement> entry =
      db.prepare("INSERT INTO entries(key, meta, kind, target, name, size, created, last_used) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!entry)
    return entry.takeError();
  entry->bind(1, metadata.key)
      .bind(2, metaDigest)
      .bind(3, metadata.kind)
      .bind(4, metadata.target)
      .bind(5, metadata.name)
      .bind(6, static_cast<int64_t>(size))
      .bind(7, metadata.created)
      .bind(8, lastUsed);
  if (llvm::Error error = entry->run())
    return error;
  llvm::Expected<Statement> link =
      db.prepare("INSERT OR IGNORE INTO entry_blobs(key, digest) VALUES (?1, ?2)");
  llvm::Expected<Statement> blob =
      db.prepare("INSERT OR IGNORE INTO blobs(digest, size) VALUES (?1, ?2)");
  llvm::Expected<Statement> keep = db.prepare("DELETE FROM garbage WHERE digest = ?1");
  if (!link || !blob || !keep)
    return llvm::joinErrors(llvm::joinErrors(link.takeError(), blob.takeError()), keep.takeError());
  std::vector<std::pair<llvm::StringRef, uint64_t>> all = {{metaDigest, metaSize}};
  for (const BlobPart &file : files)
    all.push_back({file.digest, file.size});
  for (const auto &[digest, bytes] : all) {
    if (llvm::Error error = link->bind(1, metadata.key).bind(2, digest).run())
      return error;
    if (llvm::Error error = blob->bind(1, digest).bind(2, static_cast<int64_t>(bytes)).run())
      return error;
    if (llvm::Error error = keep->bind(1, digest).run())
      return error;
  }
  return llvm::Error::success();
}

llvm::Error CacheIndex::publish(const EntryMetadata &metadata, llvm::StringRef metaDigest,
                                uint64_t metaSize, llvm::function_ref<llvm::Error()> ensureBlobs) {
  NewEntry entry{metadata, metaDigest.str(), metaSize};
  return publishAll(entry, ensureBlobs);
}

llvm::Error CacheIndex::publishAll(llvm::ArrayRef<NewEntry> entries,
                                   llvm::function_ref<llvm::Error()> ensureBlobs) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  int64_t now = unixNow();
  for (const NewEntry &entry : entries)
    if (llvm::Error error = insert(entry.metadata, entry.metaDigest, entry.metaSize, now))
      return error;
  // Under the write lock, no garbage collection can delete these files now.
  if (llvm::Error error = ensureBlobs())
    return error;
  if (llvm::Error error = addCounters({{{"stores", static_cast<int64_t>(entries.size())}}}))
    return error;
  return transaction->commit();
}

llvm::Expected<bool> CacheIndex::dropEntry(llvm::StringRef key, llvm::StringRef metaDigest,
                                           llvm::ArrayRef<HexDigest> damaged,
                                           const BlobStore &store) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  llvm::Expected<std::optional<HexDigest>> current = find(key);
  if (!current)
    return current.takeError();
  bool dropped = false;
  if (*current && **current == metaDigest) {
    llvm::Expected<uint64_t> freed = detach(key);
    if (!freed)
      return freed.takeError();
    dropped = true;
  }
  // A damaged blob is of no use to any entry: a store writes it anew.
  for (const HexDigest &digest : damaged)
    llvm::consumeError(store.remove(digest));
  if (llvm::Error error = transaction->commit())
    return error;
  return dropped;
}

llvm::Error CacheIndex::addCounters(const CounterDeltas &deltas) {
  llvm::Expected<Statement> add =
      db.prepare("INSERT INTO counters(name, value) VALUES (?1, ?2) "
                 "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value");
  if (!add)
    return add.takeError();
  for (const auto &[name, value] : deltas.values)
    if (value != 0)
      if (llvm::Error error = add->bind(1, name).bind(2, value).run())
        return error;
  return llvm::Error::success();
}

llvm::Error CacheIndex::recordUse(llvm::ArrayRef<HexDigest> usedKeys, int64_t now,
                                  const CounterDeltas &deltas) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  llvm::Expected<Statement> touch =
      db.prepare("UPDATE entries SET last_used = ?1 WHERE key = ?2 AND last_used < ?1");
  if (!touch)
    return touch.takeError();
  for (const HexDigest &key : usedKeys)
    if (llvm::Error error = touch->bind(1, now).bind(2, key).run())
      return error;
  if (llvm::Error error = addCounters(deltas))
    return error;
  return transaction->commit();
}

llvm::Expected<uint64_t> CacheIndex::totalBytes() {
  llvm::Expected<std::optional<int64_t>> total = db.queryInteger("SELECT SUM(size) FROM blobs");
  if (!total)
    return total.takeError();
  return static_cast<uint64_t>(total->value_or(0));
}

llvm::Expected<CacheIndex::Eviction> CacheIndex::evict(std::optional<uint64_t> maxBytes,
                                                       std::optional<int64_t> usedBefore,
                                                       const BlobStore &store,
                                                       llvm::ArrayRef<HexDigest> keep) {
  Eviction result;
  {
    llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
    if (!transaction)
      return transaction.takeError();
    llvm::Expected<uint64_t> total = totalBytes();
    if (!total)
      return total.takeError();
    llvm::Expected<Statement> oldest =
        db.prepare("SELECT key, last_used FROM entries ORDER BY last_used ASC, created ASC, key");
    if (!oldest)
      return oldest.takeError();
    std::set<HexDigest> kept(keep.begin(), keep.end());
    // Others' entries first, least recently used first; then the build's
    // own, so that it keeps the most recently used of them that fit.
    std::vector<std::pair<HexDigest, int64_t>> others, own;
    if (llvm::Error error = oldest->forEachRow([&](const Statement &row) {
          (kept.count(row.text(0)) ? own : others).push_back({row.text(0), row.integer(1)});
        }))
      return error;
    if (!own.empty()) {
      llvm::Expected<uint64_t> bytes = bytesOf(own);
      if (!bytes)
        return bytes.takeError();
      result.keptEntries = own.size();
      result.keptBytes = *bytes;
    }
    uint64_t bytes = *total;
    for (const auto *group : {&others, &own})
      for (const auto &[key, lastUsed] : *group) {
        bool tooOld = usedBefore && lastUsed < *usedBefore;
        bool tooBig = maxBytes && bytes > *maxBytes;
        if (!tooOld && !tooBig)
          continue;
        llvm::Expected<uint64_t> freed = detach(key);
        if (!freed)
          return freed.takeError();
        bytes -= std::min(bytes, *freed);
        ++result.dropped;
        if (group == &own && !tooOld)
          result.droppedKept = true;
      }
    if (result.dropped)
      if (llvm::Error error = addCounters({{{"evictions", static_cast<int64_t>(result.dropped)}}}))
        return error;
    if (llvm::Error error = transaction->commit())
      return error;
  }
  if (llvm::Error error = collectGarbage(store))
    return error;
  return result;
}

llvm::Expected<uint64_t> CacheIndex::bytesOf(llvm::ArrayRef<std::pair<HexDigest, int64_t>> keys) {
  llvm::Expected<Statement> select =
      db.prepare("SELECT b.digest, b.size FROM entry_blobs e JOIN blobs b ON b.digest = e.digest "
                 "WHERE e.key = ?1");
  if (!select)
    return select.takeError();
  std::set<HexDigest> counted;
  uint64_t bytes = 0;
  for (const auto &key : keys) {
    select->bind(1, key.first);
    if (llvm::Error error = select->forEachRow([&](const Statement &row) {
          if (counted.insert(row.text(0)).second)
            bytes += static_cast<uint64_t>(row.integer(1));
        }))
      return error;
    select->reset();
  }
  return bytes;
}

llvm::Error CacheIndex::releaseFreePages() {
  llvm::Expected<std::optional<int64_t>> mode = db.queryInteger("PRAGMA auto_vacuum");
  if (!mode)
    return mode.takeError();
  // 2 is INCREMENTAL. Converting rewrites the whole file, once.
  bool converting = mode->value_or(0) != 2;
  if (llvm::Error error = retryWhileBusy([&] {
        return db.execute(converting ? "PRAGMA auto_vacuum=INCREMENTAL; VACUUM"
                                     : "PRAGMA incremental_vacuum");
      }))
    return error;
  llvm::Expected<Statement> journal = db.prepare("PRAGMA journal_mode");
  if (!journal)
    return journal.takeError();
  llvm::Expected<bool> row = journal->step();
  if (!row)
    return row.takeError();
  if (!*row || journal->text(0) != "wal")
    return llvm::Error::success();
  journal->reset();
  // The freed pages leave the database file only when the log is written
  // back into it. A reader still on an older snapshot keeps the log; the
  // next checkpoint finishes the job then.
  return db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
}

llvm::Expected<std::optional<uint64_t>> CacheIndex::storedMaxSize() {
  llvm::Expected<std::optional<int64_t>> table = db.queryInteger(
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'settings'");
  if (!table)
    return table.takeError();
  if (table->value_or(0) == 0)
    return std::nullopt;
  llvm::Expected<std::optional<int64_t>> value =
      db.queryInteger("SELECT value FROM settings WHERE name = 'max_size'");
  if (!value)
    return value.takeError();
  if (!*value || **value < 0)
    return std::nullopt;
  return static_cast<uint64_t>(**value);
}

llvm::Error CacheIndex::storeMaxSize(uint64_t bytes) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  if (llvm::Error error = db.execute(kSettingsTable))
    return error;
  llvm::Expected<Statement> set =
      db.prepare("INSERT INTO settings(name, value) VALUES ('max_size', ?1) "
                 "ON CONFLICT(name) DO UPDATE SET value = excluded.value");
  if (!set)
    return set.takeError();
  if (llvm::Error error = set->bind(1, static_cast<int64_t>(bytes)).run())
    return error;
  return transaction->commit();
}

llvm::Error CacheIndex::collectGarbage(const BlobStore &store) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  llvm::Expected<Statement> garbage =
      db.prepare("SELECT digest FROM garbage WHERE digest NOT IN (SELECT digest FROM entry_blobs)");
  if (!garbage)
    return garbage.takeError();
  std::vector<HexDigest> digests;
  if (llvm::Error error =
          garbage->forEachRow([&](const Statement &row) { digests.push_back(row.text(0)); }))
    return error;
  llvm::consumeError(store.removeAll(digests));
  if (llvm::Error error = db.execute("DELETE FROM garbage"))
    return error;
  return transaction->commit();
}

llvm::Error CacheIndex::clear(const BlobStore &store) {
  llvm::Expected<WriteTransaction> transaction = WriteTransaction::begin(db);
  if (!transaction)
    return transaction.takeError();
  if (llvm::Error error = db.execute("DELETE FROM entry_blobs; DELETE FROM entries; "
                                     "DELETE FROM blobs; DELETE FROM garbage"))
    return error;
  // Every blob goes, those no row named (interrupted writes) too, under the
  // write lock: a build publishing its entries after this writes their
  // blobs again (publishAll checks them under the same lock), so none of its
  // entries names a blob that is gone.
  llvm::Error cleared = store.clear();
  return llvm::joinErrors(transaction->commit(), std::move(cleared));
}

llvm::Expected<IndexStats> CacheIndex::stats() {
  IndexStats result;
  llvm::Expected<std::optional<int64_t>> count = db.queryInteger("SELECT COUNT(*) FROM entries");
  if (!count)
    return count.takeError();
  result.entries = static_cast<uint64_t>(count->value_or(0));
  llvm::Expected<uint64_t> bytes = totalBytes();
  if (!bytes)
    return bytes.takeError();
  result.bytes = *bytes;
  for (const char *name : {"hits", "misses", "corrupt", "evictions", "stores"})
    result.counters[name] = 0;
  llvm::Expected<Statement> counters = db.prepare("SELECT name, value FROM counters");
  if (!counters)
    return counters.takeError();
  if (llvm::Error error = counters->forEachRow(
          [&](const Statement &row) { result.counters[row.text(0)] = row.integer(1); }))
    return error;
  llvm::Expected<Statement> targets =
      db.prepare("SELECT target, kind, COUNT(*), SUM(size) FROM entries GROUP BY target, kind");
  if (!targets)
    return targets.takeError();
  if (llvm::Error error = targets->forEachRow([&](const Statement &row) {
        result.byTarget[{row.text(0), row.text(1)}] = {static_cast<uint64_t>(row.integer(2)),
                                                       static_cast<uint64_t>(row.integer(3))};
      }))
    return error;
  return result;
}

llvm::Expected<std::vector<EntryRow>> CacheIndex::entries() {
  llvm::Expected<Statement> select =
      db.prepare("SELECT key, meta, kind, target, name, size, created, last_used FROM entries "
                 "ORDER BY last_used DESC, name, kind, target, key");
  if (!select)
    return select.takeError();
  std::vector<EntryRow> rows;
  if (llvm::Error error = select->forEachRow([&](const Statement &row) {
        rows.push_back({row.text(0), row.text(1), row.text(2), row.text(3), row.text(4),
                        static_cast<uint64_t>(row.integer(5)), row.integer(6), row.integer(7)});
      }))
    return error;
  return rows;
}

llvm::Expected<std::map<HexDigest, uint64_t>> CacheIndex::blobSizes() {
  llvm::Expected<Statement> select = db.prepare("SELECT digest, size FROM blobs");
  if (!select)
    return select.takeError();
  std::map<HexDigest, uint64_t> sizes;
  if (llvm::Error error = select->forEachRow([&](const Statement &row) {
        sizes[row.text(0)] = static_cast<uint64_t>(row.integer(1));
      }))
    return error;
  return sizes;
}

llvm::Expected<std::vector<std::pair<HexDigest, HexDigest>>> CacheIndex::entryBlobs() {
  llvm::Expected<Statement> select = db.prepare("SELECT key, digest FROM entry_blobs");
  if (!select)
    return select.takeError();
  std::vector<std::pair<HexDigest, HexDigest>> pairs;
  if (llvm::Error error = select->forEachRow(
          [&](const Statement &row) { pairs.push_back({row.text(0), row.text(1)}); }))
    return error;
  return pairs;
}

llvm::Expected<std::string> CacheIndex::integrityCheck() {
  llvm::Expected<Statement> check = db.prepare("PRAGMA integrity_check");
  if (!check)
    return check.takeError();
  std::string result;
  if (llvm::Error error = check->forEachRow(
          [&](const Statement &row) { result += (result.empty() ? "" : "\n") + row.text(0); }))
    return error;
  return result;
}

} // namespace kiln::cache
