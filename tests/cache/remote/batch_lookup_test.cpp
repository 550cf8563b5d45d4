//===- tests/cache/remote/batch_lookup_test.cpp - Lookups in batches ---===//

#include "cache/remote/remote_entry.h"
#include "cache/remote/remote_tier.h"
#include "tests/cache/remote/loopback_servers.h"
#include "tests/cache/remote/store_test_support.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/MemoryBuffer.h>

#include <thread>

namespace kiln::cache::remote::testing {
namespace {

using std::chrono::milliseconds;

/// Puts objects 0..count-1 but every third, sizes up to 70 KB; returns the
/// keys of all, in order.
std::vector<std::string> fill(RemoteStore &store, unsigned count) {
  std::vector<std::string> keys;
  for (unsigned i = 0; i < count; ++i) {
    keys.push_back(objectKey(i));
    if (i % 3 != 2)
      EXPECT_FALSE(failureOf(store.put(keys.back(), objectBytes(i * 2311 % 70000, i))).kind);
  }
  return keys;
}

/// Checks that `got` holds what fill() put, in order.
void expectFilled(llvm::Expected<std::vector<std::optional<std::string>>> got, size_t count) {
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(got->size(), count);
  for (unsigned i = 0; i < count; ++i) {
    if (i % 3 == 2)
      EXPECT_FALSE((*got)[i].has_value()) << "object " << i << " was never put";
    else
      EXPECT_EQ((*got)[i].value_or("(missing)"), objectBytes(i * 2311 % 70000, i))
          << "object " << i << " came back wrong or in the wrong place";
  }
}

TEST(BatchLookup, RedisAnswersABatchInOrderHitsAndMisses) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  std::vector<std::string> keys = fill(*store, kBatchKeys);
  expectFilled(store->getMany(keys), keys.size());
  // The connection is in step after a batch: the next request gets its own answer.
  expectFilled(store->getMany(llvm::ArrayRef(keys).take_front(5)), 5);
  llvm::Expected<std::optional<std::string>> one = store->get(keys[1]);
  ASSERT_TRUE(one && one->has_value());
  EXPECT_EQ(**one, objectBytes(2311, 1));
  llvm::Expected<std::vector<std::optional<std::string>>> none = store->getMany({});
  ASSERT_TRUE(none && none->empty());
}

TEST(BatchLookup, RedisUserAllowedOnlyGetMayBatch) {
  RedisOptions options;
  options.extraArguments = {"--user", "reader", "on", ">reader-pa55", "~kiln:*", "+get"};
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store =
      openStore(patientEndpoint(server->url("reader:reader-pa55")));
  ASSERT_TRUE(store);
  llvm::Expected<std::vector<std::optional<std::string>>> got =
      store->getMany({objectKey(1), objectKey(2)});
  ASSERT_TRUE(static_cast<bool>(got))
      << "a batch needs more than +get: " << llvm::toString(got.takeError());
  EXPECT_EQ(got->size(), 2u);
}

TEST(BatchLookup, RedisClosingTheConnectionMidBatchFailsTheBatchOnly) {
  // Answers the first GET, then hangs up on the rest.
  llvm::Expected<std::unique_ptr<ScriptedServer>> server =
      ScriptedServer::start("$5\r\nfirst\r\n", "", /*hangUp=*/true);
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  std::unique_ptr<RemoteStore> store =
      openStore(patientEndpoint("redis://127.0.0.1:" + std::to_string((*server)->port())));
  ASSERT_TRUE(store);
  Failure got;
  milliseconds took =
      timeOf([&] { got = failureOf(store->getMany({objectKey(1), objectKey(2), objectKey(3)})); });
  EXPECT_EQ(got.kind, RemoteFailure::ServerError) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("closed the connection"), std::string::npos) << got.message;
  EXPECT_LT(took, milliseconds(2500)) << "the batch waited for answers that never came";
}

TEST(BatchLookup, RedisPausedMidBatchTimesOutAndTheConnectionIsNotReused) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(server->url());
  endpoint.operationTimeout = milliseconds(300);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  std::vector<std::string> keys = fill(*store, 6);
  server->process().pause();
  Failure got;
  milliseconds took = timeOf([&] { got = failureOf(store->getMany(keys)); });
  EXPECT_EQ(got.kind, RemoteFailure::TimedOut) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, 10 * endpoint.operationTimeout) << "the batch hung";
  server->process().resume();
  // The timed-out batch's answers now arrive on its connection; reading them
  // would answer this batch with the objects of other keys.
  llvm::Expected<std::vector<std::optional<std::string>>> after =
      store->getMany({keys[4], keys[3]});
  ASSERT_TRUE(static_cast<bool>(after)) << llvm::toString(after.takeError());
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].value_or(""), objectBytes(4 * 2311 % 70000, 4))
      << "a connection that failed was used again";
  EXPECT_EQ((*after)[1].value_or(""), objectBytes(3 * 2311 % 70000, 3));
}

TEST(BatchLookup, RedisAnswersLargerTogetherThanTheLimitAreABadReply) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> writer = openStore(patientEndpoint(server->url()));
  Endpoint small = patientEndpoint(server->url());
  small.maxObjectBytes = 1500;
  std::unique_ptr<RemoteStore> reader = openStore(small);
  ASSERT_TRUE(writer && reader);
  ASSERT_FALSE(failureOf(writer->put(objectKey(1), objectBytes(1000))).kind);
  ASSERT_FALSE(failureOf(writer->put(objectKey(2), objectBytes(1000))).kind);
  Failure got = failureOf(reader->getMany({objectKey(1), objectKey(2)}));
  EXPECT_EQ(got.kind, RemoteFailure::BadReply) << kindName(got.kind) << ": " << got.message;
  llvm::Expected<std::vector<std::optional<std::string>>> one = reader->getMany({objectKey(1)});
  ASSERT_TRUE(static_cast<bool>(one)) << llvm::toString(one.takeError());
}

TEST(BatchLookup, HttpAnswersABatchInOrderOverSeveralConnections) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url("/cache")));
  ASSERT_TRUE(store);
  std::vector<std::string> keys = fill(*store, kBatchKeys);
  expectFilled(store->getMany(keys), keys.size());
  expectFilled(store->getMany(keys), keys.size());
  // nginx logs a request after answering it: the last lines may come late.
  llvm::SmallVector<llvm::StringRef> lines;
  std::string log;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  size_t puts = keys.size() - keys.size() / 3, expected = puts + 2 * keys.size();
  do {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(server->accessLog());
    log = file ? (*file)->getBuffer().str() : "";
    lines.clear();
    llvm::StringRef(log).trim().split(lines, '\n', -1, /*KeepEmpty=*/false);
    if (lines.size() < expected)
      std::this_thread::sleep_for(milliseconds(20));
  } while (lines.size() < expected && std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(lines.size(), expected);
  llvm::StringSet<> connections;
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front(puts))
    connections.insert(line.split(' ').first);
  EXPECT_GT(connections.size(), 1u) << "the batches asked one request at a time";
  EXPECT_LE(connections.size(), 8u) << "the second batch did not reuse the first's connections";
}

TEST(BatchLookup, HttpRefusalFailsTheBatch) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url("/basic")));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->getMany({objectKey(1), objectKey(2)}));
  EXPECT_EQ(got.kind, RemoteFailure::Unauthorized) << kindName(got.kind) << ": " << got.message;
}

TEST(BatchLookup, HttpClosingTheConnectionMidAnswerFailsTheBatch) {
  // Promises 100 bytes, sends 5, and hangs up.
  llvm::Expected<std::unique_ptr<ScriptedServer>> server = ScriptedServer::start(
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst", "\r\n\r\n", /*hangUp=*/true);
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  std::unique_ptr<RemoteStore> store = openStore(
      patientEndpoint("http://127.0.0.1:" + std::to_string((*server)->port()) + "/cache"));
  ASSERT_TRUE(store);
  Failure got;
  milliseconds took =
      timeOf([&] { got = failureOf(store->getMany({objectKey(1), objectKey(2), objectKey(3)})); });
  EXPECT_EQ(got.kind, RemoteFailure::BadReply) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, milliseconds(2500)) << "the batch waited for answers that never came";
}

TEST(BatchLookup, HttpPausedServerTimesOutAndTheStoreRecovers) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(server->url("/cache"));
  endpoint.connectTimeout = milliseconds(300);
  endpoint.operationTimeout = milliseconds(300);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  std::vector<std::string> keys = fill(*store, 12);
  expectFilled(store->getMany(keys), keys.size());
  server->process().pause();
  Failure got;
  milliseconds took = timeOf([&] { got = failureOf(store->getMany(keys)); });
  EXPECT_EQ(got.kind, RemoteFailure::TimedOut) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, 10 * (endpoint.connectTimeout + endpoint.operationTimeout)) << "the batch hung";
  server->process().resume();
  expectFilled(store->getMany(keys), keys.size());
}

/// A tier over the one remote `url` names, trusting `trusted`: one that
/// uploads, signing with `signer`, or, without one, a read-only one.
std::unique_ptr<RemoteTier> tierFor(const std::string &url, const PublicKey &trusted,
                                    std::optional<SigningKey> signer,
                                    std::vector<std::string> &warnings) {
  llvm::Expected<RemoteConfig> config =
      parseRemoteConfig(url + "|connect-timeout=2000" + (signer ? "" : "|read-only"));
  if (!config) {
    ADD_FAILURE() << llvm::toString(config.takeError());
    return nullptr;
  }
  TierOptions options;
  options.remotes = {*config};
  options.trust.trusted = {trusted};
  options.signer = std::move(signer);
  options.getenv = [](llvm::StringRef) { return std::nullopt; };
  return std::make_unique<RemoteTier>(
      std::move(options), [&](llvm::StringRef line) { warnings.push_back(line.str()); },
      [](llvm::StringRef) {});
}

EntryContents entryFor(unsigned seed) {
  return {objectKey(seed), "ptx",
          "sm_80",         "kernels.k" + std::to_string(seed),
          nullptr,         {{"code", objectBytes(1000 + seed, seed)}}};
}

TEST(BatchLookup, TierPrefetchAnswersLaterLookupsWithoutAskingAgain) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  llvm::Expected<SigningKey> key = SigningKey::generate("ci");
  ASSERT_TRUE(static_cast<bool>(key)) << llvm::toString(key.takeError());
  PublicKey trusted = key->publicKey();
  std::vector<std::string> warnings;
  {
    std::unique_ptr<RemoteTier> uploader =
        tierFor(server->url() + "|operation-timeout=5000", trusted, std::move(*key), warnings);
    ASSERT_TRUE(uploader);
    for (unsigned seed = 0; seed < 40; ++seed)
      uploader->upload(entryFor(seed));
    uploader->finish();
    ASSERT_EQ(uploader->counters().uploads, 40u) << (warnings.empty() ? "" : warnings.front());
  }
  std::unique_ptr<RemoteTier> tier =
      tierFor(server->url() + "|operation-timeout=5000", trusted, std::nullopt, warnings);
  ASSERT_TRUE(tier);
  std::vector<std::string> keys;
  for (unsigned seed = 0; seed < 45; ++seed)
    keys.push_back(objectKey(seed));
  tier->prefetch(keys);
  // What was prefetched is answered from memory: the server may be gone.
  server->process().pause();
  for (unsigned seed = 0; seed < 45; ++seed) {
    std::optional<CachedEntry> entry = tier->lookup(objectKey(seed));
    if (seed >= 40) {
      EXPECT_FALSE(entry) << "entry " << seed << " was never uploaded";
      continue;
    }
    ASSERT_TRUE(entry) << "entry " << seed << " was not prefetched";
    EXPECT_EQ(entry->blobs["code"], objectBytes(1000 + seed, seed));
  }
  server->process().resume();
  TierCounters counters = tier->counters();
  EXPECT_EQ(counters.hits, 40u);
  EXPECT_EQ(counters.misses, 5u);
  EXPECT_EQ(counters.errors, 0u);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(BatchLookup, TierPrefetchRejectsWhatFailsItsChecks) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  llvm::Expected<SigningKey> key = SigningKey::generate("ci");
  llvm::Expected<SigningKey> stranger = SigningKey::generate("stranger");
  ASSERT_TRUE(key && stranger);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  // One entry signed by a key the reader does not trust; one stored under
  // another entry's key.
  llvm::Expected<std::string> untrusted = encodeRemoteEntry(entryFor(1), &*stranger);
  llvm::Expected<std::string> swapped = encodeRemoteEntry(entryFor(3), &*key);
  ASSERT_TRUE(untrusted && swapped);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), *untrusted)).kind);
  ASSERT_FALSE(failureOf(store->put(objectKey(2), *swapped)).kind);
  std::vector<std::string> warnings;
  std::unique_ptr<RemoteTier> tier =
      tierFor(server->url(), key->publicKey(), std::nullopt, warnings);
  ASSERT_TRUE(tier);
  tier->prefetch({objectKey(1), objectKey(2)});
  EXPECT_FALSE(tier->lookup(objectKey(1))) << "an entry signed by an untrusted key was accepted";
  EXPECT_FALSE(tier->lookup(objectKey(2))) << "another key's entry was accepted";
  EXPECT_EQ(tier->counters().rejected, 2u);
  EXPECT_EQ(warnings.size(), 1u) << "one warning per remote and build";
}

TEST(BatchLookup, TierLeavesTheKeysOfAFailedBatchToLookup) {
  // Answers the first GET of a connection with bytes that are no entry,
  // then hangs up: the batch fails; the lookup that follows, asking alone,
  // gets the bytes, and rejects them.
  llvm::Expected<std::unique_ptr<ScriptedServer>> server =
      ScriptedServer::start("$5\r\nfirst\r\n", "", /*hangUp=*/true);
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  llvm::Expected<SigningKey> key = SigningKey::generate("ci");
  ASSERT_TRUE(static_cast<bool>(key)) << llvm::toString(key.takeError());
  std::vector<std::string> warnings;
  std::unique_ptr<RemoteTier> tier =
      tierFor("redis://127.0.0.1:" + std::to_string((*server)->port()), key->publicKey(),
              std::nullopt, warnings);
  ASSERT_TRUE(tier);
  tier->prefetch({objectKey(1), objectKey(2)});
  EXPECT_EQ(tier->counters().errors, 1u) << "the batch did not fail";
  EXPECT_FALSE(tier->lookup(objectKey(1)));
  EXPECT_EQ(tier->counters().rejected, 1u) << "the lookup did not ask the server again";
}

} // namespace
} // namespace kiln::cache::remote::testing
