//===- cache/remote/remote_entry.h - A cache entry as one object -*- C++ -*-===//
//
// A remote keeps one object per cache key: the entry's metadata (the same
// text as the local metadata blob, cache/entry_metadata.h, which names the
// key and the digest and size of every blob), its blobs, and the builder's
// signature of the metadata:
//
//   kiln-remote-entry 1\n
//   <signature line (cache/signature.h)> | unsigned\n
//   <metadata size in bytes>\n
//   <metadata><blob 1><blob 2>...
//
// A remote is trusted for nothing. Decoding checks that the object is for
// the key asked for (a server that answers with another key's object is
// caught), that every blob matches its digest, and that a key the reader
// trusts signed the metadata; anything else is a rejection with a reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache.h"
#include "cache/signature.h"
#include "cache/trusted_keys.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cache::remote {

/// What a signature over a remote entry's metadata is for; see
/// cache/signature.h on purposes.
inline constexpr llvm::StringLiteral kRemoteEntryPurpose = "kiln remote cache entry";

/// The object for `contents`, signed by `signer` (null: unsigned).
llvm::Expected<std::string> encodeRemoteEntry(const EntryContents &contents,
                                              const SigningKey *signer);

/// The entry in `object`, which the remote returned for `key`, if it is
/// intact, for `key`, and signed as `trust` demands; otherwise an error
/// saying why it is rejected.
llvm::Expected<CachedEntry> decodeRemoteEntry(llvm::StringRef key, llvm::StringRef object,
                                              const TrustPolicy &trust);

} // namespace kiln::cache::remote
