//===- backend/cuda_tools/toolkit_version_memo.cpp ------------------------------===//
//
// The file: {"ptxas": [{"path": P, "size": N, "modified": NS, "inode": I,
// "version": V}, ...]},
// the most recently asked ptxas first.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/toolkit_version_memo.h"

#include "support/replace_file.h"
#include "support/temporary_directory.h"

#include <llvm/Support/Chrono.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::cuda_tools {

namespace {

/// What identifies a ptxas file as the one that was asked.
struct FileIdentity {
  int64_t size = 0;
  int64_t modified = 0; // nanoseconds since the epoch
  int64_t inode = 0;
};

} // namespace

static std::optional<FileIdentity> identify(llvm::StringRef file) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(file, status))
    return std::nullopt;
  return FileIdentity{static_cast<int64_t>(status.getSize()),
                      static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               status.getLastModificationTime().time_since_epoch())
                                               .count()),
                      static_cast<int64_t>(status.getUniqueID().getFile())};
}

/// The memo's entries, or none where the file is missing or damaged.
static llvm::json::Array readEntries(llvm::StringRef path) {
  llvm::Expected<std::string> text = support::readFileBytes(path);
  if (!text) {
    llvm::consumeError(text.takeError());
    return {};
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return {};
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *entries = root ? root->getArray("ptxas") : nullptr;
  return entries ? *entries : llvm::json::Array();
}

static bool describes(const llvm::json::Value &entry, llvm::StringRef ptxas) {
  const llvm::json::Object *fields = entry.getAsObject();
  return fields && fields->getString("path") == ptxas;
}

std::optional<CudaVersion> ToolkitVersionMemo::recall(llvm::StringRef ptxas) const {
  std::optional<FileIdentity> identity = identify(ptxas);
  if (!identity)
    return std::nullopt;
  for (const llvm::json::Value &entry : readEntries(path)) {
    if (!describes(entry, ptxas))
      continue;
    const llvm::json::Object &fields = *entry.getAsObject();
    if (fields.getInteger("size") != identity->size ||
        fields.getInteger("modified") != identity->modified ||
        fields.getInteger("inode") != identity->inode)
      return std::nullopt;
    std::optional<llvm::StringRef> version = fields.getString("version");
    return version ? parseCudaVersion(*version) : std::nullopt;
  }
  return std::nullopt;
}

void ToolkitVersionMemo::remember(llvm::StringRef ptxas, const CudaVersion &version) const {
  std::optional<FileIdentity> identity = identify(ptxas);
  if (!identity)
    return;
  llvm::json::Array entries;
  entries.push_back(llvm::json::Object{{"path", ptxas},
                                       {"size", identity->size},
                                       {"modified", identity->modified},
                                       {"inode", identity->inode},
                                       {"version", version.str()}});
  for (llvm::json::Value &entry : readEntries(path))
    if (entries.size() < capacity && entry.getAsObject() && !describes(entry, ptxas))
      entries.push_back(std::move(entry));

  // The cache makes its folder when it opens, after the toolkit is found:
  // a first build makes it here. A memo that cannot be written only means
  // asking ptxas again.
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << llvm::json::Value(llvm::json::Object{{"ptxas", std::move(entries)}}) << "\n";
  support::ReplaceFileOptions options;
  options.createFolders = true;
  llvm::consumeError(support::replaceFile(path, text, options));
}

} // namespace kiln::cuda_tools
