//===- cache/trusted_keys.cpp ---------------------------------------------===//

#include "cache/trusted_keys.h"

#include "support/replace_file.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::cache {

namespace {

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

bool isComment(llvm::StringRef line) {
  line = line.trim();
  return line.empty() || line.starts_with("#");
}

/// The file's text; empty for a file that does not exist.
llvm::Expected<std::string> readText(llvm::StringRef path, bool mustExist) {
  // A FIFO would block the import forever and a device never end.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return failure("cannot read the trusted keys '" + path + "': not a regular file");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    if (buffer.getError() == std::errc::no_such_file_or_directory && !mustExist)
      return std::string();
    return failure("cannot read the trusted keys '" + path + "': " + buffer.getError().message());
  }
  return (*buffer)->getBuffer().str();
}

/// How a trusted keys file is written: its folder made where missing, and
/// a new file readable by all, as the file is public and often committed.
support::ReplaceFileOptions publicFile() {
  support::ReplaceFileOptions options;
  options.createFolders = true;
  options.newFileMode = 0644;
  return options;
}

} // namespace

llvm::Expected<std::vector<PublicKey>> parseTrustedKeys(llvm::StringRef text,
                                                        llvm::StringRef path) {
  std::vector<PublicKey> keys;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n');
  for (auto [number, line] : llvm::enumerate(lines)) {
    if (isComment(line))
      continue;
    llvm::Expected<PublicKey> key = PublicKey::parse(line);
    if (!key)
      return failure(path + ":" + llvm::Twine(number + 1) + ": " + llvm::toString(key.takeError()));
    keys.push_back(std::move(*key));
  }
  return keys;
}

llvm::Expected<std::vector<PublicKey>> readTrustedKeys(llvm::StringRef path, bool mustExist) {
  llvm::Expected<std::string> text = readText(path, mustExist);
  if (!text)
    return text.takeError();
  // Whoever may add a line may have any entry imported, as sshd refuses an
  // authorized_keys file others may write.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && (static_cast<unsigned>(status.permissions()) & 0002))
    return failure(llvm::formatv("the trusted keys '{0}' may be changed by anyone (mode {1:o4}); "
                                 "run `chmod o-w '{0}'`",
                                 path, static_cast<unsigned>(status.permissions()) & 07777)
                       .str());
  return parseTrustedKeys(*text, path);
}

llvm::Expected<std::vector<PublicKey>> trustKeys(llvm::StringRef path,
                                                 llvm::ArrayRef<PublicKey> keys) {
  llvm::Expected<std::string> text = readText(path, /*mustExist=*/false);
  if (!text)
    return text.takeError();
  llvm::Expected<std::vector<PublicKey>> trusted = parseTrustedKeys(*text, path);
  if (!trusted)
    return trusted.takeError();
  std::vector<PublicKey> added;
  for (const PublicKey &key : keys) {
    auto known = [&](const PublicKey &other) { return other.sameKey(key); };
    if (llvm::any_of(*trusted, known) || llvm::any_of(added, known))
      continue;
    for (const PublicKey &other : *trusted)
      if (other.name == key.name)
        return failure("'" + path + "' trusts another key named '" + key.name + "' (" +
                       other.fingerprint() + "); untrust it first with `kiln cache key untrust " +
                       other.fingerprint() + "`");
    for (const PublicKey &other : added)
      if (other.name == key.name)
        return failure("two keys to trust are named '" + key.name + "' (" + other.fingerprint() +
                       ", " + key.fingerprint() + "); a name must tell keys apart");
    added.push_back(key);
  }
  if (added.empty())
    return added;
  std::string updated = *text;
  if (!updated.empty() && !llvm::StringRef(updated).ends_with("\n"))
    updated += '\n';
  for (const PublicKey &key : added)
    updated += key.line() + "\n";
  if (llvm::Error error = support::replaceFile(path, updated, publicFile()))
    return error;
  return added;
}

llvm::Expected<std::vector<PublicKey>> untrustKeys(llvm::StringRef path, llvm::StringRef which) {
  llvm::Expected<std::string> text = readText(path, /*mustExist=*/false);
  if (!text)
    return text.takeError();
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(*text).split(lines, '\n');
  std::vector<PublicKey> removed;
  std::string updated;
  for (auto [number, line] : llvm::enumerate(lines)) {
    bool last = number + 1 == lines.size();
    if (!isComment(line)) {
      llvm::Expected<PublicKey> key = PublicKey::parse(line);
      if (!key)
        return failure(path + ":" + llvm::Twine(number + 1) + ": " +
                       llvm::toString(key.takeError()));
      if (key->name == which || key->fingerprint() == which) {
        removed.push_back(std::move(*key));
        continue;
      }
    }
    updated += line;
    if (!last)
      updated += '\n';
  }
  if (removed.empty())
    return failure("'" + path + "' trusts no key named '" + which +
                   "' or with that fingerprint; see `kiln cache key list`");
  if (llvm::Error error = support::replaceFile(path, updated, publicFile()))
    return error;
  return removed;
}

} // namespace kiln::cache
