//===- cache/remote/remote_entry.cpp --------------------------------------===//

#include "cache/remote/remote_entry.h"

#include "cache/cache_index.h"

namespace kiln::cache::remote {

namespace {

constexpr llvm::StringLiteral kMagic = "kiln-remote-entry 1\n";
constexpr llvm::StringLiteral kUnsigned = "unsigned";

llvm::Error rejected(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

/// The next line of `text` without its '\n'; nothing if there is no '\n'
/// within `limit` bytes.
std::optional<llvm::StringRef> takeLine(llvm::StringRef &text, size_t limit) {
  size_t end = text.take_front(limit).find('\n');
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef line = text.take_front(end);
  text = text.drop_front(end + 1);
  return line;
}

} // namespace

llvm::Expected<std::string> encodeRemoteEntry(const EntryContents &contents,
                                              const SigningKey *signer) {
  EntryMetadata metadata{
      contents.key, contents.kind, contents.target, contents.name, unixNow(), contents.info, {}};
  for (const auto &[role, bytes] : contents.blobs)
    metadata.blobs.push_back({role, digestOf(bytes), bytes.size(), {}});
  std::string metadataText = writeMetadata(metadata);
  std::string signatureLine = kUnsigned.str();
  if (signer) {
    llvm::Expected<Signature> signature = signer->sign(kRemoteEntryPurpose, metadataText);
    if (!signature)
      return signature.takeError();
    signatureLine = llvm::StringRef(signature->text()).rtrim('\n').str();
  }
  std::string object = kMagic.str() + signatureLine + "\n" + std::to_string(metadataText.size()) +
                       "\n" + metadataText;
  for (const auto &[role, bytes] : contents.blobs)
    object += bytes;
  return object;
}

llvm::Expected<CachedEntry> decodeRemoteEntry(llvm::StringRef key, llvm::StringRef object,
                                              const TrustPolicy &trust) {
  if (!object.consume_front(kMagic))
    return rejected("it is not a Kiln remote cache entry");
  std::optional<llvm::StringRef> signatureLine = takeLine(object, 4096);
  std::optional<llvm::StringRef> sizeLine = takeLine(object, 32);
  uint64_t metadataSize = 0;
  if (!signatureLine || !sizeLine || sizeLine->getAsInteger(10, metadataSize) ||
      metadataSize > object.size())
    return rejected("its header is damaged");
  llvm::StringRef metadataText = object.take_front(metadataSize);
  llvm::StringRef payload = object.drop_front(metadataSize);

  llvm::Expected<EntryMetadata> metadata = parseMetadata(metadataText);
  if (!metadata)
    return rejected("its metadata is damaged (" + llvm::toString(metadata.takeError()) + ")");
  if (metadata->key != key)
    return rejected("it is the entry of another key (" +
                    llvm::StringRef(metadata->key).take_front(16) + "...)");

  if (!trust.skipSignature) {
    if (*signatureLine == kUnsigned)
      return rejected("it is unsigned");
    llvm::Expected<Signature> signature = Signature::parse(*signatureLine);
    if (!signature)
      return rejected("its signature is damaged (" + llvm::toString(signature.takeError()) + ")");
    llvm::Expected<PublicKey> signer =
        checkSignature(trust.trusted, kRemoteEntryPurpose, metadataText, *signature);
    if (!signer)
      return rejected(llvm::toString(signer.takeError()));
  }

  CachedEntry entry;
  uint64_t expected = 0;
  for (const EntryBlob &blob : metadata->blobs)
    expected += blob.size;
  if (expected != payload.size())
    return rejected("its blobs are " + llvm::Twine(payload.size()) + " bytes, its metadata says " +
                    llvm::Twine(expected));
  for (const EntryBlob &blob : metadata->blobs) {
    llvm::StringRef bytes = payload.take_front(blob.size);
    payload = payload.drop_front(blob.size);
    if (digestOf(bytes) != blob.digest)
      return rejected("its " + blob.role + " blob does not match its digest");
    entry.blobs[blob.role] = bytes.str();
  }
  entry.metadata = std::move(*metadata);
  return entry;
}

} // namespace kiln::cache::remote
