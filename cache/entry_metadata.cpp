//===- cache/entry_metadata.cpp -------------------------------------------===//

#include "cache/entry_metadata.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <set>

namespace kiln::cache {

namespace {

/// The deepest nesting of arrays and objects a metadata blob may have: ours
/// nest four levels. LLVM's JSON parser recurses once per level, so a blob
/// of 100,000 brackets, which anyone who can write the cache folder can
/// plant, would overflow the stack; such a blob is a damaged entry.
constexpr unsigned MetadataNestingLimit = 64;

/// Whether the JSON text `text` nests arrays and objects at most `limit`
/// deep (brackets inside strings do not count).
bool nestsAtMost(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return false;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return true;
}

} // namespace

std::vector<BlobPart> storedBlobs(const EntryMetadata &metadata) {
  std::vector<BlobPart> files;
  std::set<llvm::StringRef> seen;
  auto add = [&](const HexDigest &digest, uint64_t size) {
    if (seen.insert(digest).second)
      files.push_back({digest, size, false});
  };
  for (const EntryBlob &blob : metadata.blobs) {
    if (blob.parts.empty())
      add(blob.digest, blob.size);
    for (const BlobPart &part : blob.parts)
      if (!part.implied)
        add(part.digest, part.size);
  }
  return files;
}

std::string writeMetadata(const EntryMetadata &metadata) {
  // Written as a stream, in the order llvm::json::Value prints objects
  // (keys sorted), with `info` as the JSON text it already is: parsing it
  // into values only to print them again took a build served by a remote
  // most of the time it spent keeping its entries.
  std::string text = kMetadataMagic.str();
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  json.object([&] {
    json.attributeArray("blobs", [&] {
      for (const EntryBlob &blob : metadata.blobs)
        json.object([&] {
          json.attribute("digest", blob.digest);
          if (!blob.parts.empty())
            json.attributeArray("parts", [&] {
              for (const BlobPart &part : blob.parts)
                json.object([&] {
                  json.attribute("digest", part.digest);
                  if (part.implied)
                    json.attribute("implied", true);
                  json.attribute("size", part.size);
                });
            });
          json.attribute("role", blob.role);
          json.attribute("size", blob.size);
        });
    });
    json.attribute("created", metadata.created);
    json.attribute("info", metadata.info);
    json.attribute("key", metadata.key);
    json.attribute("kind", metadata.kind);
    json.attribute("name", metadata.name);
    json.attribute("target", metadata.target);
  });
  os << '\n';
  return text;
}

llvm::Expected<EntryMetadata> parseMetadata(llvm::StringRef bytes) {
  auto bad = [](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "not a cache entry's metadata: " + why);
  };
  if (!looksLikeMetadata(bytes))
    return bad("no 'kiln-cache-entry 1' header");
  llvm::StringRef json = bytes.drop_front(kMetadataMagic.size());
  if (!nestsAtMost(json, MetadataNestingLimit))
    return bad(llvm::formatv("it nests deeper than {0} levels", MetadataNestingLimit));
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value)
    return bad(llvm::toString(value.takeError()));
  llvm::json::Object *object = value->getAsObject();
  if (!object)
    return bad("not a JSON object");
  EntryMetadata metadata;
  auto text = [&](llvm::StringRef name, std::string &out) {
    std::optional<llvm::StringRef> field = object->getString(name);
    if (!field)
      return false;
    out = field->str();
    return true;
  };
  if (!text("key", metadata.key) || !isHexDigest(metadata.key) || !text("kind", metadata.kind) ||
      !text("target", metadata.target) || !text("name", metadata.name))
    return bad("a field is missing");
  metadata.created = object->getInteger("created").value_or(0);
  if (llvm::json::Value *info = object->get("info"))
    metadata.info = std::move(*info);
  const llvm::json::Array *blobs = object->getArray("blobs");
  if (!blobs || blobs->empty())
    return bad("no blobs");
  for (const llvm::json::Value &item : *blobs) {
    const llvm::json::Object *blob = item.getAsObject();
    std::optional<llvm::StringRef> role = blob ? blob->getString("role") : std::nullopt;
    std::optional<llvm::StringRef> digest = blob ? blob->getString("digest") : std::nullopt;
    std::optional<int64_t> size = blob ? blob->getInteger("size") : std::nullopt;
    if (!role || !digest || !isHexDigest(*digest) || !size || *size < 0)
      return bad("a blob is not described");
    EntryBlob entry{role->str(), digest->str(), static_cast<uint64_t>(*size), {}};
    if (const llvm::json::Value *partsField = blob->get("parts")) {
      const llvm::json::Array *list = partsField->getAsArray();
      if (!list || list->empty())
        return bad("a blob's parts are not a list");
      uint64_t total = 0;
      for (const llvm::json::Value &partValue : *list) {
        const llvm::json::Object *part = partValue.getAsObject();
        std::optional<llvm::StringRef> partDigest = part ? part->getString("digest") : std::nullopt;
        std::optional<int64_t> partSize = part ? part->getInteger("size") : std::nullopt;
        if (!partDigest || !isHexDigest(*partDigest) || !partSize || *partSize < 0)
          return bad("a blob's part is not described");
        entry.parts.push_back({partDigest->str(), static_cast<uint64_t>(*partSize),
                               part->getBoolean("implied").value_or(false)});
        total += static_cast<uint64_t>(*partSize);
      }
      if (total != entry.size)
        return bad("a blob's parts do not add up to its size");
    }
    metadata.blobs.push_back(std::move(entry));
  }
  return metadata;
}

} // namespace kiln::cache
