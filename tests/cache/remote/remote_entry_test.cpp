//===- tests/cache/remote/remote_entry_test.cpp - What a remote may return -===//
//
// A remote is trusted for nothing: each way its answer can be wrong (not
// an entry, damaged, another key's, unsigned, signed by a stranger,
// altered after signing) is a rejection with a reason, never an entry.
//
//===----------------------------------------------------------------------===//

#include "cache/remote/remote_entry.h"

#include <gtest/gtest.h>

namespace kiln::cache::remote {
namespace {

const std::string kKey(64, 'a');
const std::string kOtherKey(64, 'b');

EntryContents contents(const std::string &key = kKey) {
  return {key,
          "cubin",
          "sm_80",
          "kernels.add",
          llvm::json::Object{{"usage", llvm::json::Object{}}},
          {{"cubin", std::string("\x7f"
                                 "ELF cubin bytes",
                                 16)},
           {"extra", "second blob"}}};
}

struct Signed {
  SigningKey key = llvm::cantFail(SigningKey::generate("ci"));
  TrustPolicy trust{{key.publicKey()}, "trusted-keys", false};
};

std::string rejection(llvm::StringRef key, llvm::StringRef object, const TrustPolicy &trust) {
  llvm::Expected<CachedEntry> entry = decodeRemoteEntry(key, object, trust);
  if (entry) {
    ADD_FAILURE() << "the entry was accepted";
    return "";
  }
  return llvm::toString(entry.takeError());
}

TEST(RemoteEntry, RoundTripsASignedEntry) {
  Signed builder;
  std::string object = llvm::cantFail(encodeRemoteEntry(contents(), &builder.key));
  llvm::Expected<CachedEntry> entry = decodeRemoteEntry(kKey, object, builder.trust);
  ASSERT_TRUE(static_cast<bool>(entry)) << llvm::toString(entry.takeError());
  EXPECT_EQ(entry->metadata.key, kKey);
  EXPECT_EQ(entry->metadata.kind, "cubin");
  EXPECT_EQ(entry->metadata.info,
            llvm::json::Value(llvm::json::Object{{"usage", llvm::json::Object{}}}));
  EXPECT_EQ(entry->blobs["cubin"], contents().blobs[0].second);
  EXPECT_EQ(entry->blobs["extra"], "second blob");
}

TEST(RemoteEntry, RejectsAnotherKeysEntry) {
  Signed builder;
  std::string object = llvm::cantFail(encodeRemoteEntry(contents(kOtherKey), &builder.key));
  EXPECT_NE(rejection(kKey, object, builder.trust).find("another key"), std::string::npos)
      << "a server answering with another key's (validly signed) entry was believed";
}

TEST(RemoteEntry, RejectsUnsignedAndForeignEntriesUnlessTrustIsSkipped) {
  Signed builder;
  std::string unsignedObject = llvm::cantFail(encodeRemoteEntry(contents(), nullptr));
  EXPECT_NE(rejection(kKey, unsignedObject, builder.trust).find("unsigned"), std::string::npos);

  SigningKey stranger = llvm::cantFail(SigningKey::generate("stranger"));
  std::string foreign = llvm::cantFail(encodeRemoteEntry(contents(), &stranger));
  EXPECT_NE(rejection(kKey, foreign, builder.trust).find("not among the trusted keys"),
            std::string::npos);

  TrustPolicy skip = builder.trust;
  skip.skipSignature = true;
  EXPECT_TRUE(static_cast<bool>(decodeRemoteEntry(kKey, unsignedObject, skip)));
  EXPECT_TRUE(static_cast<bool>(decodeRemoteEntry(kKey, foreign, skip)));
  std::string otherKeys = llvm::cantFail(encodeRemoteEntry(contents(kOtherKey), nullptr));
  EXPECT_FALSE(static_cast<bool>(decodeRemoteEntry(kKey, otherKeys, skip)))
      << "skipping signatures also skipped the check that the entry is for the key asked";
}

TEST(RemoteEntry, RejectsEveryDamagedByte) {
  Signed builder;
  std::string object = llvm::cantFail(encodeRemoteEntry(contents(), &builder.key));
  // The signer's name ends the signature line: a label for people, which
  // trust does not depend on (cache/signature.h).
  size_t sizeLine = object.find('\n', object.find('\n') + 1);
  size_t label = object.rfind(' ', sizeLine) + 1;
  TrustPolicy skip = builder.trust;
  skip.skipSignature = true;
  std::vector<std::string> blobs;
  for (const auto &[role, bytes] : contents().blobs)
    blobs.push_back(bytes);
  for (size_t at = 0; at < object.size(); ++at) {
    std::string damaged = object;
    damaged[at] ^= 0x20;
    for (const TrustPolicy *trust : {&builder.trust, &skip}) {
      llvm::Expected<CachedEntry> entry = decodeRemoteEntry(kKey, damaged, *trust);
      if (!entry) {
        llvm::consumeError(entry.takeError());
        continue;
      }
      if (!trust->skipSignature) {
        EXPECT_TRUE(at >= label && at < sizeLine)
            << "byte " << at << " changed, and the signed entry was still accepted";
      }
      for (const auto &[role, bytes] : entry->blobs)
        EXPECT_TRUE(llvm::is_contained(blobs, bytes))
            << "byte " << at << " changed the " << role << " blob, which was accepted";
    }
  }
}

TEST(RemoteEntry, RejectsTruncatedGarbageAndOversizedHeaders) {
  Signed builder;
  std::string object = llvm::cantFail(encodeRemoteEntry(contents(), &builder.key));
  for (size_t length = 0; length < object.size(); ++length)
    EXPECT_FALSE(static_cast<bool>(
        decodeRemoteEntry(kKey, llvm::StringRef(object).take_front(length), builder.trust)))
        << "an entry cut at " << length << " bytes was accepted";
  EXPECT_NE(rejection(kKey, "<html>502 Bad Gateway</html>", builder.trust)
                .find("not a Kiln remote cache entry"),
            std::string::npos);
  EXPECT_NE(rejection(kKey, "kiln-remote-entry 1\nunsigned\n99999999999999999999\n", builder.trust)
                .find("header"),
            std::string::npos);
  EXPECT_FALSE(static_cast<bool>(decodeRemoteEntry(kKey, object + "trailing", builder.trust)))
      << "bytes after the last blob were accepted";
}

} // namespace
} // namespace kiln::cache::remote
