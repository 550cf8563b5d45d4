//===- cache/signature.h - Ed25519 signatures over bytes --------*- C++ -*-===//
//
// Who made a cache entry: a digest proves that a blob matches its name, not
// that it is the compiler's output for the key it is stored under. Whoever
// exports entries (an archive today, a remote cache tier later) signs what
// they vouch for; whoever imports accepts only what a key they trust signed.
// This component knows bytes and keys, nothing of archives or servers.
//
// Public keys travel as one line, which a trusted-keys file holds one of
// per line:
//
//   kiln-ed25519 <base64 of the 32-byte key> <name>
//
// and a signature as one line naming the key that made it:
//
//   kiln-ed25519-signature <base64 of the 64-byte signature> <base64 key> <name>
//
// What is signed is never the bytes alone but a purpose string and the
// bytes, so that a signature made for one use (an archive's manifest) cannot
// be replayed as another (a remote entry). The name is a label for people;
// trust is decided by the key's bytes alone.
//
// The cryptography is OpenSSL 3's EVP Ed25519.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::cache {

inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSignatureBytes = 64;

/// Letters, digits and `._@+-`, 1 to 64 of them: a key name fits on the
/// public key's line and in a file name.
bool isValidKeyName(llvm::StringRef name);

struct PublicKey {
  std::string name;
  /// kPublicKeyBytes raw Ed25519 bytes.
  std::string bytes;

  /// "SHA256:" and the unpadded base64 of the key's SHA-256, as ssh shows
  /// keys.
  std::string fingerprint() const;
  /// "kiln-ed25519 <base64> <name>".
  std::string line() const;
  /// "'name' (SHA256:...)", for messages.
  std::string describe() const;
  bool sameKey(const PublicKey &other) const { return bytes == other.bytes; }

  /// Parses line(); an error saying what is wrong with it.
  static llvm::Expected<PublicKey> parse(llvm::StringRef line);
};

struct Signature {
  /// The key that claims to have signed; only a trusted key counts.
  PublicKey signer;
  /// kSignatureBytes raw bytes.
  std::string bytes;

  /// "kiln-ed25519-signature <base64> <base64 key> <name>\n".
  std::string text() const;
  static llvm::Expected<Signature> parse(llvm::StringRef text);
};

/// An Ed25519 private key. Its secret is wiped from memory when it goes.
class SigningKey {
public:
  static llvm::Expected<SigningKey> generate(llvm::StringRef name);
  /// From PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"); an encrypted key is
  /// an error, never a password prompt.
  static llvm::Expected<SigningKey> fromPem(llvm::StringRef pem, llvm::StringRef name);

  SigningKey(SigningKey &&other) noexcept;
  SigningKey &operator=(SigningKey &&other) noexcept;
  SigningKey(const SigningKey &) = delete;
  SigningKey &operator=(const SigningKey &) = delete;
  ~SigningKey();

  /// Unencrypted PKCS#8 PEM, as `openssl pkey` reads it.
  llvm::Expected<std::string> pem() const;
  const PublicKey &publicKey() const { return publicKey_; }
  llvm::Expected<Signature> sign(llvm::StringRef purpose, llvm::StringRef bytes) const;

private:
  SigningKey(std::string seed, PublicKey publicKey);
  void wipe();

  std::string seed_;
  PublicKey publicKey_;
};

/// Whether `signature` is `key`'s Ed25519 signature of `bytes` for
/// `purpose`.
bool verifySignature(const PublicKey &key, llvm::StringRef purpose, llvm::StringRef bytes,
                     llvm::StringRef signature);

/// The trusted key (as the trusted list names it) whose signature of
/// `bytes` for `purpose` `signature` is; otherwise an error saying why not:
/// the signer is not trusted, or the signature does not match the bytes.
llvm::Expected<PublicKey> checkSignature(llvm::ArrayRef<PublicKey> trusted, llvm::StringRef purpose,
                                         llvm::StringRef bytes, const Signature &signature);

} // namespace kiln::cache
