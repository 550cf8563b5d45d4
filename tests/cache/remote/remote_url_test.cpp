//===- tests/cache/remote/remote_url_test.cpp - URLs a store can use, or not ---===//
//
// Opening a store only reads its URL: nothing here needs a server.
//
//===----------------------------------------------------------------------===//

#include "tests/cache/remote/store_test_support.h"

#include <gtest/gtest.h>

namespace kiln::cache::remote::testing {
namespace {

std::string openingError(const Endpoint &endpoint) {
  llvm::Expected<std::unique_ptr<RemoteStore>> store = openRemoteStore(endpoint);
  if (store)
    return "(opened)";
  return llvm::toString(store.takeError());
}

std::string openingError(llvm::StringRef url) {
  return openingError(endpointAt(url.str()));
}

TEST(RedactUrl, HidesThePasswordOfTheUserInfo) {
  EXPECT_EQ(redactUrl("redis://u:secret@h:1/0"), "redis://u:***@h:1/0");
  EXPECT_EQ(redactUrl("redis://:secret@h"), "redis://:***@h");
  EXPECT_EQ(redactUrl("https://builder:secret@cache.example.com/kiln"),
            "https://builder:***@cache.example.com/kiln");
  EXPECT_EQ(redactUrl("redis+unix://u:secret@/run/redis.sock?db=2"),
            "redis+unix://u:***@/run/redis.sock?db=2");
}

TEST(RedactUrl, HidesPasswordsWithUnescapedSlashesOrAts) {
  EXPECT_EQ(redactUrl("redis://u:se/cret@h/0"), "redis://u:***@h/0");
  EXPECT_EQ(redactUrl("redis://u:se@cret@h/0"), "redis://u:***@h/0");
  EXPECT_EQ(redactUrl("u:secret@h:6379"), "u:***@h:6379") << "a URL without a scheme";
}

TEST(RedactUrl, LeavesUrlsWithoutAPasswordAsTheyAre) {
  for (llvm::StringRef url : {"redis://h:1/0", "redis://u@h", "http://h/path@x",
                              "redis+unix:/run/redis.sock", "https://h/a?b=c", ""})
    EXPECT_EQ(redactUrl(url), url.str());
}

TEST(OpenRemoteStore, AcceptsEveryDocumentedFormWithoutConnecting) {
  // Nothing listens at any of these: opening must not try.
  for (llvm::StringRef url :
       {"redis://127.0.0.1", "redis://127.0.0.1:1/0", "redis://u:p@127.0.0.1:1/15",
        "redis://:p@localhost:1", "redis://[::1]:1/2", "REDIS://127.0.0.1:1",
        "redis+unix:///nonexistent/redis.sock", "redis+unix:/nonexistent/redis.sock",
        "redis+unix://u:p@/nonexistent/redis.sock?db=3", "http://127.0.0.1:1",
        "https://127.0.0.1:1/base/path/", "http://u@127.0.0.1:1/x", "http://[::1]:1/"}) {
    llvm::Expected<std::unique_ptr<RemoteStore>> store = openRemoteStore(endpointAt(url.str()));
    EXPECT_TRUE(static_cast<bool>(store))
        << url.str() << " was refused: " << llvm::toString(store.takeError());
  }
}

TEST(OpenRemoteStore, UnknownSchemeListsTheSupportedOnes) {
  std::string message = openingError("ftp://u:secret@h/x");
  EXPECT_NE(message.find("'ftp://u:***@h/x'"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown scheme 'ftp'"), std::string::npos) << message;
  EXPECT_NE(message.find("redis, redis+unix, http, https"), std::string::npos) << message;
  EXPECT_NE(openingError("rediss://h").find("unknown scheme 'rediss'"), std::string::npos);
  EXPECT_NE(openingError("cache.example.com:6379").find("unknown scheme"), std::string::npos)
      << "a host and port without a scheme read as scheme 'cache.example.com'";
  EXPECT_NE(openingError("/just/a/path").find("has no scheme"), std::string::npos);
}

TEST(OpenRemoteStore, BadPortIsNamed) {
  for (llvm::StringRef url : {"redis://h:99999", "redis://h:abc/0", "http://h:0/", "http://h:/",
                              "https://u:secret@h:-1/"}) {
    std::string message = openingError(url);
    EXPECT_NE(message.find("bad port"), std::string::npos) << url.str() << ": " << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;
  }
}

TEST(OpenRemoteStore, EmptyHostIsNamed) {
  for (llvm::StringRef url : {"redis://", "redis://:6379/0", "redis:/h", "http:///path",
                              "https://u:secret@/x", "http:h"}) {
    std::string message = openingError(url);
    EXPECT_NE(message.find("has no host"), std::string::npos) << url.str() << ": " << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;
  }
}

TEST(OpenRemoteStore, DatabaseThatIsNotANumberIsNamed) {
  for (llvm::StringRef url : {"redis://h/abc", "redis://h/1/2", "redis://h/-1",
                              "redis+unix:///run/redis.sock?db=x", "redis+unix:/s?db=1x"}) {
    std::string message = openingError(url);
    EXPECT_NE(message.find("is not a number"), std::string::npos) << url.str() << ": " << message;
  }
}

TEST(OpenRemoteStore, UnusableUnixSocketUrlsAreNamed) {
  EXPECT_NE(openingError("redis+unix://host/run/redis.sock").find("names a host"),
            std::string::npos);
  EXPECT_NE(openingError("redis+unix://").find("no absolute socket path"), std::string::npos);
  EXPECT_NE(openingError("redis+unix:relative.sock").find("no absolute socket path"),
            std::string::npos);
  EXPECT_NE(openingError("redis+unix:///s?timeout=1").find("takes only ?db=N"), std::string::npos);
  EXPECT_NE(openingError("redis://h/0?db=1").find("database as its path"), std::string::npos);
}

TEST(OpenRemoteStore, OtherUnusableUrlsAreNamed) {
  EXPECT_NE(openingError("http://h/a?x=1").find("has a query"), std::string::npos);
  EXPECT_NE(openingError("http://h/a#top").find("fragment"), std::string::npos);
  EXPECT_NE(openingError("http://h/a b").find("space"), std::string::npos);
  EXPECT_NE(openingError("http://u:p%zz@h/").find("two hex digits"), std::string::npos);
  EXPECT_NE(openingError("http://[::1/").find("without a ']'"), std::string::npos);
}

TEST(OpenRemoteStore, UnknownLayoutAndBadTimeOutsAreNamed) {
  Endpoint endpoint = endpointAt("http://u:secret@h/");
  endpoint.layout = "deep";
  std::string message = openingError(endpoint);
  EXPECT_NE(message.find("unknown layout 'deep' (flat, subdirs, bazel)"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("secret"), std::string::npos) << message;

  Endpoint zero = endpointAt("redis://h");
  zero.operationTimeout = std::chrono::milliseconds(0);
  EXPECT_NE(openingError(zero).find("not positive"), std::string::npos);
}

TEST(OpenRemoteStore, BearerTokenWithALineBreakIsRefused) {
  Endpoint endpoint = endpointAt("https://h/");
  endpoint.bearerToken = "token\r\nX-Injected: yes";
  std::string message = openingError(endpoint);
  EXPECT_NE(message.find("bearer token"), std::string::npos) << message;
  EXPECT_EQ(message.find("token\r\n"), std::string::npos) << "the message shows the token";
}

TEST(RemoteStore, DisplayNameHidesThePassword) {
  for (llvm::StringRef url : {"redis://u:s3cret@127.0.0.1:1/0", "http://u:s3cret@127.0.0.1:1/x"}) {
    std::unique_ptr<RemoteStore> store = openStore(endpointAt(url.str()));
    ASSERT_TRUE(store);
    EXPECT_EQ(store->displayName(), redactUrl(url));
    EXPECT_EQ(store->displayName().find("s3cret"), std::string::npos);
  }
}

TEST(RemoteStore, KeysThatAreNotHexAreRefusedBeforeAnyRequest) {
  for (llvm::StringRef url : {"redis://127.0.0.1:1", "http://127.0.0.1:1/"}) {
    std::unique_ptr<RemoteStore> store = openStore(endpointAt(url.str()));
    ASSERT_TRUE(store);
    std::string shortKey = objectKey(1).substr(1);
    for (llvm::StringRef key :
         {llvm::StringRef("../../etc/passwd"), llvm::StringRef(""),
          llvm::StringRef("ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"),
          llvm::StringRef(shortKey)}) {
      Failure got = failureOf(store->get(key));
      EXPECT_FALSE(got.kind) << url.str() << ": key '" << key.str() << "' gave "
                             << kindName(got.kind) << ", not the caller's error";
      EXPECT_NE(got.message.find("not a remote object key"), std::string::npos) << got.message;
      Failure put = failureOf(store->put(key, "bytes"));
      EXPECT_FALSE(put.kind) << url.str() << ": put of key '" << key.str() << "' was sent";
    }
  }
}

} // namespace
} // namespace kiln::cache::remote::testing
