//===- support/replace_file.cpp -------------------------------------------===//

#include "support/replace_file.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::support {

namespace fs = llvm::sys::fs;

static llvm::Error cannot(llvm::StringRef verb, llvm::StringRef path, std::error_code error) {
  return llvm::createStringError(error, "cannot " + verb + " '" + path + "': " + error.message());
}

llvm::Error replaceFile(llvm::StringRef path, llvm::StringRef bytes,
                        const ReplaceFileOptions &options) {
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (options.createFolders && !folder.empty() && !fs::exists(folder))
    if (std::error_code error = fs::create_directories(folder))
      return cannot("create", folder, error);

  // Hidden, and named after the file, so that a folder listing taken while
  // it exists shows what it is for.
  llvm::SmallString<256> model(folder);
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path) + ".tmp-%%%%%%");
  llvm::SmallString<256> temporary;
  int descriptor = -1;
  if (std::error_code error = fs::createUniqueFile(model, descriptor, temporary, fs::OF_None,
                                                   fs::all_read | fs::all_write))
    return cannot("write", path, error);
  auto removeTemporary = llvm::make_scope_exit([&] { fs::remove(temporary); });
  {
    llvm::raw_fd_ostream output(descriptor, /*shouldClose=*/true);
    output << bytes;
    output.close();
    if (output.has_error()) {
      std::error_code error = output.error();
      output.clear_error();
      return cannot("write", path, error);
    }
  }
  fs::file_status existing;
  if (!fs::status(path, existing) && fs::exists(existing))
    fs::setPermissions(temporary, existing.permissions());
  else if (options.newFileMode)
    fs::setPermissions(temporary, static_cast<fs::perms>(*options.newFileMode & 07777));
  if (std::error_code error = fs::rename(temporary, path))
    return cannot("write", path, error);
  removeTemporary.release();
  return llvm::Error::success();
}

} // namespace kiln::support
