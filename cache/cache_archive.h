//===- cache/cache_archive.h - `kiln cache export` and `import` -*- C++ -*-===//
//
// An export is a tar archive (compressed by its name: .tar.zst, .tar.gz,
// .tar.xz; plain .tar otherwise) holding the blobs of every intact entry,
// metadata blobs included, under their cache paths:
//
//   objects/ab/cdef0123...
//
// Import trusts nothing in the archive. It reads it all first, and rejects
// the whole archive, importing nothing, if any member is not a regular file
// at such a path (absolute paths, `..`, links, devices, other names), comes
// twice, is larger than allowed, does not hash to its name, belongs to no
// entry, or if the archive expands to more than the cache may hold or far
// more than its compressed size (a decompression bomb). Only then does it
// store the entries through the normal write path, and publish them in one
// transaction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache.h"

#include <llvm/Support/Error.h>

namespace kiln::cache {

struct ExportReport {
  uint64_t entries = 0;
  uint64_t blobs = 0;
  uint64_t bytes = 0;
  /// Entries left out because their blobs were missing or damaged.
  uint64_t skipped = 0;
};

llvm::Expected<ExportReport> exportCache(Cache &cache, llvm::StringRef file);

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

struct ImportReport {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

llvm::Expected<ImportReport> importCache(Cache &cache, llvm::StringRef file,
                                         const ImportLimits &limits);

} // namespace kiln::cache
