//===- support/nearest_file.cpp -------------------------------------------===//

#include "support/nearest_file.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace kiln::support {

std::string findNearestFile(llvm::StringRef folder, llvm::StringRef name) {
  llvm::SmallString<256> directory(folder.empty() ? "." : folder);
  llvm::sys::fs::make_absolute(directory);
  llvm::sys::path::remove_dots(directory, /*remove_dot_dot=*/true);
  for (;;) {
    llvm::SmallString<256> candidate(directory);
    llvm::sys::path::append(candidate, name);
    if (llvm::sys::fs::is_regular_file(candidate))
      return candidate.str().str();
    llvm::StringRef parent = llvm::sys::path::parent_path(directory);
    if (parent.empty() || parent == directory)
      return "";
    directory = parent;
  }
}

} // namespace kiln::support
