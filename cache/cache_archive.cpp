//===- cache/cache_archive.cpp --------------------------------------------===//

#include "cache/cache_archive.h"

#include "cache/archive_manifest.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>

#include <archive.h>
#include <archive_entry.h>
#include <map>
#include <optional>
#include <set>

namespace kiln::cache {

namespace {

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error archiveFailure(archive *handle, const llvm::Twine &what) {
  const char *message = archive_error_string(handle);
  return failure(what + ": " + (message ? message : "unknown libarchive error"));
}

/// "objects/ab/cdef..." → "abcdef...", or empty for any other path.
std::string digestOfPath(llvm::StringRef path) {
  if (!path.consume_front("objects/") || path.size() != 65 || path[2] != '/')
    return {};
  std::string digest = (path.take_front(2) + path.drop_front(3)).str();
  return isHexDigest(digest) ? digest : std::string();
}

struct SignedManifest {
  PublicKey signer;
  std::vector<ManifestEntry> entries;
};

/// The archive's manifest and the trusted key that signed it, if the
/// archive's blobs (`members`) are exactly those the manifest lists; else
/// why not.
llvm::Expected<SignedManifest>
checkSignedManifest(const TrustPolicy &trust, const std::optional<std::string> &manifestText,
                    const std::optional<std::string> &signatureText,
                    const std::map<HexDigest, std::string> &members) {
  if (!signatureText)
    return failure("it is not signed, so nothing shows who made its entries (export with a "
                   "signing key, see `kiln cache key generate`; or accept it anyway with "
                   "--insecure-skip-signature)");
  if (!manifestText)
    return failure("it has a signature but no manifest");
  llvm::Expected<Signature> signature = Signature::parse(*signatureText);
  if (!signature)
    return failure("its signature is malformed: " + llvm::toString(signature.takeError()));
  llvm::Expected<PublicKey> signer =
      checkSignature(trust.trusted, kManifestPurpose, *manifestText, *signature);
  if (!signer) {
    bool known = llvm::any_of(trust.trusted,
                              [&](const PublicKey &key) { return key.sameKey(signature->signer); });
    return failure(
        llvm::toString(signer.takeError()) +
        (known ? "" : " ('" + trust.source + "'; trust the signer with `kiln cache key trust`)"));
  }
  llvm::Expected<std::vector<ManifestEntry>> entries = parseManifest(*manifestText);
  if (!entries)
    return failure("its signed manifest is malformed: " + llvm::toString(entries.takeError()));
  std::set<HexDigest> listed;
  for (const ManifestEntry &entry : *entries) {
    listed.insert(entry.metadata);
    listed.insert(entry.blobs.begin(), entry.blobs.end());
  }
  for (const auto &[digest, bytes] : members)
    if (!listed.count(digest))
      return failure("blob " + digest.substr(0, 16) + " is not in the signed manifest");
  for (const HexDigest &digest : listed)
    if (!members.count(digest))
      return failure("blob " + digest.substr(0, 16) +
                     ", which the signed manifest lists, is missing");
  return SignedManifest{std::move(*signer), std::move(*entries)};
}

/// The members of an archive being imported, in memory: its blobs by
/// digest (each one hashes to its name), its manifest and its signature.
struct ArchiveMembers {
  std::map<HexDigest, std::string> blobs;
  std::optional<std::string> manifestText, signatureText;
};

/// Whether the member `name` is a file to read: false for a folder of the
/// cache's layout (there is nothing to read), an error for anything that
/// could lead out of the cache or is no regular file.
llvm::Expected<bool> isMemberFile(archive_entry *entry, llvm::StringRef name,
                                  const std::string &shown) {
  if (name.starts_with("/"))
    return failure(shown + " is an absolute path");
  llvm::SmallVector<llvm::StringRef, 8> parts;
  name.split(parts, '/');
  if (llvm::is_contained(parts, ".."))
    return failure(shown + " leads out of the cache with '..'");
  if (archive_entry_hardlink(entry))
    return failure(shown + " is a hard link");
  mode_t type = archive_entry_filetype(entry);
  if (type == AE_IFLNK)
    return failure(shown + " is a symbolic link");
  if (type == AE_IFDIR) {
    llvm::StringRef folder = name.rtrim('/');
    if (folder == "objects" ||
        (folder.starts_with("objects/") && folder.size() == 10 &&
         llvm::all_of(folder.drop_front(8), [](char c) { return llvm::isHexDigit(c); })))
      return false;
    return failure(shown + " is not a folder of a cache");
  }
  if (type != AE_IFREG)
    return failure(shown + " is a device, pipe or socket, not a regular file");
  return true;
}

/// The bytes of the current member, read while the member stays within
/// `limits` and the archive so far (`total`, which this advances) neither
/// outgrows the cache nor expands far beyond its compressed size.
llvm::Expected<std::string> readMemberBytes(archive *reader, archive_entry *entry,
                                            const std::string &shown, const ImportLimits &limits,
                                            uint64_t &total) {
  std::string bytes;
  char buffer[64 * 1024];
  while (true) {
    la_ssize_t got = archive_read_data(reader, buffer, sizeof buffer);
    if (got < 0)
      return failure(shown + " cannot be read (" +
                     (archive_error_string(reader) ? archive_error_string(reader) : "?") + ")");
    if (got == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(got));
    total += static_cast<uint64_t>(got);
    if (bytes.size() > limits.maxMemberBytes)
      return failure(shown + llvm::formatv(" is larger than {0} bytes", limits.maxMemberBytes));
    if (total > limits.maxTotalBytes)
      return failure(llvm::formatv("it expands to more than {0} bytes, the cache's size limit "
                                   "(a decompression bomb?)",
                                   limits.maxTotalBytes));
    uint64_t compressed =
        static_cast<uint64_t>(std::max<la_int64_t>(1, archive_filter_bytes(reader, -1)));
    if (total > limits.ratioThreshold && total / compressed > limits.maxRatio)
      return failure(
          llvm::formatv("it expands more than {0} times (a decompression bomb)", limits.maxRatio));
  }
  if (archive_entry_size_is_set(entry) &&
      static_cast<uint64_t>(archive_entry_size(entry)) != bytes.size())
    return failure(shown + " is not as long as its header says");
  return bytes;
}

/// Every member of the opened archive, verified, in memory up to the
/// limits; else why the archive is rejected.
llvm::Expected<ArchiveMembers> readMembers(archive *reader, const ImportLimits &limits) {
  ArchiveMembers read;
  std::map<HexDigest, std::string> &members = read.blobs;
  uint64_t total = 0;
  while (true) {
    archive_entry *entry = nullptr;
    int status = archive_read_next_header(reader, &entry);
    if (status == ARCHIVE_EOF)
      break;
    if (status != ARCHIVE_OK)
      return failure(llvm::Twine("not a readable tar archive (") +
                     (archive_error_string(reader) ? archive_error_string(reader) : "?") + ")");
    const char *rawName = archive_entry_pathname(entry);
    llvm::StringRef name = rawName ? rawName : "";
    std::string shown = "'" + name.str() + "'";
    llvm::Expected<bool> file = isMemberFile(entry, name, shown);
    if (!file)
      return file.takeError();
    if (!*file)
      continue;
    llvm::StringRef path = name.starts_with("./") ? name.drop_front(2) : name;
    if (archive_entry_size_is_set(entry) &&
        static_cast<uint64_t>(archive_entry_size(entry)) > limits.maxMemberBytes)
      return failure(shown + llvm::formatv(" is larger than {0} bytes", limits.maxMemberBytes));
    std::optional<std::string> *special = path == kManifestMember            ? &read.manifestText
                                          : path == kManifestSignatureMember ? &read.signatureText
                                                                             : nullptr;
    std::string digest;
    if (special) {
      if (*special)
        return failure(shown + " comes twice");
    } else {
      digest = digestOfPath(path);
      if (digest.empty())
        return failure(shown + " is not a cache blob (objects/ab/cdef...)");
      if (members.count(digest))
        return failure(shown + " comes twice");
    }
    llvm::Expected<std::string> bytes = readMemberBytes(reader, entry, shown, limits, total);
    if (!bytes)
      return bytes.takeError();
    if (special) {
      *special = std::move(*bytes);
      continue;
    }
    if (digestOf(*bytes) != digest)
      return failure(shown + " does not match its digest");
    members.emplace(std::move(digest), std::move(*bytes));
  }
  return read;
}

/// The entries `members` make: every metadata blob, complete; every member
/// part of one; with a signed manifest, exactly the entries it lists.
llvm::Expected<std::vector<EntryContents>>
collectEntries(const std::map<HexDigest, std::string> &members,
               const SignedManifest *signedManifest) {
  std::map<HexDigest, const ManifestEntry *> listedByMetadata;
  if (signedManifest)
    for (const ManifestEntry &entry : signedManifest->entries)
      listedByMetadata[entry.metadata] = &entry;
  std::vector<EntryContents> entries;
  std::set<HexDigest> claimed;
  for (const auto &[digest, bytes] : members) {
    if (!looksLikeMetadata(bytes))
      continue;
    llvm::Expected<EntryMetadata> metadata = parseMetadata(bytes);
    if (!metadata)
      return failure("blob " + digest.substr(0, 16) + ": " + llvm::toString(metadata.takeError()));
    if (signedManifest) {
      auto listed = listedByMetadata.find(digest);
      std::vector<HexDigest> blobs;
      for (const BlobPart &blob : storedBlobs(*metadata))
        blobs.push_back(blob.digest);
      if (listed == listedByMetadata.end() || listed->second->key != metadata->key ||
          listed->second->blobs != blobs)
        return failure("entry " + metadata->key.substr(0, 16) +
                       " is not the one the signed manifest lists");
      listedByMetadata.erase(listed);
    }
    claimed.insert(digest);
    EntryContents contents{metadata->key,  metadata->kind, metadata->target,
                           metadata->name, metadata->info, {}};
    for (const BlobPart &stored : storedBlobs(*metadata)) {
      auto member = members.find(stored.digest);
      if (member == members.end() || member->second.size() != stored.size)
        return failure("entry " + metadata->key.substr(0, 16) + " lacks its blob " +
                       stored.digest.substr(0, 16));
      claimed.insert(stored.digest);
    }
    for (const EntryBlob &blob : metadata->blobs) {
      if (blob.parts.empty()) {
        contents.blobs.push_back({blob.role, members.at(blob.digest)});
        continue;
      }
      for (const BlobPart &part : blob.parts)
        if (!part.implied)
          contents.partBytes[part.digest] = members.at(part.digest);
      contents.parted.push_back(blob);
    }
    entries.push_back(std::move(contents));
  }
  for (const auto &[digest, bytes] : members)
    if (!claimed.count(digest))
      return failure("blob " + digest.substr(0, 16) + " belongs to no entry");
  if (!listedByMetadata.empty())
    return failure("blob " + listedByMetadata.begin()->first.substr(0, 16) +
                   ", which the signed manifest lists as an entry's metadata, is none");
  return entries;
}

} // namespace

llvm::Expected<ExportReport> exportCache(Cache &cache, llvm::StringRef file,
                                         const SigningKey *signer) {
  ExportReport report;
  llvm::Expected<std::vector<EntryRow>> rows = cache.index().entries();
  if (!rows)
    return rows.takeError();
  archive *writer = archive_write_new();
  auto release = llvm::make_scope_exit([&] { archive_write_free(writer); });
  if (archive_write_set_format_pax_restricted(writer) != ARCHIVE_OK)
    return archiveFailure(writer, "cannot write a tar archive");
  int filter = ARCHIVE_OK;
  if (file.ends_with(".zst"))
    filter = archive_write_add_filter_zstd(writer);
  else if (file.ends_with(".gz") || file.ends_with(".tgz"))
    filter = archive_write_add_filter_gzip(writer);
  else if (file.ends_with(".xz"))
    filter = archive_write_add_filter_xz(writer);
  if (filter != ARCHIVE_OK)
    return archiveFailure(writer, "cannot compress '" + file + "'");
  std::string temporary = (file + ".tmp").str();
  if (archive_write_open_filename(writer, temporary.c_str()) != ARCHIVE_OK)
    return archiveFailure(writer, "cannot write '" + temporary + "'");
  auto removeTemporary = llvm::make_scope_exit([&] { llvm::sys::fs::remove(temporary); });
  auto write = [&](const std::string &path, llvm::StringRef bytes, int64_t time) -> llvm::Error {
    archive_entry *entry = archive_entry_new();
    archive_entry_set_pathname(entry, path.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_mtime(entry, time, 0);
    int status = archive_write_header(writer, entry);
    archive_entry_free(entry);
    if (status != ARCHIVE_OK || archive_write_data(writer, bytes.data(), bytes.size()) !=
                                    static_cast<la_ssize_t>(bytes.size()))
      return archiveFailure(writer, "cannot write '" + temporary + "'");
    return llvm::Error::success();
  };
  std::set<HexDigest> written;
  auto add = [&](llvm::StringRef digest, llvm::StringRef bytes, int64_t time) -> llvm::Error {
    if (!written.insert(digest.str()).second)
      return llvm::Error::success();
    if (llvm::Error error = write(
            ("objects/" + digest.take_front(2) + "/" + digest.drop_front(2)).str(), bytes, time))
      return error;
    ++report.blobs;
    report.bytes += bytes.size();
    return llvm::Error::success();
  };
  std::vector<ManifestEntry> manifest;
  for (const EntryRow &row : *rows) {
    CachedEntry entry;
    HexDigest bad;
    std::string metaText;
    if (cache.readEntry(row.key, row.meta, entry, bad) != BlobStatus::Ok ||
        cache.blobs().read(row.meta, metaText) != BlobStatus::Ok) {
      ++report.skipped;
      continue;
    }
    ManifestEntry listed{row.key, row.meta, {}};
    // The files as the cache keeps them: a blob kept in parts goes as its
    // stored parts, and imports as such.
    bool intact = true;
    std::vector<std::pair<HexDigest, std::string>> files;
    for (const BlobPart &blob : storedBlobs(entry.metadata)) {
      std::string bytes;
      intact &= cache.blobs().read(blob.digest, bytes, blob.size) == BlobStatus::Ok;
      files.push_back({blob.digest, std::move(bytes)});
    }
    if (!intact) {
      ++report.skipped;
      continue;
    }
    if (llvm::Error error = add(row.meta, metaText, row.created))
      return error;
    for (const auto &[digest, bytes] : files) {
      if (llvm::Error error = add(digest, bytes, row.created))
        return error;
      listed.blobs.push_back(digest);
    }
    manifest.push_back(std::move(listed));
    ++report.entries;
  }
  std::string manifestText = writeManifest(manifest);
  int64_t now = unixNow();
  if (llvm::Error error = write(kManifestMember.str(), manifestText, now))
    return error;
  if (signer) {
    llvm::Expected<Signature> signature = signer->sign(kManifestPurpose, manifestText);
    if (!signature)
      return signature.takeError();
    if (llvm::Error error = write(kManifestSignatureMember.str(), signature->text(), now))
      return error;
    report.signer = signer->publicKey();
  }
  if (archive_write_close(writer) != ARCHIVE_OK)
    return archiveFailure(writer, "cannot write '" + temporary + "'");
  if (std::error_code error = llvm::sys::fs::rename(temporary, file))
    return llvm::createStringError(error, "cannot write '" + file + "': " + error.message());
  removeTemporary.release();
  return report;
}

llvm::Expected<CheckedArchive> readArchive(llvm::StringRef file, const ImportLimits &limits,
                                           const TrustPolicy &trust) {
  // A FIFO would block the import forever and a device never end.
  llvm::sys::fs::file_status fileStatus;
  if (std::error_code error = llvm::sys::fs::status(file, fileStatus))
    return failure("cannot read '" + file + "': " + error.message());
  if (fileStatus.type() != llvm::sys::fs::file_type::regular_file)
    return failure("cannot read '" + file + "': not a regular file");
  archive *reader = archive_read_new();
  auto release = llvm::make_scope_exit([&] { archive_read_free(reader); });
  // What export writes, no more: an archive is Kiln's own, and each
  // decompressor is code linked into every build of the compiler.
  archive_read_support_filter_zstd(reader);
  archive_read_support_filter_gzip(reader);
  archive_read_support_filter_xz(reader);
  archive_read_support_format_tar(reader);
  if (archive_read_open_filename(reader, file.str().c_str(), 64 * 1024) != ARCHIVE_OK)
    return archiveFailure(reader, "cannot read '" + file +
                                      "' (an export is a tar archive, uncompressed or "
                                      "compressed with zstd, gzip or xz)");
  auto reject = [&](const llvm::Twine &why) {
    return failure("rejected '" + file + "', importing nothing: " + why);
  };

  llvm::Expected<ArchiveMembers> members = readMembers(reader, limits);
  if (!members)
    return reject(llvm::toString(members.takeError()));

  // Who made the entries, before anything in them is believed.
  CheckedArchive checked;
  std::optional<SignedManifest> signedManifest;
  if (!trust.skipSignature) {
    llvm::Expected<SignedManifest> manifest =
        checkSignedManifest(trust, members->manifestText, members->signatureText, members->blobs);
    if (!manifest)
      return reject(llvm::toString(manifest.takeError()));
    signedManifest = std::move(*manifest);
    checked.signer = signedManifest->signer;
  }

  llvm::Expected<std::vector<EntryContents>> entries =
      collectEntries(members->blobs, signedManifest ? &*signedManifest : nullptr);
  if (!entries)
    return reject(llvm::toString(entries.takeError()));
  checked.entries = std::move(*entries);
  return checked;
}

llvm::Expected<ImportReport> importArchive(Cache &cache, const CheckedArchive &archive) {
  // Store through the normal write path, and publish all at once.
  ImportReport report;
  report.signer = archive.signer;
  std::vector<CacheIndex::NewEntry> published;
  if (llvm::Error error = cache.writeAndPublish(archive.entries, &published))
    return error;
  std::set<HexDigest> counted;
  for (const CacheIndex::NewEntry &entry : published)
    for (const BlobPart &blob : storedBlobs(entry.metadata))
      if (counted.insert(blob.digest).second)
        report.bytes += blob.size;
  report.entries = published.size();
  return report;
}

} // namespace kiln::cache
