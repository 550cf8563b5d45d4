//===- cache/cache.cpp ----------------------------------------------------===//

#include "cache/cache.h"

#include "cache/database_repair.h"
#include "cache/file_system.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>

#include <cstring>
#include <set>
#include <unistd.h>

namespace kiln::cache {

std::string indexPath(llvm::StringRef directory) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "index.sqlite");
  return path.str().str();
}

namespace {

/// Why an index cannot be used as it is: it can be repaired (moved aside
/// and rebuilt), or not (newer format, busy, unreadable).
enum class IndexFault { None, Repairable, Fatal };

IndexFault classify(llvm::Error &error) {
  IndexFault fault = IndexFault::Fatal;
  error = llvm::handleErrors(
      std::move(error),
      [&](std::unique_ptr<IndexFormatError> format) -> llvm::Error {
        fault = format->found() > kIndexFormat ? IndexFault::Fatal : IndexFault::Repairable;
        return llvm::Error(std::move(format));
      },
      [&](std::unique_ptr<SqliteError> sqlite) -> llvm::Error {
        fault = sqlite->isCorruption() ? IndexFault::Repairable : IndexFault::Fatal;
        return llvm::Error(std::move(sqlite));
      });
  return fault;
}

} // namespace

Cache::Cache(CacheOptions options, WarningHandler warn, std::unique_ptr<CacheIndex> index,
             std::optional<std::string> network, bool readOnly)
    : options(std::move(options)), warn(std::move(warn)),
      blobStore(this->options.directory + "/objects", nullptr), indexPtr(std::move(index)),
      network(std::move(network)), readOnly(readOnly) {}

Cache::~Cache() {
  finish();
}

void Cache::resolveLimit() {
  limit = options.maxSize.value_or(kDefaultMaxSize);
  limitStored = false;
  if (options.maxSize)
    return;
  llvm::Expected<std::optional<uint64_t>> kept = indexPtr->storedMaxSize();
  if (!kept) {
    llvm::consumeError(kept.takeError());
    return;
  }
  if (*kept) {
    limit = **kept;
    limitStored = true;
  }
}

void Cache::warnOnce(const llvm::Twine &message) {
  if (warned.exchange(true))
    return;
  if (warn)
    warn(message.str());
}

llvm::Error Cache::openPackedBlobs(JournalMode mode) {
  std::string path = BlobStore::packedPath(blobStore.directory());
  llvm::Expected<std::unique_ptr<PackedBlobs>> packed =
      readOnly ? PackedBlobs::openToRead(path)
               : PackedBlobs::open(path, options.directory, mode,
                                   [this](const std::string &note) { warnOnce(note); });
  if (!packed)
    return packed.takeError();
  blobStore = BlobStore(blobStore.directory(), std::move(*packed));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Cache>> Cache::open(const CacheOptions &options,
                                                   WarningHandler warn) {
  const std::string &directory = options.directory;
  llvm::SmallString<256> objects(directory);
  llvm::sys::path::append(objects, "objects");
  // all_all and 0666: the cache's folders and files get the modes the
  // user's umask asks for (a group's shared cache, umask 002, stays writable
  // to the group).
  if (std::error_code error = llvm::sys::fs::create_directories(objects, /*IgnoreExisting=*/true,
                                                                llvm::sys::fs::all_all))
    return llvm::createStringError(error, "cannot use the cache folder '" + directory +
                                              "': " + error.message());
  std::optional<std::string> network = cache::networkFileSystem(directory);
  if (::access(directory.c_str(), W_OK) != 0 || ::access(objects.c_str(), W_OK) != 0) {
    llvm::Expected<CacheIndex> index = CacheIndex::openReadOnly(indexPath(directory));
    if (!index)
      return llvm::createStringError(std::make_error_code(std::errc::read_only_file_system),
                                     "the cache folder '" + directory +
                                         "' is not writable, and its index cannot be read (" +
                                         llvm::toString(index.takeError()) + ")");
    std::unique_ptr<Cache> cache(new Cache(options, std::move(warn),
                                           std::make_unique<CacheIndex>(std::move(*index)),
                                           std::move(network), /*readOnly=*/true));
    // Unreadable packed blobs leave their entries missing: misses.
    if (llvm::Error error = cache->openPackedBlobs(JournalMode::Wal))
      cache->warnOnce("cannot read the packed blobs of the read-only cache '" + directory + "' (" +
                      llvm::toString(std::move(error)) + "); recompiling what they hold");
    cache->resolveLimit();
    return cache;
  }
  JournalMode mode = network ? JournalMode::Rollback : JournalMode::Wal;
  std::string path = indexPath(directory);

  bool created = false;
  llvm::Expected<CacheIndex> index = CacheIndex::open(path, mode, created);
  std::optional<std::string> repaired;
  if (!index) {
    llvm::Error error = index.takeError();
    if (classify(error) != IndexFault::Repairable)
      return error;
    std::string reason = llvm::toString(std::move(error));
    // One process repairs; the others find it repaired.
    RepairLock lock(directory);
    index = CacheIndex::open(path, mode, created);
    if (!index) {
      llvm::Error again = index.takeError();
      if (classify(again) != IndexFault::Repairable)
        return again;
      llvm::consumeError(std::move(again));
      llvm::Expected<std::string> aside = moveDatabaseAside(path);
      if (!aside)
        return aside.takeError();
      index = CacheIndex::open(path, mode, created);
      if (!index)
        return index.takeError();
      repaired = "the cache index '" + path + "' could not be used (" + reason +
                 "); moved it to '" + *aside + "'";
    }
  }
  std::unique_ptr<Cache> cache(new Cache(options, std::move(warn),
                                         std::make_unique<CacheIndex>(std::move(*index)),
                                         std::move(network)));
  // Before the index is rebuilt, which reads the blobs.
  if (llvm::Error error = cache->openPackedBlobs(mode))
    return error;
  if (options.maxSize && options.keepMaxSize)
    if (llvm::Error error = cache->index().storeMaxSize(*options.maxSize))
      cache->warnOnce("cannot keep the size limit in the cache index: " +
                      llvm::toString(std::move(error)));
  cache->resolveLimit();
  if (created) {
    llvm::Expected<uint64_t> restored = cache->indexFromBlobs();
    if (!restored)
      return restored.takeError();
    if (repaired)
      cache->warnOnce(*repaired + llvm::formatv(" and rebuilt it from {0} entries", *restored));
    else if (*restored)
      cache->warnOnce(llvm::formatv("the cache index '{0}' was missing; rebuilt it from {1} "
                                    "entries",
                                    path, *restored));
  }
  return cache;
}

/// Where `needle` first occurs in `haystack`, or npos; never for an empty
/// needle. StringRef::find compares at every offset for needles longer
/// than 255 bytes, which cubins are; memmem scans in linear time.
static size_t findBytes(llvm::StringRef haystack, llvm::StringRef needle) {
  if (needle.empty())
    return llvm::StringRef::npos;
  const void *at = ::memmem(haystack.data(), haystack.size(), needle.data(), needle.size());
  return at ? size_t(static_cast<const char *>(at) - haystack.data()) : llvm::StringRef::npos;
}

std::vector<Blob> layOutBlobs(const EntryContents &contents, EntryMetadata &metadata) {
  std::vector<Blob> files;
  std::set<llvm::StringRef> listed;
  auto add = [&](llvm::StringRef digest, llvm::StringRef bytes) {
    if (listed.insert(digest).second)
      files.push_back({digest.str(), bytes});
  };
  std::vector<HexDigest> impliedDigests;
  for (const std::string &bytes : contents.implied)
    impliedDigests.push_back(digestOf(bytes));
  for (const auto &[role, bytes] : contents.blobs) {
    llvm::StringRef whole(bytes);
    // Where the implied byte strings first occur, without overlaps.
    std::vector<std::pair<size_t, size_t>> spans;
    for (size_t i = 0; i < contents.implied.size(); ++i) {
      size_t at = findBytes(whole, contents.implied[i]);
      if (at != llvm::StringRef::npos)
        spans.push_back({at, i});
    }
    llvm::sort(spans);
    EntryBlob blob{role, digestOf(bytes), bytes.size(), {}};
    std::vector<Blob> pieces;
    size_t cursor = 0;
    for (const auto &[at, which] : spans) {
      if (at < cursor)
        continue;
      if (at > cursor) {
        llvm::StringRef gap = whole.slice(cursor, at);
        blob.parts.push_back({digestOf(gap), gap.size(), false});
        pieces.push_back({blob.parts.back().digest, gap});
      }
      blob.parts.push_back({impliedDigests[which], contents.implied[which].size(), true});
      cursor = at + contents.implied[which].size();
    }
    if (blob.parts.empty()) {
      add(blob.digest, whole);
    } else {
      if (cursor < whole.size()) {
        llvm::StringRef tail = whole.drop_front(cursor);
        blob.parts.push_back({digestOf(tail), tail.size(), false});
        pieces.push_back({blob.parts.back().digest, tail});
      }
      for (const Blob &piece : pieces)
        add(piece.digest, piece.bytes);
    }
    metadata.blobs.push_back(std::move(blob));
  }
  for (const EntryBlob &blob : contents.parted) {
    for (const BlobPart &part : blob.parts)
      if (!part.implied)
        if (auto found = contents.partBytes.find(part.digest); found != contents.partBytes.end())
          add(part.digest, found->second);
    metadata.blobs.push_back(blob);
  }
  return files;
}

BlobStatus Cache::readEntry(llvm::StringRef key, llvm::StringRef metaDigest, CachedEntry &entry,
                            HexDigest &bad, llvm::ArrayRef<std::string> implied) const {
  std::string text;
  bad = metaDigest.str();
  if (BlobStatus status = blobStore.read(metaDigest, text); status != BlobStatus::Ok)
    return status;
  llvm::Expected<EntryMetadata> metadata = parseMetadata(text);
  if (!metadata) {
    llvm::consumeError(metadata.takeError());
    return BlobStatus::Damaged;
  }
  if (metadata->key != key)
    return BlobStatus::Damaged;
  std::map<HexDigest, llvm::StringRef> given;
  for (const std::string &bytes : implied)
    given.emplace(digestOf(bytes), bytes);
  for (const EntryBlob &blob : metadata->blobs) {
    if (blob.parts.empty()) {
      std::string bytes;
      if (BlobStatus status = blobStore.read(blob.digest, bytes, blob.size);
          status != BlobStatus::Ok) {
        bad = blob.digest;
        return status;
      }
      entry.blobs[blob.role] = std::move(bytes);
      continue;
    }
    std::string whole;
    bool complete = true;
    for (const BlobPart &part : blob.parts) {
      if (part.implied) {
        auto found = given.find(part.digest);
        if (found == given.end() || found->second.size() != part.size)
          complete = false;
        else if (complete)
          whole += found->second;
        continue;
      }
      std::string bytes;
      if (BlobStatus status = blobStore.read(part.digest, bytes, part.size);
          status != BlobStatus::Ok) {
        bad = part.digest;
        return status;
      }
      whole += bytes;
    }
    if (!complete)
      continue;
    // Parts that are each intact yet do not make the whole: the metadata
    // is not what Kiln wrote.
    if (whole.size() != blob.size || digestOf(whole) != blob.digest)
      return BlobStatus::Damaged;
    entry.blobs[blob.role] = std::move(whole);
  }
  entry.metadata = std::move(*metadata);
  bad.clear();
  return BlobStatus::Ok;
}

std::optional<CachedEntry> Cache::lookup(llvm::StringRef key, llvm::ArrayRef<std::string> implied) {
  std::optional<HexDigest> meta;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (lookupsDisabled)
      return std::nullopt;
    llvm::Expected<std::optional<HexDigest>> found = indexPtr->find(key);
    if (!found) {
      llvm::Error error = found.takeError();
      if (isCorruptionCode(sqliteCode(error))) {
        lookupsDisabled = storesDisabled = true;
        warnOnce("the cache index is damaged (" + llvm::toString(std::move(error)) +
                 "); building without the cache");
      } else {
        llvm::consumeError(std::move(error));
      }
      ++deltas.values["misses"];
      return std::nullopt;
    }
    meta = std::move(*found);
    if (!meta) {
      ++deltas.values["misses"];
      return std::nullopt;
    }
  }
  CachedEntry entry;
  HexDigest bad;
  BlobStatus status = readEntry(key, *meta, entry, bad, implied);
  std::lock_guard<std::mutex> lock(mutex);
  // The caller lacks bytes the entry holds by digest only: not this
  // caller's entry to use, nor a damaged one.
  if (status == BlobStatus::Ok && entry.blobs.size() != entry.metadata.blobs.size()) {
    ++deltas.values["misses"];
    return std::nullopt;
  }
  if (status == BlobStatus::Ok) {
    ++deltas.values["hits"];
    used.push_back(key.str());
    return entry;
  }
  ++deltas.values["misses"];
  if (readOnly) {
    warnOnce(llvm::Twine("the cache entry ") + key.take_front(16) + " is " +
             (status == BlobStatus::Missing ? "missing a blob" : "damaged") +
             " in the read-only cache '" + options.directory + "'; recompiling it");
    return std::nullopt;
  }
  std::vector<HexDigest> damaged;
  if (status == BlobStatus::Damaged)
    damaged.push_back(bad);
  llvm::Expected<bool> dropped = indexPtr->dropEntry(key, *meta, damaged, blobStore);
  if (!dropped) {
    llvm::consumeError(dropped.takeError());
    return std::nullopt;
  }
  // A row whose blob vanished because another process evicted it meanwhile
  // is gone from the index too: an ordinary miss.
  if (*dropped || status == BlobStatus::Damaged) {
    ++deltas.values["corrupt"];
    warnOnce(llvm::Twine("the cache entry ") + key.take_front(16) + " was " +
             (status == BlobStatus::Missing ? "missing" : "damaged") + " (blob " +
             llvm::StringRef(bad).take_front(16) + "); recompiling it");
  }
  return std::nullopt;
}

bool Cache::contains(llvm::StringRef key) {
  std::lock_guard<std::mutex> lock(mutex);
  if (lookupsDisabled)
    return false;
  llvm::Expected<std::optional<HexDigest>> found = indexPtr->find(key);
  if (!found) {
    llvm::consumeError(found.takeError());
    return false;
  }
  return found->has_value();
}

llvm::Error Cache::writeAndPublish(llvm::ArrayRef<EntryContents> entries,
                                   std::vector<CacheIndex::NewEntry> *published) {
  std::vector<CacheIndex::NewEntry> written;
  std::vector<std::string> texts;
  std::vector<Blob> blobs;
  for (const EntryContents &contents : entries) {
    EntryMetadata metadata{
        contents.key, contents.kind, contents.target, contents.name, unixNow(), contents.info, {}};
    for (Blob &blob : layOutBlobs(contents, metadata))
      blobs.push_back(std::move(blob));
    texts.push_back(writeMetadata(metadata));
    HexDigest metaDigest = digestOf(texts.back());
    written.push_back({std::move(metadata), std::move(metaDigest), texts.back().size()});
  }
  // `texts` is complete: its strings stay where they are.
  for (size_t i = 0; i < written.size(); ++i)
    blobs.push_back({written[i].metaDigest, texts[i]});
  if (llvm::Error error = blobStore.putAll(blobs))
    return error;
  // The index's connection is the lookups' too. Garbage collection may have
  // deleted an identical blob between putAll and the write lock; ensureAll
  // writes it again.
  std::lock_guard<std::mutex> lock(mutex);
  if (llvm::Error error = indexPtr->publishAll(written, [&] { return blobStore.ensureAll(blobs); }))
    return error;
  if (published)
    *published = std::move(written);
  return llvm::Error::success();
}

void Cache::store(const EntryContents &contents) {
  storeAll(llvm::ArrayRef(contents));
}

void Cache::storeAll(llvm::ArrayRef<EntryContents> entries) {
  if (entries.empty())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (readOnly)
      warnOnce("the cache folder '" + options.directory +
               "' is read-only: builds use its entries but store none");
    if (storesDisabled || readOnly)
      return;
  }
  llvm::Error published = writeAndPublish(entries);
  std::lock_guard<std::mutex> lock(mutex);
  if (published) {
    int code = sqliteCode(published);
    if (code == 5 /*SQLITE_BUSY*/) {
      llvm::consumeError(std::move(published));
      return;
    }
    storesDisabled = true;
    warnOnce("cannot store in the cache '" + options.directory +
             "': " + llvm::toString(std::move(published)) + "; building without storing");
    return;
  }
  stored = true;
  for (const EntryContents &contents : entries)
    storedKeys.push_back(contents.key);
}

void Cache::addCounters(const CounterDeltas &more) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &[name, value] : more.values)
    if (value)
      deltas.values[name] += value;
}

void Cache::finish() {
  std::lock_guard<std::mutex> lock(mutex);
  if (finished)
    return;
  finished = true;
  if (lookupsDisabled || readOnly)
    return;
  if (!used.empty() || !deltas.empty())
    llvm::consumeError(indexPtr->recordUse(used, unixNow(), deltas));
  // Entries replaced by concurrent stores or dropped as damaged leave
  // garbage blobs.
  if (stored || deltas.values.count("corrupt"))
    llvm::consumeError(indexPtr->collectGarbage(blobStore));
  if (!stored || limit == 0)
    return;
  llvm::Expected<uint64_t> total = indexPtr->totalBytes();
  if (!total) {
    llvm::consumeError(total.takeError());
    return;
  }
  if (*total <= limit)
    return;
  std::vector<HexDigest> own = used;
  own.insert(own.end(), storedKeys.begin(), storedKeys.end());
  llvm::Expected<CacheIndex::Eviction> evicted =
      indexPtr->evict(limit, std::nullopt, blobStore, own);
  if (!evicted) {
    llvm::consumeError(evicted.takeError());
    return;
  }
  // Once per build, whatever else it warned about.
  if (evicted->droppedKept && warn)
    warn(llvm::formatv("the cache limit {0} is smaller than this build's {1} entries ({2}); "
                       "keeping the most recently used that fit",
                       formatSize(limit), evicted->keptEntries, formatSize(evicted->keptBytes))
             .str());
}

llvm::Expected<uint64_t> Cache::indexFromBlobs() {
  std::map<HexDigest, CacheIndex::NewEntry> found;
  blobStore.forEach([&](llvm::StringRef digest) {
    if (!blobStore.startsWith(digest, kMetadataMagic))
      return;
    std::string text;
    if (blobStore.read(digest, text) != BlobStatus::Ok)
      return;
    llvm::Expected<EntryMetadata> metadata = parseMetadata(text);
    if (!metadata) {
      llvm::consumeError(metadata.takeError());
      return;
    }
    for (const BlobPart &blob : storedBlobs(*metadata))
      if (blobStore.sizeOf(blob.digest) != blob.size)
        return;
    auto existing = found.find(metadata->key);
    if (existing != found.end() && existing->second.metadata.created > metadata->created)
      return;
    HexDigest key = metadata->key;
    found[key] = CacheIndex::NewEntry{std::move(*metadata), digest.str(), text.size()};
  });
  std::vector<CacheIndex::NewEntry> entries;
  for (auto &[key, entry] : found)
    entries.push_back(std::move(entry));
  if (entries.empty())
    return 0;
  if (llvm::Error error = indexPtr->publishAll(entries, [] { return llvm::Error::success(); }))
    return error;
  return entries.size();
}

} // namespace kiln::cache
