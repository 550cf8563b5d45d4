//===- cache/entry_metadata.h - What a cache entry holds --------*- C++ -*-===//
//
// Every entry has a small metadata blob of its own, which names the entry's
// key and its other blobs, so that a lost or damaged index can be rebuilt
// from the blobs alone:
//
//   kiln-cache-entry 1
//   {"key":"3f2a...","kind":"cubin","target":"sm_80","name":"kernels.add$0",
//    "created":1732240000,"info":{...},
//    "blobs":[{"role":"cubin","digest":"9c1e...","size":5120}]}
//
// `info` is the driver's own JSON (the kernel's interface, ptxas's resource
// report); the cache keeps it and hands it back.
//
// A blob that contains bytes the caller hands back at lookup (a fat
// binary's images, which its key names) is kept in parts: the bytes around
// them as blobs of their own, the images by digest only ("implied"). A
// read puts the parts together and checks the whole against `digest`:
//
//   {"role":"fatbin","digest":"<whole>","size":9216,
//    "parts":[{"digest":"<header>","size":80},
//             {"digest":"<cubin>","size":5120,"implied":true}, ...]}
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache_key.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cache {

inline constexpr llvm::StringLiteral kMetadataMagic = "kiln-cache-entry 1\n";

struct BlobPart {
  HexDigest digest;
  uint64_t size = 0;
  /// Handed back by the caller at lookup instead of stored with the entry.
  bool implied = false;
};

struct EntryBlob {
  std::string role;
  /// Of the whole blob.
  HexDigest digest;
  uint64_t size = 0;
  /// Empty for a blob stored whole under `digest`; else its bytes, in order.
  std::vector<BlobPart> parts = {};
};

struct EntryMetadata {
  HexDigest key;
  /// "ptx", "llvm", "cubin", "host", "fatbin".
  std::string kind;
  /// "sm_80", "compute_80", or a host triple.
  std::string target;
  /// The kernel's symbol, for `kiln cache list`.
  std::string name;
  int64_t created = 0;
  /// What the entry's kind records beside its blobs (a cubin's resource
  /// usage, a kernel's interface); null for nothing. Kept as parsed, since
  /// a warm build reads it for every hit.
  llvm::json::Value info = nullptr;
  std::vector<EntryBlob> blobs;
};

/// The blob files an entry needs besides its metadata blob: every blob
/// stored whole, and the stored parts of the others, each once.
std::vector<BlobPart> storedBlobs(const EntryMetadata &metadata);

std::string writeMetadata(const EntryMetadata &metadata);

/// Parses a metadata blob; an error for anything else.
llvm::Expected<EntryMetadata> parseMetadata(llvm::StringRef bytes);

inline bool looksLikeMetadata(llvm::StringRef bytes) {
  return bytes.starts_with(kMetadataMagic);
}

} // namespace kiln::cache
