//===- backend/host/host_library.cpp - Linking host code into a library --------===//

#include "backend/host/host_library.h"

#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lld/Common/Driver.h>
#include <mutex>
#include <thread>
#include <unistd.h>

LLD_HAS_DRIVER(elf)

namespace kiln::backend {

namespace {

llvm::Error pipeError(const char *what) {
  int error = errno;
  return llvm::createStringError(std::error_code(error, std::generic_category()),
                                 "cannot link a shared library: %s: %s", what,
                                 std::strerror(error));
}

} // namespace

llvm::Expected<std::string> linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths) {
  // LLD writes a regular file through a memory map, and a full disk then
  // kills the process with SIGBUS; a failed write of its unmapped output
  // aborts it. Writing into a pipe, LLD keeps the output in memory and
  // hands it over whole; the caller writes it with checked writes.
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    return pipeError("pipe");
  std::string library;
  int readError = 0;
  std::thread reader([&] {
    char buffer[1 << 16];
    while (true) {
      ssize_t count = ::read(ends[0], buffer, sizeof buffer);
      if (count > 0)
        library.append(buffer, static_cast<size_t>(count));
      else if (count == 0 || errno != EINTR) {
        readError = count == 0 ? 0 : errno;
        return;
      }
    }
  });
  std::string output = "/proc/self/fd/" + std::to_string(ends[1]);
  std::string messages;
  int linkStatus;
  {
    // LLD keeps global state while it links: one link at a time.
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    // One thread: a module's objects are small, and starting LLD's thread
    // pool would take longer than the link (twice as long in all).
    std::vector<const char *> arguments = {"ld.lld", "--threads=1", "-shared", "--build-id=none",
                                           "-z",     "noexecstack", "-o",      output.c_str()};
    for (const std::string &path : objectPaths)
      arguments.push_back(path.c_str());
    llvm::raw_string_ostream stream(messages);
    linkStatus = lld::lldMain(arguments, stream, stream, {{lld::Gnu, &lld::elf::link}}).retCode;
  }
  // The reader sees the end of the output once the last writing end closes.
  ::close(ends[1]);
  reader.join();
  ::close(ends[0]);
  if (linkStatus != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot link a shared library: " +
                                       llvm::StringRef(messages).trim().str());
  if (readError)
    return llvm::createStringError(std::error_code(readError, std::generic_category()),
                                   "cannot link a shared library: reading LLD's output: %s",
                                   std::strerror(readError));
  return library;
}

} // namespace kiln::backend
