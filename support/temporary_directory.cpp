//===- support/temporary_directory.cpp - Scratch space for tool runs ------===//

#include "support/temporary_directory.h"

#include "support/process_scratch.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::support {

llvm::Expected<TemporaryDirectory> TemporaryDirectory::create(llvm::StringRef prefix) {
  llvm::Expected<std::string> root = processScratchDirectory();
  if (!root)
    return root.takeError();
  llvm::SmallString<128> model(*root), path;
  llvm::sys::path::append(model, prefix);
  if (std::error_code error = llvm::sys::fs::createUniqueDirectory(model, path))
    return llvm::createStringError(error, "cannot create a temporary directory for %s: %s",
                                   prefix.str().c_str(), error.message().c_str());
  return TemporaryDirectory(std::string(path));
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory &&other) noexcept
    : directory(std::move(other.directory)) {
  other.directory.clear();
}

TemporaryDirectory &TemporaryDirectory::operator=(TemporaryDirectory &&other) noexcept {
  if (this != &other) {
    if (!directory.empty())
      llvm::sys::fs::remove_directories(directory);
    directory = std::move(other.directory);
    other.directory.clear();
  }
  return *this;
}

TemporaryDirectory::~TemporaryDirectory() {
  if (!directory.empty())
    llvm::sys::fs::remove_directories(directory);
}

std::string TemporaryDirectory::file(llvm::StringRef name) const {
  llvm::SmallString<128> path(directory);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

llvm::Error TemporaryDirectory::write(llvm::StringRef name, llvm::StringRef contents) const {
  std::string path = file(name);
  std::error_code error;
  llvm::raw_fd_ostream stream(path, error, llvm::sys::fs::OF_None);
  if (!error) {
    stream << contents;
    stream.close();
    // A stream destroyed with an error pending aborts the process.
    error = stream.error();
    stream.clear_error();
  }
  if (error)
    return llvm::createStringError(error, "%s: %s", path.c_str(), error.message().c_str());
  return llvm::Error::success();
}

llvm::Expected<std::string> TemporaryDirectory::read(llvm::StringRef name) const {
  return readFileBytes(file(name));
}

llvm::Expected<std::string> readFileBytes(llvm::StringRef path) {
  // A device or a pipe may never end (/dev/zero) or block forever (a FIFO
  // without a writer): only regular files are read.
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return llvm::createStringError(error, "cannot read '%s': %s", path.str().c_str(),
                                   error.message().c_str());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   "cannot read '%s': not a regular file", path.str().c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  return (*buffer)->getBuffer().str();
}

} // namespace kiln::support
