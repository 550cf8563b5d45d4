//===- cache/cache_verify.cpp ---------------------------------------------===//

#include "cache/cache_verify.h"

#include <llvm/Support/FileSystem.h>

#include <set>
#include <sys/stat.h>

namespace kiln::cache {

namespace {

/// Temporary files of interrupted writes older than this are left over.
constexpr int64_t kLeftoverAge = 3600;

std::string shortName(llvm::StringRef digest) {
  return digest.take_front(16).str();
}

} // namespace

llvm::Expected<VerifyReport> verifyCache(Cache &cache, bool repair) {
  VerifyReport report;
  CacheIndex &index = cache.index();
  const BlobStore &store = cache.blobs();
  llvm::Expected<std::string> integrity = index.integrityCheck();
  if (!integrity)
    return integrity.takeError();
  if (*integrity != "ok")
    report.problems.push_back("the index fails SQLite's integrity check: " + *integrity);
  if (PackedBlobs *packed = store.packedBlobs()) {
    llvm::Expected<std::string> packedIntegrity = packed->integrityCheck();
    if (!packedIntegrity)
      return packedIntegrity.takeError();
    if (*packedIntegrity != "ok") {
      report.problems.push_back("the packed blobs '" + packed->path() +
                                "' fail SQLite's integrity check: " + *packedIntegrity);
      // Their entries are then missing, and dropped below.
      if (repair) {
        if (llvm::Error error = packed->replace(*packedIntegrity))
          return error;
        report.repairs.push_back("moved the damaged packed blobs aside");
      }
    }
  }

  llvm::Expected<std::vector<EntryRow>> rows = index.entries();
  if (!rows)
    return rows.takeError();
  report.entries = rows->size();
  std::set<HexDigest> keys;
  for (const EntryRow &row : *rows) {
    keys.insert(row.key);
    CachedEntry entry;
    HexDigest bad;
    BlobStatus status = cache.readEntry(row.key, row.meta, entry, bad);
    if (status == BlobStatus::Ok)
      continue;
    report.problems.push_back("entry " + shortName(row.key) + " (" + row.kind + " " + row.target +
                              " " + row.name + "): blob " + shortName(bad) + " is " +
                              (status == BlobStatus::Missing ? "missing" : "damaged"));
    if (repair) {
      std::vector<HexDigest> damaged;
      if (status == BlobStatus::Damaged)
        damaged.push_back(bad);
      llvm::Expected<bool> dropped = index.dropEntry(row.key, row.meta, damaged, store);
      if (!dropped)
        return dropped.takeError();
      if (*dropped)
        report.repairs.push_back("dropped entry " + shortName(row.key));
    }
  }

  llvm::Expected<std::map<HexDigest, uint64_t>> sizes = index.blobSizes();
  if (!sizes)
    return sizes.takeError();
  llvm::Expected<std::vector<std::pair<HexDigest, HexDigest>>> links = index.entryBlobs();
  if (!links)
    return links.takeError();
  std::set<HexDigest> referenced;
  for (const auto &[key, digest] : *links)
    referenced.insert(digest);
  for (const auto &[key, digest] : *links)
    if (!sizes->count(digest))
      report.problems.push_back("entry " + shortName(key) + " names blob " + shortName(digest) +
                                ", which the index does not list");

  std::vector<HexDigest> orphans;
  std::vector<std::string> leftovers;
  store.forEach(
      [&](llvm::StringRef digest) {
        ++report.blobs;
        if (!referenced.count(digest.str()))
          orphans.push_back(digest.str());
      },
      [&](llvm::StringRef path) {
        struct stat info;
        if (::stat(path.str().c_str(), &info) == 0 && unixNow() - info.st_mtime > kLeftoverAge)
          leftovers.push_back(path.str());
      });

  std::vector<CacheIndex::NewEntry> restore;
  std::set<HexDigest> restoredBlobs;
  for (const HexDigest &digest : orphans) {
    std::string text;
    if (store.read(digest, text) == BlobStatus::Ok && looksLikeMetadata(text)) {
      llvm::Expected<EntryMetadata> metadata = parseMetadata(text);
      if (metadata && !keys.count(metadata->key)) {
        bool whole = true;
        for (const BlobPart &blob : storedBlobs(*metadata)) {
          std::string bytes;
          whole &= store.read(blob.digest, bytes, blob.size) == BlobStatus::Ok;
        }
        if (whole) {
          report.leftovers.push_back("entry " + shortName(metadata->key) +
                                     " has intact blobs but is not in the index");
          keys.insert(metadata->key);
          restoredBlobs.insert(digest);
          for (const BlobPart &blob : storedBlobs(*metadata))
            restoredBlobs.insert(blob.digest);
          restore.push_back({std::move(*metadata), digest, text.size()});
          continue;
        }
      }
      if (!metadata)
        llvm::consumeError(metadata.takeError());
    }
  }
  for (const HexDigest &digest : orphans)
    if (!restoredBlobs.count(digest))
      report.leftovers.push_back("blob " + shortName(digest) + " belongs to no entry");
  for (const std::string &path : leftovers)
    report.leftovers.push_back("'" + path + "' is left over from an interrupted write");

  if (!repair)
    return report;
  if (!restore.empty()) {
    if (llvm::Error error = index.publishAll(restore, [] { return llvm::Error::success(); }))
      return error;
    report.repairs.push_back("added " + std::to_string(restore.size()) +
                             " entries back to the index");
  }
  {
    // Under the write lock: a build that publishes one of these blobs
    // checks for its file under the same lock, and writes it again.
    llvm::Expected<WriteTransaction> begun = WriteTransaction::begin(index.database());
    if (!begun)
      return begun.takeError();
    llvm::Expected<std::vector<std::pair<HexDigest, HexDigest>>> used = index.entryBlobs();
    if (!used)
      return used.takeError();
    std::set<HexDigest> usedNow;
    for (const auto &[key, digest] : *used)
      usedNow.insert(digest);
    std::vector<HexDigest> unused;
    for (const HexDigest &digest : orphans)
      if (!usedNow.count(digest))
        unused.push_back(digest);
    llvm::consumeError(store.removeAll(unused));
    uint64_t removed = unused.size();
    for (const std::string &path : leftovers)
      llvm::sys::fs::remove(path);
    if (llvm::Error error = index.database().execute(
            "DELETE FROM blobs WHERE digest NOT IN (SELECT digest FROM entry_blobs)"))
      return error;
    if (llvm::Error error = begun->commit())
      return error;
    if (removed)
      report.repairs.push_back("deleted " + std::to_string(removed) + " blobs of no entry");
    if (!leftovers.empty())
      report.repairs.push_back("deleted " + std::to_string(leftovers.size()) + " leftover files");
  }
  if (llvm::Error error = index.collectGarbage(store))
    return error;
  return report;
}

} // namespace kiln::cache
