//===- frontend/source/source_manager.cpp ----------------------------------------===//

#include "frontend/source/source_manager.h"

#include <algorithm>
#include <cassert>

namespace kiln {

uint32_t SourceManager::addFile(std::string path, std::string contents) {
  auto file = std::make_unique<File>();
  file->path = std::move(path);
  file->contents = std::move(contents);
  file->lineStarts.push_back(0);
  const std::string &text = file->contents;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
      file->lineStarts.push_back(static_cast<uint32_t>(i + 1));
  }
  files.push_back(std::move(file));
  return static_cast<uint32_t>(files.size());
}

llvm::StringRef SourceManager::textOf(SourceRange range) const {
  if (!range.isValid() || range.end.file != range.begin.file)
    return {};
  llvm::StringRef text = contents(range.begin.file);
  return text.slice(range.begin.offset, range.end.offset);
}

LineColumn SourceManager::lineColumn(SourceLoc loc) const {
  if (!loc.isValid())
    return {};
  const File &file = fileAt(loc.file);
  auto next = std::upper_bound(file.lineStarts.begin(), file.lineStarts.end(), loc.offset);
  unsigned line = static_cast<unsigned>(next - file.lineStarts.begin());
  uint32_t start = file.lineStarts[line - 1];
  uint32_t offset = std::min<uint32_t>(loc.offset, file.contents.size());
  llvm::StringRef prefix = llvm::StringRef(file.contents).slice(start, offset);
  return {line, countCodePoints(prefix) + 1};
}

uint32_t SourceManager::lineStart(uint32_t file, unsigned line) const {
  const File &f = fileAt(file);
  assert(line >= 1 && line <= f.lineStarts.size() && "line out of range");
  return f.lineStarts[line - 1];
}

llvm::StringRef SourceManager::lineText(uint32_t file, unsigned line) const {
  const File &f = fileAt(file);
  if (line < 1 || line > f.lineStarts.size())
    return {};
  llvm::StringRef rest = llvm::StringRef(f.contents).substr(f.lineStarts[line - 1]);
  return rest.take_until([](char c) { return c == '\n' || c == '\r'; });
}

unsigned countCodePoints(llvm::StringRef text) {
  unsigned count = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++count;
  return count;
}

} // namespace kiln
