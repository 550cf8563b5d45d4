//===- tests/cache/remote/http_store_test.cpp - The HTTP store, against nginx ---===//

#include "tests/cache/remote/loopback_servers.h"
#include "tests/cache/remote/store_test_support.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <thread>

namespace kiln::cache::remote::testing {
namespace {

using std::chrono::milliseconds;

std::optional<std::string> readFile(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return std::nullopt;
  return (*file)->getBuffer().str();
}

void expectRoundTrip(RemoteStore &store, unsigned seed, size_t size) {
  std::string key = objectKey(seed);
  std::string bytes = objectBytes(size, seed);
  Failure put = failureOf(store.put(key, bytes));
  ASSERT_FALSE(put.kind) << store.displayName() << ": put failed: " << put.message;
  llvm::Expected<std::optional<std::string>> got = store.get(key);
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_TRUE(got->has_value()) << store.displayName() << ": an object just put is missing";
  EXPECT_EQ(**got, bytes) << store.displayName() << ": the bytes came back changed";
}

std::unique_ptr<ScriptedServer> startScripted(std::string answer) {
  llvm::Expected<std::unique_ptr<ScriptedServer>> server =
      ScriptedServer::start(std::move(answer), "\r\n\r\n");
  if (!server) {
    ADD_FAILURE() << llvm::toString(server.takeError());
    return nullptr;
  }
  return std::move(*server);
}

std::string scriptedUrl(const ScriptedServer &server) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + "/cache";
}

TEST(HttpStore, PutThenGetReturnsTheSameBytes) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url("/cache")));
  ASSERT_TRUE(store);
  for (size_t size : {size_t(0), size_t(100), size_t(900 * 1024)})
    expectRoundTrip(*store, static_cast<unsigned>(size), size);
  // Again, replacing what is there.
  expectRoundTrip(*store, 100, 200);
}

TEST(HttpStore, MissingObjectIsAMiss) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(3));
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  EXPECT_FALSE(got->has_value()) << "an object never put was found";
}

TEST(HttpStore, EveryLayoutPlacesTheObjectWhereDocumented) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::string key = objectKey(5);
  struct Case {
    const char *layout;
    const char *base;
    std::string file;
  } cases[] = {
      {"flat", "/flat", "/flat/" + key},
      {"subdirs", "/subdirs/", "/subdirs/" + key.substr(0, 2) + "/" + key.substr(2)},
      {"bazel", "/bazel", "/bazel/ac/" + key},
      {"flat", "", "/" + key},
  };
  for (const Case &layout : cases) {
    Endpoint endpoint = patientEndpoint(server->url(layout.base));
    endpoint.layout = layout.layout;
    std::unique_ptr<RemoteStore> store = openStore(endpoint);
    ASSERT_TRUE(store);
    std::string bytes = std::string("object in layout ") + layout.layout + layout.base;
    ASSERT_FALSE(failureOf(store->put(key, bytes)).kind) << layout.layout;
    EXPECT_EQ(readFile(server->root() + layout.file), bytes)
        << "layout " << layout.layout << " under '" << layout.base << "' did not put the object at "
        << layout.file;
    llvm::Expected<std::optional<std::string>> got = store->get(key);
    ASSERT_TRUE(got && got->has_value()) << layout.layout;
    EXPECT_EQ(**got, bytes);
  }
}

TEST(HttpStore, BasicAuthenticationFromTheUrlOrTheEndpoint) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::string user = NginxServer::kUser.str();
  std::unique_ptr<RemoteStore> inUrl =
      openStore(patientEndpoint(server->url("/basic", user + ":" + NginxServer::kPassword.str())));
  ASSERT_TRUE(inUrl);
  expectRoundTrip(*inUrl, 1, 100);

  Endpoint separate = patientEndpoint(server->url("/basic", user));
  separate.password = NginxServer::kPassword.str();
  std::unique_ptr<RemoteStore> fromEndpoint = openStore(separate);
  ASSERT_TRUE(fromEndpoint);
  expectRoundTrip(*fromEndpoint, 2, 100);
}

TEST(HttpStore, WrongOrMissingBasicCredentialsAreUnauthorized) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> wrong =
      openStore(patientEndpoint(server->url("/basic", NginxServer::kUser.str() + ":wrong")));
  std::unique_ptr<RemoteStore> none = openStore(patientEndpoint(server->url("/basic")));
  ASSERT_TRUE(wrong && none);
  for (RemoteStore *store : {wrong.get(), none.get()}) {
    Failure get = failureOf(store->get(objectKey(1)));
    EXPECT_EQ(get.kind, RemoteFailure::Unauthorized) << kindName(get.kind) << ": " << get.message;
    EXPECT_NE(get.message.find("HTTP 401"), std::string::npos) << get.message;
    Failure put = failureOf(store->put(objectKey(1), "a"));
    EXPECT_EQ(put.kind, RemoteFailure::Unauthorized) << kindName(put.kind) << ": " << put.message;
  }
}

TEST(HttpStore, BearerTokenIsSentAndAWrongOneIsUnauthorized) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  Endpoint right = patientEndpoint(server->url("/bearer"));
  right.bearerToken = NginxServer::kToken.str();
  std::unique_ptr<RemoteStore> store = openStore(right);
  ASSERT_TRUE(store);
  expectRoundTrip(*store, 1, 100);

  Endpoint wrong = right;
  wrong.bearerToken = "not-the-token";
  std::unique_ptr<RemoteStore> refused = openStore(wrong);
  std::unique_ptr<RemoteStore> none = openStore(patientEndpoint(server->url("/bearer")));
  ASSERT_TRUE(refused && none);
  for (RemoteStore *other : {refused.get(), none.get()}) {
    Failure got = failureOf(other->get(objectKey(1)));
    EXPECT_EQ(got.kind, RemoteFailure::Unauthorized) << kindName(got.kind) << ": " << got.message;
  }
}

TEST(HttpStore, NetrcNamedByTheEnvironmentSuppliesCredentials) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  TempDir folder;
  std::string netrc = folder.file("netrc");
  {
    std::error_code error;
    llvm::raw_fd_ostream out(netrc, error);
    ASSERT_FALSE(error) << error.message();
    out << "machine 127.0.0.1 login " << NginxServer::kUser << " password "
        << NginxServer::kPassword << "\n";
  }
  ASSERT_EQ(::setenv("NETRC", netrc.c_str(), 1), 0);
  Endpoint endpoint = patientEndpoint(server->url("/basic"));
  endpoint.netrc = true;
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  endpoint.netrc = false;
  std::unique_ptr<RemoteStore> without = openStore(endpoint);
  ASSERT_TRUE(store && without);
  expectRoundTrip(*store, 1, 100);
  Failure got = failureOf(without->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::Unauthorized)
      << "netrc was read with netrc off: " << kindName(got.kind);
  ::unsetenv("NETRC");
}

TEST(HttpStore, NothingListeningIsUnreachable) {
  std::unique_ptr<RemoteStore> store =
      openStore(patientEndpoint("http://127.0.0.1:" + std::to_string(freeLoopbackPort()) + "/x"));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::Unreachable) << kindName(got.kind) << ": " << got.message;
  Failure put = failureOf(store->put(objectKey(1), "a"));
  EXPECT_EQ(put.kind, RemoteFailure::Unreachable) << kindName(put.kind) << ": " << put.message;
}

TEST(HttpStore, ServerThatNeverAcceptsIsUnreachableAfterTheConnectTimeOut) {
  llvm::Expected<std::unique_ptr<UnansweredListener>> listener = UnansweredListener::start();
  ASSERT_TRUE(static_cast<bool>(listener)) << llvm::toString(listener.takeError());
  Endpoint endpoint = patientEndpoint("http://127.0.0.1:" + std::to_string((*listener)->port()));
  endpoint.connectTimeout = milliseconds(200);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  Failure got;
  milliseconds took = timeOf([&] { got = failureOf(store->get(objectKey(1))); });
  EXPECT_EQ(got.kind, RemoteFailure::Unreachable) << kindName(got.kind) << ": " << got.message;
  EXPECT_LT(took, 10 * endpoint.connectTimeout) << "the request hung";
}

TEST(HttpStore, PausedServerTimesOut) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(server->url());
  // libcurl's limit for a whole request is the sum of the two.
  endpoint.connectTimeout = milliseconds(300);
  endpoint.operationTimeout = milliseconds(300);
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  ASSERT_FALSE(failureOf(store->put(objectKey(1), "first")).kind);
  ASSERT_FALSE(failureOf(store->put(objectKey(2), "second")).kind);

  server->process().pause();
  for (int attempt = 0; attempt < 2; ++attempt) {
    Failure got;
    milliseconds took = timeOf([&] { got = failureOf(store->get(objectKey(1))); });
    EXPECT_EQ(got.kind, RemoteFailure::TimedOut)
        << "attempt " << attempt << ": " << kindName(got.kind) << ": " << got.message;
    EXPECT_LT(took, 10 * (endpoint.connectTimeout + endpoint.operationTimeout))
        << "the request hung";
    Failure put = failureOf(store->put(objectKey(3), "third"));
    EXPECT_EQ(put.kind, RemoteFailure::TimedOut) << kindName(put.kind) << ": " << put.message;
  }
  server->process().resume();
  llvm::Expected<std::optional<std::string>> got = store->get(objectKey(2));
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  EXPECT_EQ(got->value_or(""), "second") << "the store does not recover after the pause";
}

TEST(HttpStore, ObjectOverTheServerLimitIsTooLarge) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  Failure got = failureOf(store->put(objectKey(1), objectBytes(NginxServer::kMaxBodyBytes + 1)));
  EXPECT_EQ(got.kind, RemoteFailure::TooLarge) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("HTTP 413"), std::string::npos) << got.message;
}

TEST(HttpStore, AnswerLargerThanMaxObjectBytesIsABadReply) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
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

TEST(HttpStore, ChunkedAnswerGrowingPastMaxObjectBytesIsABadReply) {
  // No Content-Length to refuse up front: the bytes are counted as they come.
  std::string answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int chunk = 0; chunk < 10; ++chunk)
    answer += "200\r\n" + std::string(0x200, 'x') + "\r\n";
  answer += "0\r\n\r\n";
  std::unique_ptr<ScriptedServer> server = startScripted(answer);
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(scriptedUrl(*server));
  endpoint.maxObjectBytes = 1000;
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
  ASSERT_TRUE(store);
  Failure got = failureOf(store->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::BadReply) << kindName(got.kind) << ": " << got.message;
  EXPECT_NE(got.message.find("larger than the limit of 1000 bytes"), std::string::npos)
      << got.message;
}

TEST(HttpStore, StatusesMapToTheirFailures) {
  struct Case {
    const char *answer;
    RemoteFailure kind;
    const char *says;
  } cases[] = {
      {"HTTP/1.1 507 Insufficient Storage\r\nContent-Length: 0\r\n\r\n", RemoteFailure::Full,
       "HTTP 507"},
      {"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", RemoteFailure::Unauthorized,
       "HTTP 403"},
      {"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
       RemoteFailure::ServerError, "HTTP 500"},
      {"HTTP/1.1 409 Conflict\r\nContent-Length: 0\r\n\r\n", RemoteFailure::ServerError,
       "HTTP 409"},
      {"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:1/elsewhere\r\nContent-Length: 0\r\n\r\n",
       RemoteFailure::ServerError, "redirects are not followed"},
      {"HTTP/1.1 206 Partial Content\r\nContent-Length: 0\r\n\r\n", RemoteFailure::BadReply,
       "HTTP 206"},
      {"not HTTP at all\r\n\r\n", RemoteFailure::BadReply, ""},
  };
  for (const Case &status : cases) {
    std::unique_ptr<ScriptedServer> server = startScripted(status.answer);
    ASSERT_TRUE(server);
    std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(scriptedUrl(*server)));
    ASSERT_TRUE(store);
    Failure got = failureOf(store->get(objectKey(1)));
    EXPECT_EQ(got.kind, status.kind)
        << status.answer << " gave " << kindName(got.kind) << ": " << got.message;
    EXPECT_NE(got.message.find(status.says), std::string::npos) << got.message;
    if (*status.says) {
      EXPECT_NE(got.message.find(scriptedUrl(*server) + "/" + objectKey(1)), std::string::npos)
          << "the message does not name the object's URL: " << got.message;
    }
  }
}

TEST(HttpStore, PutAcceptsOkCreatedAndNoContent) {
  for (const char *answer :
       {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n"}) {
    std::unique_ptr<ScriptedServer> server = startScripted(answer);
    ASSERT_TRUE(server);
    std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(scriptedUrl(*server)));
    ASSERT_TRUE(store);
    Failure got = failureOf(store->put(objectKey(1), "a"));
    EXPECT_FALSE(got.kind) << answer << " was taken for " << kindName(got.kind) << ": "
                           << got.message;
  }
}

TEST(HttpStore, MessagesNeverContainThePasswordOrToken) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  const std::string secret = "http-s3cret-pa55";
  std::vector<std::string> messages;
  auto collect = [&](const Endpoint &endpoint) {
    llvm::Expected<std::unique_ptr<RemoteStore>> store = openRemoteStore(endpoint);
    if (!store) {
      messages.push_back(llvm::toString(store.takeError()));
      return;
    }
    messages.push_back((*store)->displayName());
    messages.push_back(failureOf((*store)->get(objectKey(1))).message);
    messages.push_back(failureOf((*store)->put(objectKey(1), "a")).message);
  };
  collect(patientEndpoint(server->url("/basic", "builder:" + secret)));
  Endpoint separate = patientEndpoint(server->url("/basic", "builder"));
  separate.password = secret;
  collect(separate);
  Endpoint token = patientEndpoint(server->url("/bearer"));
  token.bearerToken = secret;
  collect(token);
  Endpoint tokenUnreachable =
      patientEndpoint("http://u:" + secret + "@127.0.0.1:" + std::to_string(freeLoopbackPort()));
  tokenUnreachable.bearerToken = secret;
  collect(tokenUnreachable);
  collect(patientEndpoint("http://u:" + secret + "@127.0.0.1:bad/"));
  Endpoint layout = patientEndpoint("https://u:" + secret + "@h/");
  layout.layout = "nested";
  collect(layout);
  for (const std::string &message : messages)
    EXPECT_EQ(message.find(secret), std::string::npos) << "a message shows the secret: " << message;
}

TEST(HttpStore, ReusesConnections) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  std::unique_ptr<RemoteStore> store = openStore(patientEndpoint(server->url()));
  ASSERT_TRUE(store);
  for (unsigned i = 0; i < 20; ++i) {
    ASSERT_FALSE(failureOf(store->put(objectKey(i), "a")).kind);
    ASSERT_TRUE(static_cast<bool>(store->get(objectKey(i))));
  }
  // nginx logs a request after answering it: the last line may come late.
  std::string log;
  llvm::SmallVector<llvm::StringRef> lines;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    log = readFile(server->accessLog()).value_or("");
    lines.clear();
    llvm::StringRef(log).trim().split(lines, '\n', -1, /*KeepEmpty=*/false);
    if (lines.size() < 40)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (lines.size() < 40 && std::chrono::steady_clock::now() < deadline);
  llvm::StringSet<> connections;
  for (llvm::StringRef line : lines)
    connections.insert(line.split(' ').first);
  EXPECT_EQ(lines.size(), 40u);
  EXPECT_EQ(connections.size(), 1u)
      << "40 requests from one thread made " << connections.size() << " connections";
}

TEST(HttpStore, HttpsTrustsTheCaFileItIsGiven) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>(/*https=*/true);
  ASSERT_TRUE(server);
  Endpoint trusted = patientEndpoint(server->url("/cache"));
  trusted.caFile = server->certificate();
  std::unique_ptr<RemoteStore> store = openStore(trusted);
  ASSERT_TRUE(store);
  expectRoundTrip(*store, 1, 1000);

  std::unique_ptr<RemoteStore> untrusted = openStore(patientEndpoint(server->url("/cache")));
  ASSERT_TRUE(untrusted);
  Failure got = failureOf(untrusted->get(objectKey(1)));
  EXPECT_EQ(got.kind, RemoteFailure::Unreachable)
      << "a self-signed certificate was accepted, or refused as " << kindName(got.kind) << ": "
      << got.message;
}

TEST(HttpStore, ManyThreadsShareOneStore) {
  std::unique_ptr<NginxServer> server = startServer<NginxServer>();
  ASSERT_TRUE(server);
  Endpoint endpoint = patientEndpoint(server->url());
  endpoint.layout = "subdirs";
  std::unique_ptr<RemoteStore> store = openStore(endpoint);
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
