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
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache_key.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cache {

inline constexpr llvm::StringLiteral kMetadataMagic = "kiln-cache-entry 1\n";

struct EntryBlob {
  std::string role;
  HexDigest digest;
  uint64_t size = 0;
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
  /// JSON text.
  std::string info;
  std::vector<EntryBlob> blobs;
};

std::string writeMetadata(const EntryMetadata &metadata);

/// Parses a metadata blob; an error for anything else.
llvm::Expected<EntryMetadata> parseMetadata(llvm::StringRef bytes);

inline bool looksLikeMetadata(llvm::StringRef bytes) {
  return bytes.starts_with(kMetadataMagic);
}

} // namespace kiln::cache
