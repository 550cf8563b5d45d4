//===- cache/database_repair.cpp ------------------------------------------===//

#include "cache/database_repair.h"

#include "cache/cache_index.h"

#include <llvm/Support/FormatVariadic.h>

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace kiln::cache {

RepairLock::RepairLock(llvm::StringRef directory) {
  std::string path = (directory + "/repair.lock").str();
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0)
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
}

RepairLock::~RepairLock() {
  if (fd >= 0)
    ::close(fd);
}

llvm::Expected<std::string> moveDatabaseAside(llvm::StringRef path) {
  std::string from = path.str();
  std::string aside = llvm::formatv("{0}.damaged-{1}-{2}", from, unixNow(), ::getpid()).str();
  if (::rename(from.c_str(), aside.c_str()) != 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   "cannot move the damaged database '" + from + "' aside");
  for (const char *suffix : {"-wal", "-shm", "-journal"})
    ::rename((from + suffix).c_str(), (aside + suffix).c_str());
  return aside;
}

} // namespace kiln::cache
