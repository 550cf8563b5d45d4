//===- pipeline/output_file.cpp - Writing a file a build produces ----------===//

#include "pipeline/output_file.h"

#include "support/process_scratch.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace kiln::pipeline {

namespace {

llvm::Error pathError(llvm::StringRef path, int error) {
  return llvm::createStringError(std::error_code(error, std::generic_category()), "%s: %s",
                                 path.str().c_str(), std::strerror(error));
}

/// Writes every byte to `descriptor` and closes it: the errno of the first
/// failure, or 0.
int writeAndClose(int descriptor, llvm::StringRef bytes) {
  int error = 0;
  for (size_t done = 0; done < bytes.size();) {
    ssize_t count = ::write(descriptor, bytes.data() + done, bytes.size() - done);
    if (count < 0 && errno == EINTR)
      continue;
    if (count <= 0) {
      error = count < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(count);
  }
  // Some file systems (NFS) report a failed write only at close.
  if (::close(descriptor) != 0 && !error)
    error = errno;
  return error;
}

} // namespace

llvm::Error writeOutputFile(llvm::StringRef path, llvm::StringRef bytes, bool executable) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file &&
      status.type() != llvm::sys::fs::file_type::file_not_found) {
    int descriptor = ::open(path.str().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (descriptor < 0)
      return pathError(path, errno);
    if (int error = writeAndClose(descriptor, bytes))
      return pathError(path, error);
    return llvm::Error::success();
  }
  llvm::SmallString<256> model(path), temporary;
  model += ".tmp-%%%%%%";
  int descriptor = -1;
  unsigned mode = llvm::sys::fs::all_read | llvm::sys::fs::all_write |
                  (executable ? llvm::sys::fs::all_exe : 0);
  if (std::error_code error = llvm::sys::fs::createUniqueFile(model, descriptor, temporary,
                                                              llvm::sys::fs::OF_None, mode))
    return pathError(path, error.value());
  // Interrupted, the build leaves no half-written file beside its outputs.
  support::recordUnfinishedFile(temporary);
  int error = writeAndClose(descriptor, bytes);
  if (!error && ::rename(temporary.c_str(), path.str().c_str()) != 0)
    error = errno;
  if (error)
    ::unlink(temporary.c_str());
  support::forgetUnfinishedFile(temporary);
  if (error)
    return pathError(path, error);
  return llvm::Error::success();
}

} // namespace kiln::pipeline
