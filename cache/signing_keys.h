//===- cache/signing_keys.h - Private keys on disk --------------*- C++ -*-===//
//
// A signing key file is unencrypted PKCS#8 PEM, as `openssl pkey` reads it,
// after a line that names the key (PEM allows text before the key):
//
//   kiln signing key: ci
//   -----BEGIN PRIVATE KEY-----
//   ...
//
// Files are created with mode 0600 in a folder of mode 0700, and a key file
// others may read or write is refused, as ssh refuses one: whoever can read
// it can sign entries every importer trusts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/signature.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::cache {

/// `keysDirectory`/<name>.key.
std::string signingKeyPath(llvm::StringRef keysDirectory, llvm::StringRef name);

/// Writes `key` to a new file `path` (mode 0600), creating its folder (mode
/// 0700) if needed; an error if the file exists.
llvm::Error writeSigningKeyFile(const SigningKey &key, llvm::StringRef path);

/// Reads a key file; an error for one others may read or write, or that
/// holds no Ed25519 key. Its name is the one its first line gives, else the
/// file's name without `.key`.
llvm::Expected<SigningKey> readSigningKeyFile(llvm::StringRef path);

struct StoredSigningKey {
  std::string path;
  PublicKey publicKey;
};

/// Every key file (`*.key`) in `keysDirectory`, by name; none if the folder
/// does not exist.
llvm::Expected<std::vector<StoredSigningKey>> listSigningKeys(llvm::StringRef keysDirectory);

/// The key to sign with: `requested` names a key in `keysDirectory` or a key
/// file; without it, the only key in `keysDirectory`. An error with a hint
/// when there is none, or several to choose from.
llvm::Expected<SigningKey> chooseSigningKey(const std::optional<std::string> &requested,
                                            llvm::StringRef keysDirectory);

} // namespace kiln::cache
