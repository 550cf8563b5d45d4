//===- tests/cache/signature_test.cpp - Ed25519 over bytes, on its own ----===//
//
// The signature component serves archives now and remote cache tiers later,
// so it is proven here with bytes and keys alone.
//
//===----------------------------------------------------------------------===//

#include "cache/archive_manifest.h"
#include "cache/signature.h"

#include <gtest/gtest.h>

namespace kiln::cache {
namespace {

SigningKey makeKey(llvm::StringRef name) {
  return llvm::cantFail(SigningKey::generate(name));
}

constexpr llvm::StringLiteral kPurpose = "test purpose 1";

TEST(Signature, VerifiesWhatItsKeySigned) {
  SigningKey key = makeKey("ci");
  llvm::Expected<Signature> signature = key.sign(kPurpose, "the bytes");
  ASSERT_TRUE(static_cast<bool>(signature)) << llvm::toString(signature.takeError());
  EXPECT_EQ(signature->bytes.size(), kSignatureBytes);
  EXPECT_TRUE(verifySignature(key.publicKey(), kPurpose, "the bytes", signature->bytes))
      << "a key's own signature does not verify";
}

TEST(Signature, RejectsChangedBytesOtherPurposesAndOtherKeys) {
  SigningKey key = makeKey("ci");
  SigningKey other = makeKey("ci");
  Signature signature = llvm::cantFail(key.sign(kPurpose, "the bytes"));
  EXPECT_FALSE(verifySignature(key.publicKey(), kPurpose, "the bytez", signature.bytes))
      << "a signature verified bytes it did not sign";
  EXPECT_FALSE(verifySignature(key.publicKey(), "another purpose", "the bytes", signature.bytes))
      << "a signature made for one purpose verified for another";
  EXPECT_FALSE(verifySignature(other.publicKey(), kPurpose, "the bytes", signature.bytes))
      << "another key (of the same name) verified the signature";
  EXPECT_FALSE(verifySignature(key.publicKey(), kPurpose, "the bytes",
                               llvm::StringRef(signature.bytes).drop_back()))
      << "a truncated signature verified";
}

TEST(Signature, ChecksAgainstTrustedKeysOnly) {
  SigningKey trusted = makeKey("ci");
  SigningKey stranger = makeKey("stranger");
  std::vector<PublicKey> keys{trusted.publicKey()};
  Signature good = llvm::cantFail(trusted.sign(kPurpose, "bytes"));
  llvm::Expected<PublicKey> signer = checkSignature(keys, kPurpose, "bytes", good);
  ASSERT_TRUE(static_cast<bool>(signer)) << llvm::toString(signer.takeError());
  EXPECT_EQ(signer->name, "ci");

  Signature foreign = llvm::cantFail(stranger.sign(kPurpose, "bytes"));
  llvm::Expected<PublicKey> unknown = checkSignature(keys, kPurpose, "bytes", foreign);
  ASSERT_FALSE(static_cast<bool>(unknown)) << "a stranger's signature was accepted";
  EXPECT_NE(llvm::toString(unknown.takeError()).find("not among the trusted keys"),
            std::string::npos);

  // A stranger who claims a trusted key's identity still cannot sign for it.
  foreign.signer = trusted.publicKey();
  llvm::Expected<PublicKey> forged = checkSignature(keys, kPurpose, "bytes", foreign);
  ASSERT_FALSE(static_cast<bool>(forged)) << "a signature claiming a trusted signer was accepted";
  EXPECT_NE(llvm::toString(forged.takeError()).find("does not match"), std::string::npos);
}

TEST(Signature, TextRoundTrips) {
  SigningKey key = makeKey("dev@host");
  Signature signature = llvm::cantFail(key.sign(kPurpose, "bytes"));
  llvm::Expected<Signature> parsed = Signature::parse(signature.text());
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->bytes, signature.bytes);
  EXPECT_TRUE(parsed->signer.sameKey(key.publicKey()));
  EXPECT_EQ(parsed->signer.name, "dev@host");

  llvm::Expected<PublicKey> line = PublicKey::parse(key.publicKey().line());
  ASSERT_TRUE(static_cast<bool>(line)) << llvm::toString(line.takeError());
  EXPECT_TRUE(line->sameKey(key.publicKey()));
  EXPECT_EQ(line->fingerprint(), key.publicKey().fingerprint());
  EXPECT_TRUE(llvm::StringRef(line->fingerprint()).starts_with("SHA256:"));
}

TEST(Signature, MalformedTextIsAnErrorSayingWhat) {
  SigningKey key = makeKey("ci");
  std::string text = llvm::cantFail(key.sign(kPurpose, "bytes")).text();
  std::string truncated = text.substr(0, 40);
  llvm::Expected<Signature> cut = Signature::parse(truncated);
  ASSERT_FALSE(static_cast<bool>(cut)) << "a truncated signature parsed";
  llvm::consumeError(cut.takeError());
  llvm::Expected<PublicKey> bad = PublicKey::parse("kiln-ed25519 AAAA ci");
  ASSERT_FALSE(static_cast<bool>(bad)) << "a 3-byte public key parsed";
  EXPECT_NE(llvm::toString(bad.takeError()).find("bytes, not 32"), std::string::npos);
  llvm::Expected<PublicKey> name = PublicKey::parse(
      "kiln-ed25519 " +
      llvm::StringRef(key.publicKey().line()).split(' ').second.split(' ').first.str() +
      " bad/name");
  ASSERT_FALSE(static_cast<bool>(name)) << "a key name with '/' parsed";
  llvm::consumeError(name.takeError());
}

TEST(Signature, PemRoundTripsAndEncryptedKeysAreRefusedWithoutAPrompt) {
  SigningKey key = makeKey("ci");
  std::string pem = llvm::cantFail(key.pem());
  EXPECT_TRUE(llvm::StringRef(pem).starts_with("-----BEGIN PRIVATE KEY-----"));
  llvm::Expected<SigningKey> again = SigningKey::fromPem(pem, "ci");
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_TRUE(again->publicKey().sameKey(key.publicKey()));

  llvm::Expected<SigningKey> encrypted = SigningKey::fromPem(
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAc\n"
      "-----END ENCRYPTED PRIVATE KEY-----\n",
      "ci");
  ASSERT_FALSE(static_cast<bool>(encrypted)) << "an encrypted key was read";
  llvm::consumeError(encrypted.takeError());
}

TEST(Manifest, RoundTripsAndRefusesWhatIsMalformed) {
  std::string a(64, 'a'), b(64, 'b'), c(64, 'c'), d(64, 'd');
  std::vector<ManifestEntry> entries{{a, b, {c}}, {d, c.substr(0, 63) + "e", {}}};
  std::string text = writeManifest(entries);
  llvm::Expected<std::vector<ManifestEntry>> parsed = parseManifest(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].blobs, std::vector<HexDigest>{c});

  for (std::string bad : {text.substr(0, text.size() - 1), std::string("kiln-cache-manifest 2\n"),
                          text + "entry " + a + " " + d + "\n", text + "entry " + a + "\n",
                          text + "entry " + std::string(64, 'G') + " " + b + "\n"}) {
    llvm::Expected<std::vector<ManifestEntry>> refused = parseManifest(bad);
    EXPECT_FALSE(static_cast<bool>(refused)) << "a malformed manifest parsed:\n" << bad;
    if (!refused)
      llvm::consumeError(refused.takeError());
  }
}

} // namespace
} // namespace kiln::cache
