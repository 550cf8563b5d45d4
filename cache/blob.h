//===- cache/blob.h - A blob, as the stores see it --------------*- C++ -*-===//
//
// A blob is bytes named by their BLAKE3 digest (cache_key.h). The cache
// keeps the small ones packed in one file (packed_blobs.h) and the others
// a file each (blob_store.h); both check every read against the name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache_key.h"

#include <llvm/ADT/StringRef.h>

namespace kiln::cache {

/// What reading a blob found.
enum class BlobStatus { Ok, Missing, Damaged };

/// A blob to keep: its digest (digestOf(bytes)) and its bytes, which the
/// caller owns.
struct Blob {
  HexDigest digest;
  llvm::StringRef bytes;
};

} // namespace kiln::cache
