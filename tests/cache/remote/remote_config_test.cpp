//===- tests/cache/remote/remote_config_test.cpp - Naming remotes ---------===//
//
// How remotes are written (a URL, then ccache-style attributes), where they
// come from (flags over the environment), and how keys spread over shards.
//
//===----------------------------------------------------------------------===//

#include "cache/remote/remote_config.h"

#include <gtest/gtest.h>

#include <map>

namespace kiln::cache::remote {
namespace {

RemoteConfig parsed(llvm::StringRef text) {
  llvm::Expected<RemoteConfig> config = parseRemoteConfig(text);
  if (!config) {
    ADD_FAILURE() << text.str() << " did not parse: " << llvm::toString(config.takeError());
    return {};
  }
  return std::move(*config);
}

std::string errorOf(llvm::StringRef text) {
  llvm::Expected<RemoteConfig> config = parseRemoteConfig(text);
  if (config) {
    ADD_FAILURE() << text.str() << " parsed, but it should not";
    return "";
  }
  return llvm::toString(config.takeError());
}

TEST(RemoteConfig, ReadsEveryAttribute) {
  RemoteConfig config = parsed("http://u:pw@cache-*.example/kiln|read-only|connect-timeout=50|"
                               "operation-timeout=2s|upload-wait=500ms|layout=subdirs|"
                               "shards=a,b(3)|bearer-token-env=TOKEN|password-env=PW|"
                               "ca-file=/etc/ca.pem|insecure-skip-signature");
  EXPECT_EQ(config.url, "http://u:pw@cache-*.example/kiln");
  EXPECT_EQ(config.displayName, "http://u:***@cache-*.example/kiln")
      << "the password shows in messages";
  EXPECT_TRUE(config.readOnly);
  EXPECT_EQ(config.connectTimeout.count(), 50);
  EXPECT_EQ(config.operationTimeout.count(), 2000);
  EXPECT_EQ(config.uploadWait.count(), 500);
  EXPECT_EQ(config.layout, "subdirs");
  ASSERT_EQ(config.shards.size(), 2u);
  EXPECT_EQ(config.shards[1].name, "b");
  EXPECT_EQ(config.shards[1].weight, 3u);
  EXPECT_EQ(config.bearerTokenEnv.value_or(""), "TOKEN");
  EXPECT_EQ(config.passwordEnv.value_or(""), "PW");
  EXPECT_EQ(config.caFile, "/etc/ca.pem");
  EXPECT_TRUE(config.skipSignature);
}

TEST(RemoteConfig, DefaultsAreReadWriteSignedAndBounded) {
  RemoteConfig config = parsed("redis://localhost:6379");
  EXPECT_FALSE(config.readOnly);
  EXPECT_FALSE(config.skipSignature);
  EXPECT_GT(config.connectTimeout.count(), 0);
  EXPECT_GT(config.operationTimeout.count(), 0);
  EXPECT_TRUE(parsed("redis+unix:///run/redis.sock").shards.empty());
  EXPECT_FALSE(parsed("redis://h|read-only=false").readOnly);
}

TEST(RemoteConfig, RejectsWhatCannotWork) {
  EXPECT_NE(errorOf("ftp://h/x").find("redis://"), std::string::npos)
      << "an unknown scheme's error lists the known ones";
  EXPECT_NE(errorOf("redis://h|colour=blue").find("unknown attribute 'colour'"), std::string::npos);
  EXPECT_NE(errorOf("redis://h|connect-timeout=soon").find("not a time"), std::string::npos);
  EXPECT_NE(errorOf("redis://h|operation-timeout=0").find("time-out of 0"), std::string::npos);
  EXPECT_NE(errorOf("redis://h|layout=flat").find("http"), std::string::npos)
      << "a Redis remote took an HTTP layout";
  EXPECT_NE(errorOf("http://h|layout=deep").find("flat, subdirs, bazel"), std::string::npos);
  EXPECT_NE(errorOf("http://h-*.x").find("no shards"), std::string::npos);
  EXPECT_NE(errorOf("http://h.x|shards=a,b").find("'*'"), std::string::npos);
  EXPECT_NE(errorOf("http://h-*.x|shards=a,b(0)").find("weight"), std::string::npos);
  EXPECT_NE(errorOf("http://h|bearer-token-env=s3cr3t-t0ken!").find("environment variable"),
            std::string::npos)
      << "a secret written as the attribute's value was taken for a variable's name";
}

TEST(RemoteConfig, ErrorsNeverShowThePassword) {
  std::string error = errorOf("redis://user:hunter2@h:1|colour=blue");
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  EXPECT_NE(error.find("user:***@h:1"), std::string::npos) << error;
}

TEST(RemoteConfig, FlagsWinOverTheEnvironment) {
  RemoteFlags flags;
  flags.urls = {"redis://from-flag"};
  auto fromFlags = llvm::cantFail(resolveRemoteConfigs(flags, std::string("redis://from-env")));
  ASSERT_EQ(fromFlags.size(), 1u);
  EXPECT_EQ(fromFlags[0].url, "redis://from-flag");

  auto fromEnvironment = llvm::cantFail(
      resolveRemoteConfigs({}, std::string("redis://a|read-only  http://b/c|layout=bazel")));
  ASSERT_EQ(fromEnvironment.size(), 2u) << "$KILN_REMOTE_CACHE lists remotes separated by spaces";
  EXPECT_TRUE(fromEnvironment[0].readOnly);
  EXPECT_EQ(fromEnvironment[1].layout, "bazel");

  EXPECT_TRUE(llvm::cantFail(resolveRemoteConfigs({}, std::string("off"))).empty());
  RemoteFlags disabled;
  disabled.disabled = true;
  EXPECT_TRUE(llvm::cantFail(resolveRemoteConfigs(disabled, std::string("redis://a"))).empty())
      << "--no-remote-cache left a remote on";
  llvm::Expected<std::vector<RemoteConfig>> bad =
      resolveRemoteConfigs({}, std::string("redis://a|nope"));
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("$KILN_REMOTE_CACHE"), std::string::npos)
      << "the error does not say where the bad remote came from";
}

TEST(RemoteConfig, SecretsComeFromTheVariablesNamed) {
  RemoteConfig config = parsed("http://*.cache/x|shards=eu,us|bearer-token-env=TOKEN");
  auto environment = [](llvm::StringRef name) -> std::optional<std::string> {
    if (name == "TOKEN")
      return std::string("abc");
    return std::nullopt;
  };
  Endpoint endpoint = llvm::cantFail(endpointFor(config, "eu", environment));
  EXPECT_EQ(endpoint.url, "http://eu.cache/x");
  EXPECT_EQ(endpoint.bearerToken, "abc");

  RemoteConfig missing = parsed("http://h/x|password-env=UNSET_PASSWORD");
  llvm::Expected<Endpoint> none = endpointFor(missing, "", environment);
  ASSERT_FALSE(static_cast<bool>(none)) << "an unset secret variable went unnoticed";
  EXPECT_NE(llvm::toString(none.takeError()).find("$UNSET_PASSWORD"), std::string::npos);
}

TEST(RemoteConfig, ShardsShareKeysByWeightAndMoveFewWhenOneIsAdded) {
  std::vector<Shard> three{{"a", 1}, {"b", 1}, {"c", 2}};
  std::map<size_t, int> counts;
  std::vector<size_t> before;
  for (int i = 0; i < 4000; ++i) {
    std::string key = "key" + std::to_string(i);
    size_t shard = shardFor(three, key);
    before.push_back(shard);
    ++counts[shard];
  }
  EXPECT_NEAR(counts[0], 1000, 150);
  EXPECT_NEAR(counts[1], 1000, 150);
  EXPECT_NEAR(counts[2], 2000, 150) << "a shard of weight 2 did not take twice the keys";

  std::vector<Shard> four = three;
  four.push_back({"d", 1});
  int moved = 0;
  for (int i = 0; i < 4000; ++i) {
    size_t shard = shardFor(four, "key" + std::to_string(i));
    if (shard != before[i]) {
      ++moved;
      EXPECT_EQ(shard, 3u) << "a key moved between two shards that were there before";
    }
  }
  EXPECT_NEAR(moved, 800, 150) << "the new shard did not take its share (1/5)";
}

} // namespace
} // namespace kiln::cache::remote
