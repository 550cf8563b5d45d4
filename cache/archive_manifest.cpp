//===- cache/archive_manifest.cpp -----------------------------------------===//

#include "cache/archive_manifest.h"

#include <llvm/ADT/SmallVector.h>

#include <set>

namespace kiln::cache {

namespace {

constexpr llvm::StringLiteral kMagic = "kiln-cache-manifest 1";

} // namespace

std::string writeManifest(llvm::ArrayRef<ManifestEntry> entries) {
  std::string text = (kMagic + "\n").str();
  for (const ManifestEntry &entry : entries) {
    text += "entry " + entry.key + " " + entry.metadata;
    for (const HexDigest &blob : entry.blobs)
      text += " " + blob;
    text += "\n";
  }
  return text;
}

llvm::Expected<std::vector<ManifestEntry>> parseManifest(llvm::StringRef text) {
  auto malformed = [](size_t line, const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "manifest line " + llvm::Twine(line) + ": " + why);
  };
  if (!text.consume_front(kMagic) || !text.consume_front("\n"))
    return malformed(1, "not '" + kMagic + "'");
  std::vector<ManifestEntry> entries;
  std::set<HexDigest> keys, metadata;
  size_t number = 1;
  while (!text.empty()) {
    ++number;
    size_t end = text.find('\n');
    if (end == llvm::StringRef::npos)
      return malformed(number, "does not end with a newline");
    llvm::StringRef line = text.take_front(end);
    text = text.drop_front(end + 1);
    llvm::SmallVector<llvm::StringRef, 8> fields;
    line.split(fields, ' ');
    if (fields.size() < 3 || fields[0] != "entry")
      return malformed(number, "not 'entry <key> <metadata digest> <blob digest>...'");
    for (llvm::StringRef field : llvm::ArrayRef(fields).drop_front())
      if (!isHexDigest(field))
        return malformed(number, "'" + field + "' is not a digest (64 lowercase hex digits)");
    ManifestEntry entry{fields[1].str(), fields[2].str(), {}};
    for (llvm::StringRef blob : llvm::ArrayRef(fields).drop_front(3))
      entry.blobs.push_back(blob.str());
    if (!keys.insert(entry.key).second)
      return malformed(number, "key " + entry.key.substr(0, 16) + " is listed twice");
    if (!metadata.insert(entry.metadata).second)
      return malformed(number, "metadata " + entry.metadata.substr(0, 16) + " is listed twice");
    entries.push_back(std::move(entry));
  }
  return entries;
}

} // namespace kiln::cache
