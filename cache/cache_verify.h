//===- cache/cache_verify.h - `kiln cache verify [--repair]` ----*- C++ -*-===//
//
// Checks that index and blobs agree: the index and the packed blobs pass
// SQLite's integrity check; every entry's metadata and blobs are there,
// intact, of the size recorded. Problems are what a lookup would find
// damaged. Leftovers are harmless: blobs of no entry, whole entries missing
// from the index and temporary files, which a build killed between writing
// blobs and publishing its entry leaves, and which no lookup ever reads.
// With `repair`, damaged packed blobs are moved aside, entries with missing
// or damaged blobs are dropped (damaged blobs deleted), intact entries
// missing from the index are added back from their metadata, and blobs of
// no entry are deleted, all under the index's write lock so that concurrent
// builds are safe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/cache.h"

#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::cache {

struct VerifyReport {
  uint64_t entries = 0;
  uint64_t blobs = 0;
  std::vector<std::string> problems;
  std::vector<std::string> leftovers;
  std::vector<std::string> repairs;
};

llvm::Expected<VerifyReport> verifyCache(Cache &cache, bool repair);

} // namespace kiln::cache
