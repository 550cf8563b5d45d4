//===- cache/signing_keys.cpp ---------------------------------------------===//

#include "cache/signing_keys.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <openssl/crypto.h>

namespace kiln::cache {

namespace {

constexpr llvm::StringLiteral kNameLine = "kiln signing key: ";
/// An Ed25519 key in PEM takes about 120 bytes.
constexpr uint64_t kMaxKeyFileBytes = 16 * 1024;

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

std::string signingKeyPath(llvm::StringRef keysDirectory, llvm::StringRef name) {
  llvm::SmallString<256> path(keysDirectory);
  llvm::sys::path::append(path, name + ".key");
  return path.str().str();
}

llvm::Error writeSigningKeyFile(const SigningKey &key, llvm::StringRef path) {
  namespace fs = llvm::sys::fs;
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (!folder.empty() && !fs::exists(folder)) {
    if (std::error_code error = fs::create_directories(folder, true, fs::perms::owner_all))
      return failure("cannot create '" + folder + "': " + error.message());
  }
  llvm::Expected<std::string> pem = key.pem();
  if (!pem)
    return pem.takeError();
  auto wipe = llvm::make_scope_exit([&] { OPENSSL_cleanse(pem->data(), pem->size()); });
  int descriptor = -1;
  if (std::error_code error =
          fs::openFileForWrite(path, descriptor, fs::CD_CreateNew, fs::OF_None, 0600))
    return failure("cannot create '" + path + "': " +
                   (error == std::errc::file_exists ? "it exists already" : error.message()));
  bool written = false;
  auto removePartial = llvm::make_scope_exit([&] {
    if (!written)
      fs::remove(path);
  });
  {
    llvm::raw_fd_ostream output(descriptor, /*shouldClose=*/true);
    output << kNameLine << key.publicKey().name << '\n' << *pem;
    output.close();
    if (output.has_error()) {
      std::error_code error = output.error();
      output.clear_error();
      return failure("cannot write '" + path + "': " + error.message());
    }
  }
  written = true;
  return llvm::Error::success();
}

llvm::Expected<SigningKey> readSigningKeyFile(llvm::StringRef path) {
  namespace fs = llvm::sys::fs;
  fs::file_status status;
  if (std::error_code error = fs::status(path, status))
    return failure("cannot read the signing key '" + path + "': " + error.message());
  if (status.type() != fs::file_type::regular_file)
    return failure("the signing key '" + path + "' is not a file");
  unsigned permissions = static_cast<unsigned>(status.permissions());
  if (permissions & 077)
    return failure(llvm::formatv("the signing key '{0}' may be read or written by others (mode "
                                 "{1:o4}); make it private with `chmod 600 '{0}'`",
                                 path, permissions & 07777)
                       .str());
  if (status.getSize() > kMaxKeyFileBytes)
    return failure(llvm::formatv("the signing key '{0}' is {1} bytes, too large for a key file",
                                 path, status.getSize())
                       .str());
  // Volatile: read into memory of our own, never mapped from the file, so
  // that the copy of the secret can be wiped.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false,
                                  /*IsVolatile=*/true);
  if (!buffer)
    return failure("cannot read the signing key '" + path + "': " + buffer.getError().message());
  llvm::StringRef text = (*buffer)->getBuffer();
  std::string name = llvm::sys::path::stem(path).str();
  if (text.starts_with(kNameLine))
    name =
        text.drop_front(kNameLine.size()).take_until([](char c) { return c == '\n'; }).trim().str();
  llvm::Expected<SigningKey> key = SigningKey::fromPem(text, name);
  OPENSSL_cleanse(const_cast<char *>((*buffer)->getBufferStart()), (*buffer)->getBufferSize());
  if (!key)
    return failure("the signing key '" + path + "': " + llvm::toString(key.takeError()));
  return key;
}

llvm::Expected<std::vector<StoredSigningKey>> listSigningKeys(llvm::StringRef keysDirectory) {
  namespace fs = llvm::sys::fs;
  std::vector<StoredSigningKey> keys;
  if (!fs::is_directory(keysDirectory))
    return keys;
  std::error_code error;
  for (fs::directory_iterator entry(keysDirectory, error), end; entry != end && !error;
       entry.increment(error)) {
    if (llvm::sys::path::extension(entry->path()) != ".key")
      continue;
    llvm::Expected<SigningKey> key = readSigningKeyFile(entry->path());
    if (!key)
      return key.takeError();
    keys.push_back({entry->path(), key->publicKey()});
  }
  if (error)
    return failure("cannot list '" + keysDirectory + "': " + error.message());
  std::sort(keys.begin(), keys.end(), [](const StoredSigningKey &a, const StoredSigningKey &b) {
    return a.publicKey.name < b.publicKey.name;
  });
  return keys;
}

llvm::Expected<SigningKey> chooseSigningKey(const std::optional<std::string> &requested,
                                            llvm::StringRef keysDirectory) {
  namespace fs = llvm::sys::fs;
  if (requested) {
    if (isValidKeyName(*requested)) {
      std::string stored = signingKeyPath(keysDirectory, *requested);
      if (fs::exists(stored))
        return readSigningKeyFile(stored);
    }
    if (fs::exists(*requested))
      return readSigningKeyFile(*requested);
    return failure("no signing key '" + *requested + "': neither a key in '" + keysDirectory +
                   "' nor a key file");
  }
  llvm::Expected<std::vector<StoredSigningKey>> keys = listSigningKeys(keysDirectory);
  if (!keys)
    return keys.takeError();
  if (keys->empty())
    return failure("no signing key in '" + keysDirectory +
                   "': create one with `kiln cache key generate`, or export with --unsigned "
                   "(an archive that imports only with --insecure-skip-signature)");
  if (keys->size() > 1) {
    std::string names;
    for (const StoredSigningKey &key : *keys)
      names += (names.empty() ? "" : ", ") + key.publicKey.name;
    return failure("several signing keys (" + names +
                   "): name the one to use (kiln cache export --sign-with NAME), or set "
                   "KILN_SIGNING_KEY");
  }
  return readSigningKeyFile(keys->front().path);
}

} // namespace kiln::cache
