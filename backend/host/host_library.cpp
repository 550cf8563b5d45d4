//===- backend/host/host_library.cpp - Linking host code into a library --------===//

#include "backend/host/host_library.h"

#include <llvm/Support/FormatVariadic.h>
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

/// Writes all of `bytes` to `fd`; false with errno set when it cannot.
bool writeAll(int fd, const char *bytes, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

} // namespace

llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths, llvm::StringRef libraryPath,
                              llvm::ArrayRef<AbsoluteSymbol> symbols) {
  // LLD writes a regular file through a memory map, and a full disk then
  // kills the process with SIGBUS; a failed write of its unmapped output
  // aborts it. Writing into a pipe, LLD keeps the output in memory and
  // hands it over; a thread copies it into the file with checked writes,
  // a chunk at a time, and after a failed write drains the pipe so that
  // LLD can finish.
  int file = ::open(libraryPath.str().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (file < 0)
    return pipeError("creating the library's scratch file");
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    llvm::Error error = pipeError("pipe");
    ::close(file);
    return error;
  }
  int readError = 0, writeError = 0;
  std::thread reader([&] {
    char buffer[1 << 16];
    while (true) {
      ssize_t count = ::read(ends[0], buffer, sizeof buffer);
      if (count > 0) {
        if (!writeError && !writeAll(file, buffer, static_cast<size_t>(count)))
          writeError = errno ? errno : EIO;
      } else if (count == 0 || errno != EINTR) {
        readError = count == 0 ? 0 : errno;
        return;
      }
    }
  });
  std::string output = "/proc/self/fd/" + std::to_string(ends[1]);
  std::vector<std::string> definitions;
  for (const AbsoluteSymbol &symbol : symbols)
    definitions.push_back(llvm::formatv("--defsym={0}={1:x}", symbol.name, symbol.value).str());
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
    for (const std::string &definition : definitions)
      arguments.push_back(definition.c_str());
    for (const std::string &path : objectPaths)
      arguments.push_back(path.c_str());
    llvm::raw_string_ostream stream(messages);
    linkStatus = lld::lldMain(arguments, stream, stream, {{lld::Gnu, &lld::elf::link}}).retCode;
  }
  // The reader sees the end of the output once the last writing end closes.
  ::close(ends[1]);
  reader.join();
  ::close(ends[0]);
  if (::close(file) != 0 && !writeError)
    writeError = errno;
  if (linkStatus != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot link a shared library: " +
                                       llvm::StringRef(messages).trim().str());
  if (readError)
    return llvm::createStringError(std::error_code(readError, std::generic_category()),
                                   "cannot link a shared library: reading LLD's output: %s",
                                   std::strerror(readError));
  if (writeError)
    return llvm::createStringError(std::error_code(writeError, std::generic_category()),
                                   "cannot link a shared library: writing '%s': %s",
                                   libraryPath.str().c_str(), std::strerror(writeError));
  return llvm::Error::success();
}

} // namespace kiln::backend
