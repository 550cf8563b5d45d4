//===- cache/blob_store.h - Content-addressed, immutable blobs --*- C++ -*-===//
//
// A blob is a file named by the BLAKE3 hash of its bytes:
//
//   <cache>/objects/ab/cdef0123...   (2 + 62 hex digits)
//
// It is written to a temporary file in its own folder and renamed into
// place, so that no process sees a blob half written. It is not fsynced: a
// cache may lose what the last seconds before a machine crash wrote, and
// what a crash leaves cut short or empty, the check of every read (size and
// digest) finds. Blobs are never changed once written; a reader that finds
// one missing (evicted meanwhile) or damaged treats it as a miss, and the
// next store writes it anew.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache_key.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kiln::cache {

enum class BlobStatus { Ok, Missing, Damaged };

class BlobStore {
public:
  /// `root` is the objects/ folder.
  explicit BlobStore(std::string root) : root(std::move(root)) {}

  std::string pathOf(llvm::StringRef digest) const;

  /// Stores `bytes` under `digest` (which must be digestOf(bytes)), unless
  /// an intact copy is there already.
  llvm::Error put(llvm::StringRef digest, llvm::StringRef bytes) const;

  /// Reads the blob into `bytes` and checks its digest (and size, if given).
  BlobStatus read(llvm::StringRef digest, std::string &bytes,
                  std::optional<uint64_t> size = std::nullopt) const;

  bool exists(llvm::StringRef digest) const;

  /// Removes the blob; one that is already gone is no error.
  llvm::Error remove(llvm::StringRef digest) const;

  /// Calls `visit` with every blob's digest and path, and `leftover` with
  /// every other file (temporary files of interrupted writes).
  void forEach(const std::function<void(llvm::StringRef digest, llvm::StringRef path)> &visit,
               const std::function<void(llvm::StringRef path)> &leftover = {}) const;

  const std::string &directory() const { return root; }

private:
  std::string root;
};

} // namespace kiln::cache
