//===- cache/cache_key.h - Cache keys and content digests -------*- C++ -*-===//
//
// A cache key is the BLAKE3 hash of named fields, each written as
// "name=<length>:value;" so that no two field lists hash alike. The driver
// (pipeline/build_cache.h) decides the fields: the compiler's identity, the
// target, the options that change code, the signature and the front end's
// semantic hash. Blobs are named by the BLAKE3 hash of their bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/BLAKE3.h>

#include <cstdint>
#include <string>

namespace kiln::cache {

/// 64 lowercase hex digits.
using HexDigest = std::string;

/// The BLAKE3 hash of `bytes`, in hex.
HexDigest digestOf(llvm::StringRef bytes);

/// Whether `text` is 64 lowercase hex digits.
bool isHexDigest(llvm::StringRef text);

class KeyBuilder {
public:
  KeyBuilder();
  KeyBuilder &add(llvm::StringRef name, llvm::StringRef value);
  KeyBuilder &add(llvm::StringRef name, uint64_t value);
  HexDigest finish();

private:
  llvm::BLAKE3 hasher;
};

/// The versions of what compiles: Kiln, LLVM, and the CUDA toolkit (empty
/// for host code). KILN_CACHE_TEST_KILN_VERSION and
/// KILN_CACHE_TEST_LLVM_VERSION replace the first two, for the cache's
/// tests only.
struct CompilerIdentity {
  std::string kiln;
  std::string llvm;
  std::string cuda;

  static CompilerIdentity current(llvm::StringRef kilnVersion, llvm::StringRef cudaVersion);
  void addTo(KeyBuilder &key) const;
};

} // namespace kiln::cache
