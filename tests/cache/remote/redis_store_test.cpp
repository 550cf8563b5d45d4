//===- tests/cache/remote/redis_store_test.cpp - The Redis store, against redis-server ---===//

#include "tests/cache/remote/loopback_servers.h"
#include "tests/cache/remote/store_test_support.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringExtras.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace kiln::cache::remote::testing {
namespace {

using std::chrono::milliseconds;

constexpr llvm::StringLiteral kPassword = "redis-s3cret-pa55";

/// Redis's answer to `command` (inline form, no AUTH) on a connection of its own.
std::string askRedis(uint16_t port, llvm::StringRef command) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0) {
    std::string line = command.str() + "\r\n";
    if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size())) {
      char buffer[4096];
      ssize_t count = ::read(fd, buffer, sizeof buffer);
      if (count > 0)
        answer.assign(buffer, static_cast<size_t>(count));
    }
  }
  ::close(fd);
  return answer;
}

uint16_t portOf(const RedisServer &server) {
  std::string url = server.url();
  unsigned port = 0;
  (void)llvm::StringRef(url).rsplit(':').second.getAsInteger(10, port);
  return static_cast<uint16_t>(port);
}

TEST(RedisStore, PutThenGetReturnsTheSameBytes) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  // Empty, small, and large enough to be sent from the caller's memory.
  for (size_t size : {size_t(0), size_t(100), size_t(300 * 1024)}) {
    std::string key = objectKey(static_cast<unsigned>(size));
    std::string bytes = objectBytes(size);
    ASSERT_FALSE(failureOf(store->put(key, bytes)).kind) << "put of " << size << " bytes failed";
    llvm::Expected<std::optional<std::string>> got = store->get(key);
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_TRUE(got->has_value()) << "an object just put is missing";
    EXPECT_EQ(**got, bytes) << "the " << size << " bytes came back changed";
  }
  EXPECT_EQ(askRedis(portOf(*server), "EXISTS kiln:" + objectKey(100)), ":1\r\n")
      << "the object is not under the Redis key kiln:<key>";
}

TEST(RedisStore, PutReplacesWhatWasThere) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), "first")).kind);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), "second")).kind);
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(1));
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(**got, "second");
}

TEST(RedisStore, MissingKeyIsAMiss) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(7));
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  EXPECT_FALSE(got->has_value()) << "a key never put was found";
}

TEST(RedisStore, UsesTheDatabaseOfTheUrl) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> second = openStore(patientEndpoint(server->url("", "/2")));
  std::unique_ptr<RemoteStore> first = openStore(patientEndpoint(server->url("", "/")));
  ASSERT_TRUE(second && first);
  ASSERT_FALSE(failureOf(second->put(objectKey(1), "in database 2")).kind);
  llvm::Expected<std::optional<std::string>> elsewhere = first->get(objectKey(1));
  ASSERT_TRUE(static_cast<bool>(elsewhere)) << llvm::toString(elsewhere.takeError());
  EXPECT_FALSE(elsewhere->has_value()) << "database 0 sees what was put in database 2";
  llvm::Expected<std::optional<std::string>> there = second->get(objectKey(1));
  ASSERT_TRUE(there && there->has_value());
  EXPECT_EQ(**there, "in database 2");
}

TEST(RedisStore, DatabaseOutOfRangeIsAServerErrorWithRedisMessage) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url("", "/99")));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::ServerError) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("DB index is out of range"), std::string::npos) << got.message;
}

TEST(RedisStore, UnixSocketRoundTripsInEverySpelling) {
  RedisOptions options;
  options.unixSocket = true;
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::string path = server->socketPath();
  std::unique_ptr<RemoteStore> slashes =
      openStore(patientEndpoint("redis+unix://" + path + "?db=3"));
  std::unique_ptr<RemoteStore> bare = openStore(patientEndpoint("redis+unix:" + path + "?db=3"));
  std::unique_ptr<RemoteStore> tcp = openStore(patientEndpoint(server->url("", "/3")));
  ASSERT_TRUE(slashes && bare && tcp);
  ASSERT_FALSE(failureOf(slashes->put(objectKey(1), "over the socket")).kind);
  for (RemoteStore *store : {bare.get(), tcp.get()}) {
    llvm::Expected<std::optional<std::string>> got = store->get(objectKey(1));
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_TRUE(got->has_value()) << store->displayName() << " does not see the object";
    EXPECT_EQ(**got, "over the socket");
  }
}

TEST(RedisStore, PasswordFromTheUrlOrTheEndpointLogsIn) {
  RedisOptions options;
  options.password = kPassword.str();
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> inUrl =
      openStore(patientEndpoint(server->url(":" + kPassword.str())));
  Endpoint separate = patientEndpoint(server->url());
  separate.password = kPassword.str();
  std::unique_ptr<RemoteStore> fromEndpoint = openStore(separate);
  ASSERT_TRUE(inUrl && fromEndpoint);
  ASSERT_FALSE(failureOf(inUrl->put(objectKey(1), "a")).kind);
  llvm::Expected<std::optional<std::string>> got = fromEndpoint->get(objectKey(1));
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  EXPECT_TRUE(got->has_value());
}

TEST(RedisStore, WrongOrMissingPasswordIsUnauthorized) {
  RedisOptions options;
  options.password = kPassword.str();
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> wrong = openStore(patientEndpoint(server->url(":wrong-pa55")));
  std::unique_ptr<RemoteStore> none = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(wrong && none);
  Failure wrongGet = failureOf(wrong->get(objectKey(1)));
  EXPECT_EQ(wrongGet.kind, RemoteFailure::Unauthorized)
      << kindName(wrongGet.kind) << ": " << wrongGet.message;
  EXPECT_NE(wrongGet.message.find("WRONGPASS"), std::string::npos) << wrongGet.message;
  Failure nonePut = failureOf(none->put(objectKey(1), "a"));
  EXPECT_EQ(nonePut.kind, RemoteFailure::Unauthorized)
      << kindName(nonePut.kind) << ": " << nonePut.message;
  EXPECT_NE(nonePut.message.find("NOAUTH"), std::string::npos) << nonePut.message;
}

TEST(RedisStore, AclUserLogsInAndIsRefusedWhatItMayNotDo) {
  RedisOptions options;
  options.extraArguments = {"--user", "reader", "on", ">reader-pa55", "~kiln:*", "+get"};
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store =
      openStore(patientEndpoint(server->url("reader:reader-pa55")));
  ASSERT_TRUE(store);
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(1));
  ASSERT_TRUE(static_cast<bool>(got)) << "the user may GET: " << llvm::toString(got.takeError());
  Failure put = failureOf(store->put(objectKey(1), "a"));
  EXPECT_EQ(put.kind, RemoteFailure::Unauthorized) << kindName(put.kind) << ": " << put.message;
  EXPECT_NE(put.message.find("NOPERM"), std::string::npos) << put.message;

  std::unique_ptr<RemoteStore> wrong = openStore(patientEndpoint(server->url("reader:nope")));
  ASSERT_TRUE(wrong);
  Failure refused = failureOf(wrong->get(objectKey(1)));
  EXPECT_EQ(refused.kind, RemoteFailure::Unauthorized) << kindName(refused.kind);
  EXPECT_NE(refused.message.find("as 'reader'"), std::string::npos) << refused.message;
}

TEST(RedisStore, NothingListeningIsUnreachable) {
  Endpoint endpoint = patientEndpoint("redis://127.0.0.1:" + std::to_string(freeLoopbackPort()));
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  Failure got = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::Unreachable) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find(store->displayName()), std::string::npos) << got.message;

  std::unique_ptr<RemoteStore> socket =
      openStore(patientEndpoint("redis+unix:/nonexistent/r.sock"));
  ASSERT_TRUE(socket);
  Failure missing = failureOf(socket->put(objectKey(1), "a"));
  EXPECT_EQ(missing.kind, RemoteFailure::Unreachable) << kindName(missing.kind);
}

TEST(RedisStore, ServerThatNeverAcceptsIsUnreachableAfterTheConnectTimeOut) {
  llvm::Expected<std::unique_ptr<UnansweredListener>> listener = UnansweredListener::start();
  ASSERT_TRUE(static_cast<bool>(listener)) << llvm::toString(listener.takeError());
  Endpoint endpoint = patientEndpoint("redis://127.0.0.1:" + std::to_string((*listener)->port()));
  endpoint.connectTimeout = milliseconds(200);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  Failure got;
  milliseconds took = timeOf([&] { got = failureOf(store->get(objectKey(1))); });
  EXPECT_EQ(got.kind, RemoteFailure::Unreachable) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, 10 * endpoint.connectTimeout) << "the request hung";
}

TEST(RedisStore, PausedServerTimesOutAndTheFailedConnectionIsNotReused) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(server->url());
  endpoint.operationTimeout = milliseconds(300);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), "first")).kind);
  ASSERT_FALSE(failureOf(store->put(objectKey(2), "second")).kind);

  server->process().pause();
  // Once on the connection kept from the puts, once on a new one (the
  // kernel still accepts it; nobody answers).
  for (int attempt = 0; attempt < 2; ++attempt) {
    Failure got;
    milliseconds took = timeOf([&] { got = failureOf(store->get(objectKey(1))); });
    EXPECT_EQ(got.kind, RemoteFailure::TimedOut)
        << "attempt " << attempt << ": " << kindName(got.kind) << ": " << got.message;
    EXPECT_LT(took, 10 * endpoint.operationTimeout) << "the request hung";
  }
  server->process().resume();

  // The timed-out GETs' answers now arrive on their connections; reading
  // one of them would return "first" for the second key.
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(2));
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "second") << "a connection that failed was used again";
}

TEST(RedisStore, ReconnectsWhenTheServerClosedAnIdleConnection) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), "a")).kind);
  ASSERT_NE(askRedis(portOf(*server), "CLIENT KILL TYPE normal").find(":"), std::string::npos);
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(1));
  ASSERT_TRUE(static_cast<bool>(got))
      << "the closed connection was used: " << llvm::toString(got.takeError());
  EXPECT_TRUE(got->has_value());
}

/// How many connections Redis has accepted so far, this question's included.
unsigned connectionsReceived(uint16_t port) {
  std::string stats = askRedis(port, "INFO stats");
  llvm::StringRef field = "total_connections_received:";
  size_t at = stats.find(field.str());
  unsigned connections = 0;
  if (at == std::string::npos || llvm::StringRef(stats)
                                     .drop_front(at + field.size())
                                     .take_while(llvm::isDigit)
                                     .getAsInteger(10, connections))
    ADD_FAILURE() << "no connection count in INFO stats: " << stats;
  return connections;
}

TEST(RedisStore, ReusesItsConnection) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  unsigned before = connectionsReceived(portOf(*server));
  for (unsigned i = 0; i < 20; ++i) {
    ASSERT_FALSE(failureOf(store->put(objectKey(i), "a")).kind);
    ASSERT_TRUE(static_cast<bool>(store->get(objectKey(i))));
  }
  unsigned made = connectionsReceived(portOf(*server)) - before - 1;
  EXPECT_EQ(made, 1u) << "40 requests from one thread made " << made << " connections";
}

TEST(RedisStore, MaxMemoryReachedIsFull) {
  RedisOptions options;
  options.extraArguments = {"--maxmemory", "1mb", "--maxmemory-policy", "noeviction"};
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  Failure got;
  for (unsigned i = 0; i < 40 && !got.kind; ++i)
    got = failureOf(store->put(objectKey(i), objectBytes(100 * 1024, i)));
  EXPECT_EQ(got.kind, RemoteFailure::Full) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("OOM"), std::string::npos) << got.message;
}

TEST(RedisStore, ObjectOverRedisBulkLimitIsTooLarge) {
  RedisOptions options;
  options.extraArguments = {"--proto-max-bulk-len", "1mb"};
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->put(objectKey(1), objectBytes(3 << 20)));
  EXPECT_EQ(got.kind, RemoteFailure::TooLarge) << kindName(got.kind) << ": " << got.message;
  // And the store goes on working after Redis closed that connection.
  EXPECT_FALSE(failureOf(store->put(objectKey(2), objectBytes(1000))).kind);
}

TEST(RedisStore, ObjectLargerThanMaxObjectBytesIsABadReply) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> writer = openStore(patientEndpoint(server->url()));
  Endpoint small = patientEndpoint(server->url());
  small.maxObjectBytes = 1000;
  std::unique_ptr<RemoteStore> reader = openStore(small);
  ASSERT_TRUE(writer && reader);
  ASSERT_FALSE(failureOf(writer->put(objectKey(1), objectBytes(1001))).kind);
  ASSERT_FALSE(failureOf(writer->put(objectKey(2), objectBytes(1000))).kind);
  Failure got = failureOf(reader->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::BadReply) << kindName(got.kind) << ": " << got.message;
  llvm::Expected<std::optional<std::string>> fits = reader->get(objectKey(2));
  ASSERT_TRUE(static_cast<bool>(fits))
      << "an object of exactly the limit was refused: " << llvm::toString(fits.takeError());
  EXPECT_EQ(fits->value_or(""), objectBytes(1000));
}

TEST(RedisStore, ReplyAnnouncingMoreThanTheLimitIsRefusedBeforeItArrives) {
  // A server that announces 100 GB and sends none of it: waiting for the
  // body would end only with the time-out.
  llvm::Expected<std::unique_ptr<ScriptedServer>> server =
      ScriptedServer::start("$100000000000\r\nabc", "");
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  Endpoint endpoint = patientEndpoint("redis://127.0.0.1:" + std::to_string((*server)->port()));
  endpoint.operationTimeout = milliseconds(60000);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  Failure got;
  milliseconds took = timeOf([&] { got = failureOf(store->get(objectKey(1))); });
  EXPECT_EQ(got.kind, RemoteFailure::BadReply) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, endpoint.operationTimeout / 2) << "the store waited for the announced bytes";
}

TEST(RedisStore, ReplyOfTheWrongTypeIsABadReply) {
  llvm::Expected<std::unique_ptr<ScriptedServer>> server = ScriptedServer::start(":1\r\n", "");
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  std::unique_ptr<RemoteStore> store =
      openStore(patientEndpoint("redis://127.0.0.1:" + std::to_string((*server)->port())));
  ASSERT_TRUE(store);
  Failure get = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(get.kind, RemoteFailure::BadReply) << kindName(get.kind) << ": " << get.message;
  Failure put = failureOf(store->put(objectKey(1), "a"));
  EXPECT_EQ(put.kind, RemoteFailure::BadReply) << kindName(put.kind) << ": " << put.message;
}

TEST(RedisStore, MessagesNeverContainThePassword) {
  RedisOptions options;
  options.password = kPassword.str();
  std::unique_ptr<RedisServer> server = startServer<RedisServer>(options);
  ASSERT_TRUE(server);
  std::vector<std::string> messages;
  auto collect = [&](const Endpoint &endpoint, bool put) {
    llvm::Expected<std::unique_ptr<RemoteStore>> store = openRemoteStore(endpoint);
    if (!store) {
      messages.push_back(llvm::toString(store.takeError()));
      return;
    }
    messages.push_back((*store)->displayName());
    messages.push_back(put ? failureOf((*store)->put(objectKey(1), "a")).message
                           : failureOf((*store)->get(objectKey(1))).message);
  };
  // The secret is the wrong password here, sent and refused.
  collect(patientEndpoint(server->url("u:" + kPassword.str() + "x")), false);
  collect(patientEndpoint(server->url(":" + kPassword.str() + "x")), true);
  Endpoint separate = patientEndpoint(server->url("", "/99"));
  separate.password = kPassword.str();
  collect(separate, false);
  collect(patientEndpoint("redis://:" + kPassword.str() +
                          "@127.0.0.1:" + std::to_string(freeLoopbackPort())),
          true);
  collect(patientEndpoint("redis://:" + kPassword.str() + "@127.0.0.1:bad"), false);
  collect(patientEndpoint("redis+unix://u:" + kPassword.str() + "@host/s"), false);
  for (const std::string &message : messages)
    EXPECT_EQ(message.find(kPassword), std::string::npos)
        << "a message shows the password: " << message;
}

TEST(RedisStore, PasswordEchoedByTheServerIsHidden) {
  llvm::Expected<std::unique_ptr<ScriptedServer>> server =
      ScriptedServer::start("-ERR no such password: " + kPassword.str() + "\r\n", "");
  ASSERT_TRUE(static_cast<bool>(server)) << llvm::toString(server.takeError());
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(
      "redis://:" + kPassword.str() + "@127.0.0.1:" + std::to_string((*server)->port())));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::Unauthorized) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("no such password: ***"), std::string::npos) << got.message;
}

TEST(RedisStore, ManyThreadsShareOneStore) {
  std::unique_ptr<RedisServer> server = startServer<RedisServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  constexpr unsigned kThreads = 8, kObjectsEach = 40;
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (unsigned thread = 0; thread < kThreads; ++thread)
    threads.emplace_back([&, thread] {
      for (unsigned i = 0; i < kObjectsEach && problems[thread].empty(); ++i) {
        unsigned seed = thread * 1000 + i;
        std::string bytes = objectBytes(seed % 5000, seed);
        if (llvm::Error error = store->put(objectKey(seed), bytes)) {
          problems[thread] = "put: " + llvm::toString(std::move(error));
          break;
        }
        llvm::Expected<std::optional<std::string>> got = store->get(objectKey(seed));
        if (!got)
          problems[thread] = "get: " + llvm::toString(got.takeError());
        else if (!got->has_value() || **got != bytes)
          problems[thread] = "object " + std::to_string(seed) + " came back wrong";
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (unsigned thread = 0; thread < kThreads; ++thread)
    EXPECT_EQ(problems[thread], "") << "thread " << thread;
}

} // namespace
} // namespace kiln::cache::remote::testing
