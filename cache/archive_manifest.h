//===- cache/archive_manifest.h - What an export vouches for ----*- C++ -*-===//
//
// An export's manifest lists every entry it holds, by key, with the digest
// of the entry's metadata blob and of each of its other blobs:
//
//   kiln-cache-manifest 1
//   entry <key> <metadata digest> <blob digest>...
//
// The exporter signs the manifest (cache/signature.h); import accepts an
// archive only if a trusted key signed its manifest and the archive holds
// exactly the blobs the manifest lists, no more and no fewer. So a blob
// changed and re-digested under its entry's original key cannot pass: its
// new digest is not the signed one, and without the private key nobody can
// sign another manifest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache_key.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <vector>

namespace kiln::cache {

/// The archive members that hold the manifest and its signature, beside
/// the blobs' `objects/ab/cdef...`.
inline constexpr llvm::StringLiteral kManifestMember = "manifest";
inline constexpr llvm::StringLiteral kManifestSignatureMember = "manifest.sig";

/// What a signature of a manifest is for; see checkSignature().
inline constexpr llvm::StringLiteral kManifestPurpose = "kiln cache archive manifest 1";

struct ManifestEntry {
  HexDigest key;
  HexDigest metadata;
  /// The entry's blobs besides its metadata, as the metadata lists them.
  std::vector<HexDigest> blobs;
};

std::string writeManifest(llvm::ArrayRef<ManifestEntry> entries);

/// Parses a manifest; an error naming the line for anything malformed, and
/// for a key or metadata digest listed twice.
llvm::Expected<std::vector<ManifestEntry>> parseManifest(llvm::StringRef text);

} // namespace kiln::cache
