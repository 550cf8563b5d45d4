//===- frontend/source/source_file.cpp - Reading a source file -------------===//

#include "frontend/source/source_file.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

namespace kiln {

llvm::ErrorOr<std::string> readSourceFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return error;
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return std::make_error_code(std::errc::invalid_argument);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return buffer.getError();
  return (*buffer)->getBuffer().str();
}

std::string readErrorMessage(std::error_code error) {
  if (error == std::errc::invalid_argument)
    return "not a regular file";
  return error.message();
}

} // namespace kiln
