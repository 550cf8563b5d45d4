//===- cache/signature.cpp ------------------------------------------------===//

#include "cache/signature.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Base64.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <vector>

namespace kiln::cache {

namespace {

constexpr llvm::StringLiteral kKeyType = "kiln-ed25519";
constexpr llvm::StringLiteral kSignatureType = "kiln-ed25519-signature";
/// Puts every signature in a namespace of its own, and the purpose before
/// the bytes, so that no purpose's message is another's.
constexpr llvm::StringLiteral kSignedPrefix = "kiln-signature 1\n";

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `what` and OpenSSL's reasons, oldest first; clears OpenSSL's error queue.
llvm::Error opensslFailure(const llvm::Twine &what) {
  std::string reasons;
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    reasons += (reasons.empty() ? "" : "; ") + std::string(text);
  }
  return failure(what + (reasons.empty() ? "" : " (" + reasons + ")"));
}

std::string signedMessage(llvm::StringRef purpose, llvm::StringRef bytes) {
  return (kSignedPrefix + purpose + "\n" + bytes).str();
}

const unsigned char *bytesOf(llvm::StringRef text) {
  return reinterpret_cast<const unsigned char *>(text.data());
}

using PKeyPointer = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using MdContextPointer = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

llvm::Expected<std::string> decodeExactly(llvm::StringRef base64, size_t size,
                                          llvm::StringRef what) {
  std::vector<char> decoded;
  if (llvm::Error error = llvm::decodeBase64(base64, decoded)) {
    llvm::consumeError(std::move(error));
    return failure(what + " is not base64");
  }
  if (decoded.size() != size)
    return failure(what + " has " + llvm::Twine(decoded.size()) + " bytes, not " +
                   llvm::Twine(size));
  return std::string(decoded.begin(), decoded.end());
}

llvm::Expected<std::string> rawPublicKey(EVP_PKEY *key) {
  std::string bytes(kPublicKeyBytes, '\0');
  size_t size = bytes.size();
  if (EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char *>(bytes.data()), &size) !=
          1 ||
      size != kPublicKeyBytes)
    return opensslFailure("cannot read an Ed25519 public key");
  return bytes;
}

/// The private key's seed and public key, from an OpenSSL key.
llvm::Expected<std::pair<std::string, std::string>> splitKey(EVP_PKEY *key) {
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519)
    return failure("not an Ed25519 key");
  std::string seed(kPublicKeyBytes, '\0');
  size_t size = seed.size();
  if (EVP_PKEY_get_raw_private_key(key, reinterpret_cast<unsigned char *>(seed.data()), &size) !=
          1 ||
      size != seed.size()) {
    OPENSSL_cleanse(seed.data(), seed.size());
    return opensslFailure("cannot read an Ed25519 private key");
  }
  llvm::Expected<std::string> publicBytes = rawPublicKey(key);
  if (!publicBytes) {
    OPENSSL_cleanse(seed.data(), seed.size());
    return publicBytes.takeError();
  }
  return std::make_pair(std::move(seed), std::move(*publicBytes));
}

/// Refuses every password: an encrypted key file is an error, not a prompt.
int noPassword(char *, int, int, void *) {
  return -1;
}

} // namespace

bool isValidKeyName(llvm::StringRef name) {
  return !name.empty() && name.size() <= 64 && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("._@+-").contains(c);
  });
}

std::string PublicKey::fingerprint() const {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    return "SHA256:?";
  std::string text = llvm::encodeBase64(llvm::ArrayRef<unsigned char>(digest, size));
  return "SHA256:" + llvm::StringRef(text).rtrim('=').str();
}

std::string PublicKey::line() const {
  return (kKeyType + " " + llvm::encodeBase64(bytes) + " " + name).str();
}

std::string PublicKey::describe() const {
  return "'" + name + "' (" + fingerprint() + ")";
}

llvm::Expected<PublicKey> PublicKey::parse(llvm::StringRef line) {
  llvm::SmallVector<llvm::StringRef, 4> fields;
  line.trim().split(fields, ' ', -1, /*KeepEmpty=*/false);
  if (fields.size() != 3 || fields[0] != kKeyType)
    return failure("not a public key line ('" + kKeyType + " <base64 key> <name>')");
  PublicKey key;
  llvm::Expected<std::string> bytes = decodeExactly(fields[1], kPublicKeyBytes, "the key");
  if (!bytes)
    return bytes.takeError();
  key.bytes = std::move(*bytes);
  if (!isValidKeyName(fields[2]))
    return failure("'" + fields[2] +
                   "' is not a key name (1 to 64 letters, digits, '.', '_', '@', '+', '-')");
  key.name = fields[2].str();
  PKeyPointer checked(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytesOf(key.bytes), key.bytes.size()),
      EVP_PKEY_free);
  if (!checked)
    return opensslFailure("not an Ed25519 public key");
  return key;
}

std::string Signature::text() const {
  return (kSignatureType + " " + llvm::encodeBase64(bytes) + " " +
          llvm::encodeBase64(signer.bytes) + " " + signer.name + "\n")
      .str();
}

llvm::Expected<Signature> Signature::parse(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 4> fields;
  text.trim().split(fields, ' ', -1, /*KeepEmpty=*/false);
  if (fields.size() != 4 || fields[0] != kSignatureType)
    return failure("not a signature ('" + kSignatureType +
                   " <base64 signature> <base64 key> <name>')");
  Signature signature;
  llvm::Expected<std::string> bytes = decodeExactly(fields[1], kSignatureBytes, "the signature");
  if (!bytes)
    return bytes.takeError();
  signature.bytes = std::move(*bytes);
  llvm::Expected<PublicKey> signer =
      PublicKey::parse((kKeyType + " " + fields[2] + " " + fields[3]).str());
  if (!signer)
    return signer.takeError();
  signature.signer = std::move(*signer);
  return signature;
}

SigningKey::SigningKey(std::string seed, PublicKey publicKey)
    : seed_(std::move(seed)), publicKey_(std::move(publicKey)) {}

SigningKey::SigningKey(SigningKey &&other) noexcept
    : seed_(std::move(other.seed_)), publicKey_(std::move(other.publicKey_)) {
  other.wipe();
}

SigningKey &SigningKey::operator=(SigningKey &&other) noexcept {
  if (this != &other) {
    wipe();
    seed_ = std::move(other.seed_);
    publicKey_ = std::move(other.publicKey_);
    other.wipe();
  }
  return *this;
}

SigningKey::~SigningKey() {
  wipe();
}

void SigningKey::wipe() {
  if (!seed_.empty())
    OPENSSL_cleanse(seed_.data(), seed_.size());
  seed_.clear();
}

llvm::Expected<SigningKey> SigningKey::generate(llvm::StringRef name) {
  if (!isValidKeyName(name))
    return failure("'" + name +
                   "' is not a key name (1 to 64 letters, digits, '.', '_', '@', '+', '-')");
  PKeyPointer key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"), EVP_PKEY_free);
  if (!key)
    return opensslFailure("cannot generate an Ed25519 key");
  llvm::Expected<std::pair<std::string, std::string>> parts = splitKey(key.get());
  if (!parts)
    return parts.takeError();
  return SigningKey(std::move(parts->first), PublicKey{name.str(), std::move(parts->second)});
}

llvm::Expected<SigningKey> SigningKey::fromPem(llvm::StringRef pem, llvm::StringRef name) {
  if (!isValidKeyName(name))
    return failure("'" + name +
                   "' is not a key name (1 to 64 letters, digits, '.', '_', '@', '+', '-')");
  std::unique_ptr<BIO, decltype(&BIO_free)> input(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (!input)
    return opensslFailure("cannot read a private key");
  PKeyPointer key(PEM_read_bio_PrivateKey(input.get(), nullptr, noPassword, nullptr),
                  EVP_PKEY_free);
  if (!key)
    return opensslFailure("not an unencrypted PEM private key");
  llvm::Expected<std::pair<std::string, std::string>> parts = splitKey(key.get());
  if (!parts)
    return parts.takeError();
  return SigningKey(std::move(parts->first), PublicKey{name.str(), std::move(parts->second)});
}

llvm::Expected<std::string> SigningKey::pem() const {
  PKeyPointer key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, bytesOf(seed_), seed_.size()),
      EVP_PKEY_free);
  if (!key)
    return opensslFailure("cannot use the private key");
  std::unique_ptr<BIO, decltype(&BIO_free)> output(BIO_new(BIO_s_mem()), BIO_free);
  if (!output ||
      PEM_write_bio_PrivateKey(output.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return opensslFailure("cannot write the private key");
  char *data = nullptr;
  long size = BIO_get_mem_data(output.get(), &data);
  std::string text(data, static_cast<size_t>(size));
  OPENSSL_cleanse(data, static_cast<size_t>(size));
  return text;
}

llvm::Expected<Signature> SigningKey::sign(llvm::StringRef purpose, llvm::StringRef bytes) const {
  PKeyPointer key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, bytesOf(seed_), seed_.size()),
      EVP_PKEY_free);
  MdContextPointer context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!key || !context)
    return opensslFailure("cannot use the private key");
  std::string message = signedMessage(purpose, bytes);
  Signature signature{publicKey_, std::string(kSignatureBytes, '\0')};
  size_t size = signature.bytes.size();
  if (EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char *>(signature.bytes.data()),
                     &size, bytesOf(message), message.size()) != 1 ||
      size != kSignatureBytes)
    return opensslFailure("cannot sign");
  return signature;
}

bool verifySignature(const PublicKey &key, llvm::StringRef purpose, llvm::StringRef bytes,
                     llvm::StringRef signature) {
  if (signature.size() != kSignatureBytes || key.bytes.size() != kPublicKeyBytes)
    return false;
  PKeyPointer publicKey(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytesOf(key.bytes), key.bytes.size()),
      EVP_PKEY_free);
  MdContextPointer context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  auto clearErrors = llvm::make_scope_exit([] { ERR_clear_error(); });
  if (!publicKey || !context ||
      EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, publicKey.get()) != 1)
    return false;
  std::string message = signedMessage(purpose, bytes);
  return EVP_DigestVerify(context.get(), bytesOf(signature), signature.size(), bytesOf(message),
                          message.size()) == 1;
}

llvm::Expected<PublicKey> checkSignature(llvm::ArrayRef<PublicKey> trusted, llvm::StringRef purpose,
                                         llvm::StringRef bytes, const Signature &signature) {
  const PublicKey *known =
      llvm::find_if(trusted, [&](const PublicKey &key) { return key.sameKey(signature.signer); });
  if (known == trusted.end())
    return failure("it is signed by " + signature.signer.describe() +
                   ", a key not among the trusted keys");
  if (!verifySignature(*known, purpose, bytes, signature.bytes))
    return failure("its signature by " + known->describe() +
                   " does not match what it signs (altered after signing?)");
  return *known;
}

} // namespace kiln::cache
