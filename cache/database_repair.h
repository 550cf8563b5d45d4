//===- cache/database_repair.h - Moving a damaged file aside ----*- C++ -*-===//
//
// A SQLite file of the cache that is damaged (the index, or the packed
// blobs) is moved aside, to <file>.damaged-<time>-<pid> with its journal
// files, and a new one made. One process repairs at a time, holding an
// exclusive lock on <cache>/repair.lock; the others, once they hold it in
// turn, find the file repaired.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cache {

/// The cache's repair lock, held from construction to destruction.
class RepairLock {
public:
  /// Waits for the lock on `directory`/repair.lock (creating the file); a
  /// file that cannot be opened leaves the lock untaken.
  explicit RepairLock(llvm::StringRef directory);
  ~RepairLock();
  RepairLock(const RepairLock &) = delete;
  RepairLock &operator=(const RepairLock &) = delete;

private:
  int fd = -1;
};

/// Moves the database `path` and its -wal, -shm and -journal files aside;
/// returns where the database went.
llvm::Expected<std::string> moveDatabaseAside(llvm::StringRef path);

} // namespace kiln::cache
