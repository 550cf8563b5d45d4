//===- cache/cache_archive.h - `kiln cache export` and `import` -*- C++ -*-===//
//
// An export is a tar archive (compressed by its name: .tar.zst, .tar.gz,
// .tar.xz; plain .tar otherwise) holding the blobs of every intact entry,
// metadata blobs included, under their cache paths:
//
//   objects/ab/cdef0123...
//
// and beside them the archive's manifest (cache/archive_manifest.h), which
// lists every entry's key and blob digests, and its signature by the
// exporter's key (cache/signature.h):
//
//   manifest
//   manifest.sig
//
// Import trusts nothing in the archive. It reads it all first, and rejects
// the whole archive, importing nothing, if any member is not a regular file
// at such a path (absolute paths, `..`, links, devices, other names), comes
// twice, is larger than allowed, does not hash to its name, belongs to no
// entry, or if the archive expands to more than the cache may hold or far
// more than its compressed size (a decompression bomb). Digests prove only
// that a blob matches its name; what proves that an entry is the compiler's
// output for its key is the signature: unless told to skip it, import also
// rejects an archive that is unsigned, signed by a key it does not trust,
// whose signature does not match its manifest, or whose blobs are not
// exactly those the manifest lists. All of this happens before a cache is
// even opened (readArchive); only then are the entries stored through the
// normal write path and published in one transaction (importArchive).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache.h"
#include "cache/signature.h"
#include "cache/trusted_keys.h"

#include <llvm/Support/Error.h>

#include <optional>
#include <vector>

namespace kiln::cache {

struct ExportReport {
  uint64_t entries = 0;
  uint64_t blobs = 0;
  uint64_t bytes = 0;
  /// Entries left out because their blobs were missing or damaged.
  uint64_t skipped = 0;
  /// The key that signed the manifest; none for an unsigned archive.
  std::optional<PublicKey> signer;
};

/// Writes every intact entry to `file`, its manifest signed by `signer`, or
/// unsigned without one.
llvm::Expected<ExportReport> exportCache(Cache &cache, llvm::StringRef file,
                                         const SigningKey *signer);

struct ImportLimits {
  /// The most a member may hold.
  uint64_t maxMemberBytes = uint64_t(1) << 30;
  /// The most the whole archive may expand to.
  uint64_t maxTotalBytes = uint64_t(2) << 30;
  /// Beyond this many bytes, an archive may expand at most `maxRatio` times
  /// its compressed size.
  uint64_t ratioThreshold = uint64_t(64) << 20;
  uint64_t maxRatio = 200;
};

/// An archive read and checked in full, not stored yet.
struct CheckedArchive {
  std::vector<EntryContents> entries;
  /// The trusted key that signed the archive; none when the check was
  /// skipped.
  std::optional<PublicKey> signer;
};

/// Reads `file` and checks everything in it, touching no cache: an error
/// rejecting the whole archive, or its entries.
llvm::Expected<CheckedArchive> readArchive(llvm::StringRef file, const ImportLimits &limits,
                                           const TrustPolicy &trust);

struct ImportReport {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  /// As the archive's.
  std::optional<PublicKey> signer;
};

/// Stores the entries of a checked archive and publishes them in one
/// transaction.
llvm::Expected<ImportReport> importArchive(Cache &cache, const CheckedArchive &archive);

} // namespace kiln::cache
