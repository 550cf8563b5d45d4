//===- cache/blob_store.h - Content-addressed, immutable blobs --*- C++ -*-===//
//
// A blob is bytes named by the BLAKE3 hash of them. The small ones (at most
// kPackedBlobLimit bytes) are packed, many to a file (packed_blobs.h); each
// other one is a file named by its digest:
//
//   <cache>/objects/packed/blobs.sqlite  the small blobs
//   <cache>/objects/ab/cdef0123...    the others (2 + 62 hex digits)
//
// A blob file is written to a temporary file in its own folder and renamed
// into place, so that no process sees a blob half written. It is not
// fsynced: a cache may lose what the last seconds before a machine crash
// wrote, and what a crash leaves cut short or empty, the check of every
// read (size and digest) finds. Blobs are never changed once written; a
// reader that finds one missing (evicted meanwhile) or damaged treats it as
// a miss, and the next store writes it anew.
//
// A small blob is looked for packed first, then as a file: a cache from
// before packing keeps its small blobs as files, and they are read as such.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/blob.h"
#include "cache/packed_blobs.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kiln::cache {

class BlobStore {
public:
  /// `root` is the objects/ folder; `packed` keeps the small blobs (none:
  /// a read-only cache from before packing, whose blobs are all files).
  BlobStore(std::string root, std::unique_ptr<PackedBlobs> packed)
      : root(std::move(root)), packed(std::move(packed)) {}

  /// Where the small blobs go: objects/packed/blobs.sqlite.
  static std::string packedPath(llvm::StringRef root);

  /// Stores every blob of `blobs` (each digest digestOf(bytes)), unless an
  /// intact copy is there already; the small ones in one transaction.
  llvm::Error putAll(llvm::ArrayRef<Blob> blobs) const;
  /// Writes those of `blobs` that are not there (garbage collection deleted
  /// them since putAll): the index calls it under its write lock.
  llvm::Error ensureAll(llvm::ArrayRef<Blob> blobs) const;

  /// Reads the blob into `bytes` and checks its digest (and size, if given).
  BlobStatus read(llvm::StringRef digest, std::string &bytes,
                  std::optional<uint64_t> size = std::nullopt) const;

  /// The blob's size, if it is there.
  std::optional<uint64_t> sizeOf(llvm::StringRef digest) const;
  /// Whether the blob is there and starts with `prefix`, reading no more
  /// of it than that.
  bool startsWith(llvm::StringRef digest, llvm::StringRef prefix) const;

  /// Removes the blob; one that is already gone is no error.
  llvm::Error remove(llvm::StringRef digest) const;
  /// Removes the blobs `digests`, the packed ones in one transaction.
  llvm::Error removeAll(llvm::ArrayRef<std::string> digests) const;
  /// Removes every blob.
  llvm::Error clear() const;

  /// Calls `visit` with every blob's digest, once, and `leftover` with
  /// every other file (temporary files of interrupted writes).
  void forEach(const std::function<void(llvm::StringRef digest)> &visit,
               const std::function<void(llvm::StringRef path)> &leftover = {}) const;

  /// The packed blobs, if there are any.
  PackedBlobs *packedBlobs() const { return packed.get(); }
  const std::string &directory() const { return root; }

private:
  std::string pathOf(llvm::StringRef digest) const;
  /// Stores one blob as a file, unless an intact copy is there already.
  llvm::Error putFile(llvm::StringRef digest, llvm::StringRef bytes) const;
  /// Calls `visit` with every blob file's digest and path, `leftover` with
  /// every other file.
  void forEachFile(const std::function<void(llvm::StringRef digest, llvm::StringRef path)> &visit,
                   const std::function<void(llvm::StringRef path)> &leftover) const;
  bool isPacked(uint64_t size) const { return packed && size <= kPackedBlobLimit; }

  std::string root;
  std::unique_ptr<PackedBlobs> packed;
};

} // namespace kiln::cache
