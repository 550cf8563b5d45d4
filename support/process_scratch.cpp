//===- support/process_scratch.cpp - One temporary folder per process ------===//

#include "support/process_scratch.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace kiln::support {

namespace {

// The folder's path, written once before any other thread can see it; the
// signal handler reads it without a lock.
char scratchPath[4096];
std::atomic<bool> scratchCreated{false};

/// Removes what is inside the folder open as `folder`, with raw getdents64
/// (opendir allocates, which a signal handler must not).
void removeContents(int folder, unsigned depth) {
  alignas(8) char buffer[4096];
  bool removedAny = true;
  // Entries removed while listing can shift the listing: list again until
  // a pass removes nothing.
  while (removedAny) {
    removedAny = false;
    ::lseek(folder, 0, SEEK_SET);
    long size;
    while ((size = ::syscall(SYS_getdents64, folder, buffer, sizeof buffer)) > 0) {
      for (long at = 0; at < size;) {
        struct Entry {
          uint64_t inode;
          int64_t offset;
          unsigned short length;
          unsigned char type;
          char name[1];
        };
        const auto *entry = reinterpret_cast<const Entry *>(buffer + at);
        at += entry->length;
        const char *name = entry->name;
        if (!std::strcmp(name, ".") || !std::strcmp(name, ".."))
          continue;
        if (::unlinkat(folder, name, 0) == 0) {
          removedAny = true;
          continue;
        }
        if (depth == 0)
          continue;
        int inner = ::openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (inner < 0)
          continue;
        removeContents(inner, depth - 1);
        ::close(inner);
        if (::unlinkat(folder, name, AT_REMOVEDIR) == 0)
          removedAny = true;
      }
    }
  }
}

void removeAtExit() {
  removeProcessScratchDirectory();
}

// Unfinished files in fixed slots, which the handler reads without locks:
// a slot is free, being filled, or holds a path.
enum SlotState : int { Free, Filling, Holding };
struct UnfinishedFile {
  std::atomic<int> state{Free};
  char path[4096];
};
UnfinishedFile unfinishedFiles[64];

} // namespace

llvm::Expected<std::string> processScratchDirectory() {
  static std::once_flag once;
  static std::error_code failure;
  std::call_once(once, [] {
    llvm::SmallString<128> path;
    failure = llvm::sys::fs::createUniqueDirectory("kiln", path);
    if (failure)
      return;
    // Tools run in folders of their own and are handed paths in here: a
    // relative TMPDIR would make those paths name nothing.
    if (std::error_code error = llvm::sys::fs::make_absolute(path)) {
      failure = error;
      ::rmdir(path.c_str());
      return;
    }
    if (path.size() >= sizeof scratchPath) {
      failure = std::make_error_code(std::errc::filename_too_long);
      ::rmdir(path.c_str());
      return;
    }
    std::memcpy(scratchPath, path.c_str(), path.size() + 1);
    scratchCreated.store(true);
    std::atexit(removeAtExit);
  });
  if (failure)
    return llvm::createStringError(failure, "cannot create a temporary folder: %s",
                                   failure.message().c_str());
  return std::string(scratchPath);
}

void recordUnfinishedFile(llvm::StringRef path) {
  if (path.size() >= sizeof UnfinishedFile::path)
    return;
  for (UnfinishedFile &slot : unfinishedFiles) {
    int expected = Free;
    if (!slot.state.compare_exchange_strong(expected, Filling))
      continue;
    std::memcpy(slot.path, path.data(), path.size());
    slot.path[path.size()] = '\0';
    slot.state.store(Holding);
    return;
  }
  // More files in flight than slots: this one is not removed on a signal.
}

void forgetUnfinishedFile(llvm::StringRef path) {
  for (UnfinishedFile &slot : unfinishedFiles)
    if (slot.state.load() == Holding && path == slot.path) {
      slot.state.store(Free);
      return;
    }
}

void removeUnfinishedFiles() {
  for (UnfinishedFile &slot : unfinishedFiles)
    if (slot.state.load() == Holding)
      ::unlink(slot.path);
}

void removeProcessScratchDirectory() {
  if (!scratchCreated.exchange(false))
    return;
  // Other threads may still be making files in the folder. Renamed, it is
  // out of their way: what they create next fails, as the folder's path no
  // longer exists. What they were creating already may land after a pass,
  // so passes repeat until the folder goes.
  char removed[sizeof scratchPath + 16];
  size_t length = std::strlen(scratchPath);
  std::memcpy(removed, scratchPath, length);
  std::memcpy(removed + length, ".removed", sizeof ".removed");
  const char *folderPath = ::rename(scratchPath, removed) == 0 ? removed : scratchPath;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    int folder = ::open(folderPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder < 0)
      return;
    // Tool runs nest one level: kiln-XXXX/kiln-ptxas-XXXX/kernel.ptx.
    removeContents(folder, 4);
    ::close(folder);
    if (::rmdir(folderPath) == 0 || errno != ENOTEMPTY)
      return;
    struct timespec pause = {0, 1000000};
    ::nanosleep(&pause, nullptr);
  }
}

} // namespace kiln::support
