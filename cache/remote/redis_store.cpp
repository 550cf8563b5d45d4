//===- cache/remote/redis_store.cpp ---------------------------------------===//
//
// hiredis connects and parses Redis's replies; the bytes go through our own
// loop over poll(2) instead of hiredis's blocking calls, for three reasons:
// one deadline bounds a whole request (a per-read socket time-out would let a
// server that trickles bytes hold a request forever), a refused write never
// raises SIGPIPE (send with MSG_NOSIGNAL), and a reply's length is read from
// its header before its body, so an object over maxObjectBytes is refused
// without being received.
//
// A batch of lookups (getMany) sends every GET before it reads the first
// answer, on one connection: one round trip for the lot, within one
// deadline, its answers together bounded by maxObjectBytes. GET is all it
// sends, so a user allowed only +get may batch too.
//
//===----------------------------------------------------------------------===//

#include "cache/remote/redis_store.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

#include <cerrno>
#include <cstring>
#include <hiredis/hiredis.h>
#include <initializer_list>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace kiln::cache::remote {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t kDefaultPort = 6379;
constexpr llvm::StringLiteral kKeyPrefix = "kiln:";
/// Connections kept open between requests, for the threads of one build.
constexpr size_t kMaxIdleConnections = 8;
/// The most any reply but GET's may take: a status or an error line.
constexpr uint64_t kSmallReplyBytes = 64 * 1024;
/// Room for a bulk reply's framing ("$<length>\r\n" and the final "\r\n").
constexpr uint64_t kFramingBytes = 32;
/// Arguments longer than this are sent from the caller's memory, not copied.
constexpr size_t kCopiedArgumentBytes = 4096;

struct ContextDeleter {
  void operator()(redisContext *context) const { redisFree(context); }
};
using Connection = std::unique_ptr<redisContext, ContextDeleter>;

struct ReplyDeleter {
  void operator()(redisReply *reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// Where the server is and who we are to it.
struct RedisTarget {
  std::string host;
  uint16_t port = kDefaultPort;
  /// Set for redis+unix.
  std::string socketPath;
  std::string user;
  std::string password;
  unsigned database = 0;
};

/// A command in Redis's protocol, as pieces: each some framing text of its
/// own and then, for a large argument, the caller's bytes.
using WirePieces = std::vector<std::pair<std::string, llvm::StringRef>>;

WirePieces encodeCommand(llvm::ArrayRef<llvm::StringRef> arguments) {
  WirePieces pieces;
  std::string text = "*" + std::to_string(arguments.size()) + "\r\n";
  for (llvm::StringRef argument : arguments) {
    text += "$" + std::to_string(argument.size()) + "\r\n";
    if (argument.size() > kCopiedArgumentBytes) {
      pieces.emplace_back(std::move(text), argument);
      text = "\r\n";
    } else {
      text += argument.str() + "\r\n";
    }
  }
  pieces.emplace_back(std::move(text), llvm::StringRef());
  return pieces;
}

/// What a poll(2) for `events` on `fd` saw before `deadline`: its revents,
/// 0 when the deadline passed first, or -1 with errno.
int waitUntil(int fd, short events, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return 0;
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
    if (ready > 0)
      return entry.revents;
    if (ready < 0 && errno != EINTR)
      return -1;
  }
}

llvm::StringRef replyText(const redisReply &reply) {
  return llvm::StringRef(reply.str, reply.len);
}

llvm::StringRef describeReplyType(int type) {
  switch (type) {
  case REDIS_REPLY_STRING:
    return "a string";
  case REDIS_REPLY_ARRAY:
    return "an array";
  case REDIS_REPLY_INTEGER:
    return "an integer";
  case REDIS_REPLY_NIL:
    return "nil";
  case REDIS_REPLY_STATUS:
    return "a status";
  case REDIS_REPLY_ERROR:
    return "an error";
  default:
    return "an unknown reply";
  }
}

class RedisStore final : public RemoteStore {
public:
  RedisStore(const Endpoint &endpoint, RedisTarget target)
      : endpoint_(endpoint), target_(std::move(target)), displayName_(redactUrl(endpoint.url)) {}

  llvm::Expected<std::optional<std::string>> get(llvm::StringRef key) override;
  llvm::Expected<std::vector<std::optional<std::string>>>
  getMany(llvm::ArrayRef<std::string> keys) override;
  llvm::Error put(llvm::StringRef key, llvm::StringRef bytes) override;
  const std::string &displayName() const override { return displayName_; }

private:
  /// A pooled or new connection, and the deadline of the request it is for.
  llvm::Expected<Connection> openConnection(Clock::time_point &deadline);
  /// One command on a pooled or new connection; the connection goes back to
  /// the pool only when the command went through and its reply is of one
  /// of the `expected` types (an error reply or a confused server may leave
  /// it in any state).
  llvm::Expected<Reply> request(llvm::ArrayRef<llvm::StringRef> command, uint64_t maxReplyBytes,
                                std::initializer_list<int> expected);
  /// A connection that is logged in and on the right database. Sets
  /// `deadline`, the end of the request's operation time-out, once
  /// connected: AUTH and SELECT spend from it.
  llvm::Expected<Connection> connect(Clock::time_point &deadline);
  std::optional<Connection> takeIdle();
  void keepIdle(Connection connection);

  /// Sends `command` and reads its reply. `finished` says whether the
  /// connection is still in step with the server.
  llvm::Expected<Reply> exchange(redisContext &connection, llvm::ArrayRef<llvm::StringRef> command,
                                 uint64_t maxReplyBytes, Clock::time_point deadline,
                                 bool &finished);
  /// Sends `pieces`; true when the server answered before taking them all,
  /// which Redis does only to refuse a command, or hung up. Pipelined
  /// commands (`pipelined`) are answered while later ones are still being
  /// sent: then only a hang-up stops the sending.
  llvm::Expected<bool> send(int fd, const WirePieces &pieces, Clock::time_point deadline,
                            bool pipelined = false);
  llvm::Expected<Reply> receive(redisContext &connection, uint64_t maxReplyBytes,
                                Clock::time_point deadline);
  /// Reads `count` replies, of at most `maxTotalBytes` together.
  llvm::Expected<std::vector<Reply>> receiveAll(redisContext &connection, size_t count,
                                                uint64_t maxTotalBytes, Clock::time_point deadline);
  /// Waits for the connection to have bytes to read, and reads them; an
  /// error for a time-out or a connection that broke or closed.
  llvm::Expected<size_t> readSome(redisContext &connection, char *buffer, size_t size,
                                  Clock::time_point deadline);

  /// The error for an error reply to `command`.
  llvm::Error refusal(llvm::StringRef command, const redisReply &reply);
  llvm::Error unexpectedReply(llvm::StringRef command, const redisReply &reply);
  llvm::Error failure(RemoteFailure failure, const llvm::Twine &message) const {
    return remoteError(failure,
                       displayName_ + ": " + hideSecrets(message.str(), {target_.password}));
  }

  Endpoint endpoint_;
  RedisTarget target_;
  std::string displayName_;
  std::mutex idleMutex_;
  std::vector<Connection> idle_;
};

llvm::Expected<std::optional<std::string>> RedisStore::get(llvm::StringRef key) {
  if (llvm::Error error = checkObjectKey(key))
    return error;
  std::string redisKey = (kKeyPrefix + key).str();
  llvm::Expected<Reply> reply =
      request({"GET", redisKey}, endpoint_.maxObjectBytes, {REDIS_REPLY_STRING, REDIS_REPLY_NIL});
  if (!reply)
    return reply.takeError();
  switch ((*reply)->type) {
  case REDIS_REPLY_NIL:
    return std::nullopt;
  case REDIS_REPLY_STRING:
    return replyText(**reply).str();
  case REDIS_REPLY_ERROR:
    return refusal("GET", **reply);
  default:
    return unexpectedReply("GET", **reply);
  }
}

llvm::Expected<std::vector<std::optional<std::string>>>
RedisStore::getMany(llvm::ArrayRef<std::string> keys) {
  std::vector<std::optional<std::string>> objects;
  if (keys.empty())
    return objects;
  std::vector<std::string> redisKeys;
  for (const std::string &key : keys) {
    if (llvm::Error error = checkObjectKey(key))
      return error;
    redisKeys.push_back((kKeyPrefix + key).str());
  }
  WirePieces pieces;
  for (const std::string &redisKey : redisKeys)
    for (auto &piece : encodeCommand({"GET", redisKey}))
      pieces.push_back(std::move(piece));
  Clock::time_point deadline;
  llvm::Expected<Connection> connected = openConnection(deadline);
  if (!connected)
    return connected.takeError();
  Connection &used = *connected;
  llvm::Expected<bool> answeredEarly = send(used->fd, pieces, deadline, /*pipelined=*/true);
  if (!answeredEarly)
    return answeredEarly.takeError();
  llvm::Expected<std::vector<Reply>> replies =
      receiveAll(*used, keys.size(), endpoint_.maxObjectBytes, deadline);
  if (!replies)
    return replies.takeError();
  for (Reply &reply : *replies) {
    if (reply->type == REDIS_REPLY_NIL)
      objects.push_back(std::nullopt);
    else if (reply->type == REDIS_REPLY_STRING)
      objects.push_back(replyText(*reply).str());
    else if (reply->type == REDIS_REPLY_ERROR)
      return refusal("GET", *reply);
    else
      return unexpectedReply("GET", *reply);
  }
  if (!*answeredEarly)
    keepIdle(std::move(used));
  return objects;
}

llvm::Error RedisStore::put(llvm::StringRef key, llvm::StringRef bytes) {
  if (llvm::Error error = checkObjectKey(key))
    return error;
  std::string redisKey = (kKeyPrefix + key).str();
  llvm::Expected<Reply> reply =
      request({"SET", redisKey, bytes}, kSmallReplyBytes, {REDIS_REPLY_STATUS});
  if (!reply)
    return reply.takeError();
  if ((*reply)->type == REDIS_REPLY_STATUS && replyText(**reply) == "OK")
    return llvm::Error::success();
  if ((*reply)->type == REDIS_REPLY_ERROR)
    return refusal("SET", **reply);
  return unexpectedReply("SET", **reply);
}

llvm::Expected<Connection> RedisStore::openConnection(Clock::time_point &deadline) {
  deadline = Clock::now() + endpoint_.operationTimeout;
  if (std::optional<Connection> pooled = takeIdle())
    return std::move(*pooled);
  return connect(deadline);
}

llvm::Expected<Reply> RedisStore::request(llvm::ArrayRef<llvm::StringRef> command,
                                          uint64_t maxReplyBytes,
                                          std::initializer_list<int> expected) {
  Clock::time_point deadline;
  llvm::Expected<Connection> connected = openConnection(deadline);
  if (!connected)
    return connected.takeError();
  bool finished = false;
  llvm::Expected<Reply> reply = exchange(**connected, command, maxReplyBytes, deadline, finished);
  if (reply && finished && llvm::is_contained(expected, (*reply)->type))
    keepIdle(std::move(*connected));
  return reply;
}

llvm::Expected<Connection> RedisStore::connect(Clock::time_point &deadline) {
  auto connectTimeout =
      std::chrono::duration_cast<std::chrono::microseconds>(endpoint_.connectTimeout);
  timeval timeout{static_cast<time_t>(connectTimeout.count() / 1000000),
                  static_cast<suseconds_t>(connectTimeout.count() % 1000000)};
  Connection connection(target_.socketPath.empty()
                            ? redisConnectWithTimeout(target_.host.c_str(), target_.port, timeout)
                            : redisConnectUnixWithTimeout(target_.socketPath.c_str(), timeout));
  if (!connection)
    return failure(RemoteFailure::Unreachable, "cannot connect: out of memory");
  if (connection->err)
    return failure(RemoteFailure::Unreachable,
                   llvm::Twine("cannot connect: ") + connection->errstr);
  deadline = Clock::now() + endpoint_.operationTimeout;

  if (!target_.password.empty()) {
    llvm::SmallVector<llvm::StringRef, 3> auth{"AUTH"};
    if (!target_.user.empty())
      auth.push_back(target_.user);
    auth.push_back(target_.password);
    bool finished = false;
    llvm::Expected<Reply> reply = exchange(*connection, auth, kSmallReplyBytes, deadline, finished);
    if (!reply)
      return reply.takeError();
    if ((*reply)->type == REDIS_REPLY_ERROR)
      return failure(RemoteFailure::Unauthorized,
                     "AUTH" + (target_.user.empty() ? "" : " as '" + target_.user + "'") +
                         " refused: " + replyText(**reply));
    if ((*reply)->type != REDIS_REPLY_STATUS)
      return unexpectedReply("AUTH", **reply);
  }
  if (target_.database != 0) {
    std::string database = std::to_string(target_.database);
    bool finished = false;
    llvm::Expected<Reply> reply =
        exchange(*connection, {"SELECT", database}, kSmallReplyBytes, deadline, finished);
    if (!reply)
      return reply.takeError();
    if ((*reply)->type == REDIS_REPLY_ERROR)
      return refusal("SELECT " + database, **reply);
    if ((*reply)->type != REDIS_REPLY_STATUS)
      return unexpectedReply("SELECT", **reply);
  }
  return connection;
}

std::optional<Connection> RedisStore::takeIdle() {
  std::lock_guard<std::mutex> lock(idleMutex_);
  while (!idle_.empty()) {
    Connection connection = std::move(idle_.back());
    idle_.pop_back();
    // An idle connection has nothing to read; if it has, the server closed
    // it (a restart, its idle time-out) or said something unasked.
    pollfd entry{connection->fd, POLLIN, 0};
    if (::poll(&entry, 1, 0) == 0)
      return connection;
  }
  return std::nullopt;
}

void RedisStore::keepIdle(Connection connection) {
  std::lock_guard<std::mutex> lock(idleMutex_);
  if (idle_.size() < kMaxIdleConnections)
    idle_.push_back(std::move(connection));
}

llvm::Expected<Reply> RedisStore::exchange(redisContext &connection,
                                           llvm::ArrayRef<llvm::StringRef> command,
                                           uint64_t maxReplyBytes, Clock::time_point deadline,
                                           bool &finished) {
  finished = false;
  llvm::Expected<bool> answeredEarly = send(connection.fd, encodeCommand(command), deadline);
  if (!answeredEarly)
    return answeredEarly.takeError();
  llvm::Expected<Reply> reply = receive(connection, maxReplyBytes, deadline);
  finished = reply && !*answeredEarly;
  return reply;
}

llvm::Expected<bool> RedisStore::send(int fd, const WirePieces &pieces, Clock::time_point deadline,
                                      bool pipelined) {
  short events = pipelined ? POLLOUT : POLLOUT | POLLIN;
  for (const auto &[text, borrowed] : pieces) {
    for (llvm::StringRef part : {llvm::StringRef(text), borrowed}) {
      while (!part.empty()) {
        int ready = waitUntil(fd, events, deadline);
        if (ready == 0)
          return failure(RemoteFailure::TimedOut,
                         "Redis took no request within " +
                             llvm::Twine(endpoint_.operationTimeout.count()) + " ms");
        if (ready < 0)
          return failure(RemoteFailure::ServerError,
                         llvm::Twine("cannot wait for the connection: ") + std::strerror(errno));
        if (ready & (POLLIN | POLLERR | POLLHUP))
          return true;
        ssize_t sent = ::send(fd, part.data(), part.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            continue;
          if (errno == EPIPE || errno == ECONNRESET)
            return true;
          return failure(RemoteFailure::ServerError,
                         llvm::Twine("cannot send to Redis: ") + std::strerror(errno));
        }
        part = part.drop_front(static_cast<size_t>(sent));
      }
    }
  }
  return false;
}

llvm::Expected<Reply> RedisStore::receive(redisContext &connection, uint64_t maxReplyBytes,
                                          Clock::time_point deadline) {
  uint64_t limit = maxReplyBytes + kFramingBytes;
  uint64_t received = 0;
  std::string header;
  bool headerChecked = false;
  char buffer[64 * 1024];
  while (true) {
    void *parsed = nullptr;
    if (redisReaderGetReply(connection.reader, &parsed) != REDIS_OK)
      return failure(RemoteFailure::BadReply,
                     llvm::Twine("not a Redis reply: ") + connection.reader->errstr);
    if (parsed)
      return Reply(static_cast<redisReply *>(parsed));

    llvm::Expected<size_t> read = readSome(connection, buffer, sizeof buffer, deadline);
    if (!read)
      return read.takeError();
    size_t count = *read;
    if (count == 0)
      continue;

    received += static_cast<uint64_t>(count);
    if (!headerChecked) {
      header.append(buffer, std::min<size_t>(static_cast<size_t>(count), kFramingBytes));
      size_t end = llvm::StringRef(header).find("\r\n");
      if (end != llvm::StringRef::npos || header.size() >= kFramingBytes) {
        headerChecked = true;
        uint64_t length = 0;
        if (header.front() == '$' && end != llvm::StringRef::npos &&
            !llvm::StringRef(header).slice(1, end).getAsInteger(10, length) &&
            length > maxReplyBytes)
          return failure(RemoteFailure::BadReply, "Redis offers " + llvm::Twine(length) +
                                                      " bytes, more than the limit of " +
                                                      llvm::Twine(maxReplyBytes));
      }
    }
    if (received > limit)
      return failure(RemoteFailure::BadReply, "Redis's answer is larger than the limit of " +
                                                  llvm::Twine(maxReplyBytes) + " bytes");
    if (redisReaderFeed(connection.reader, buffer, static_cast<size_t>(count)) != REDIS_OK)
      return failure(RemoteFailure::BadReply, "cannot take Redis's answer: out of memory");
  }
}

llvm::Expected<size_t> RedisStore::readSome(redisContext &connection, char *buffer, size_t size,
                                            Clock::time_point deadline) {
  int ready = waitUntil(connection.fd, POLLIN, deadline);
  if (ready == 0)
    return failure(RemoteFailure::TimedOut, "no answer from Redis within " +
                                                llvm::Twine(endpoint_.operationTimeout.count()) +
                                                " ms");
  if (ready < 0)
    return failure(RemoteFailure::ServerError,
                   llvm::Twine("cannot wait for the connection: ") + std::strerror(errno));
  ssize_t count = ::read(connection.fd, buffer, size);
  if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return 0;
  if (count < 0)
    return failure(RemoteFailure::ServerError,
                   llvm::Twine("the connection to Redis broke: ") + std::strerror(errno));
  if (count == 0)
    return failure(RemoteFailure::ServerError, "Redis closed the connection without answering");
  return static_cast<size_t>(count);
}

llvm::Expected<std::vector<Reply>> RedisStore::receiveAll(redisContext &connection, size_t count,
                                                          uint64_t maxTotalBytes,
                                                          Clock::time_point deadline) {
  std::vector<Reply> replies;
  uint64_t limit = maxTotalBytes + count * kFramingBytes;
  uint64_t received = 0;
  char buffer[64 * 1024];
  while (replies.size() < count) {
    void *parsed = nullptr;
    if (redisReaderGetReply(connection.reader, &parsed) != REDIS_OK)
      return failure(RemoteFailure::BadReply,
                     llvm::Twine("not a Redis reply: ") + connection.reader->errstr);
    if (parsed) {
      replies.emplace_back(static_cast<redisReply *>(parsed));
      continue;
    }
    llvm::Expected<size_t> read = readSome(connection, buffer, sizeof buffer, deadline);
    if (!read)
      return read.takeError();
    received += *read;
    if (received > limit)
      return failure(RemoteFailure::BadReply, "Redis's answers to " + llvm::Twine(count) +
                                                  " lookups are larger than the limit of " +
                                                  llvm::Twine(maxTotalBytes) + " bytes");
    if (*read && redisReaderFeed(connection.reader, buffer, *read) != REDIS_OK)
      return failure(RemoteFailure::BadReply, "cannot take Redis's answer: out of memory");
  }
  return replies;
}

llvm::Error RedisStore::refusal(llvm::StringRef command, const redisReply &reply) {
  llvm::StringRef text = replyText(reply);
  RemoteFailure kind = RemoteFailure::ServerError;
  if (text.starts_with("NOAUTH") || text.starts_with("WRONGPASS") || text.starts_with("NOPERM"))
    kind = RemoteFailure::Unauthorized;
  else if (text.starts_with("OOM"))
    kind = RemoteFailure::Full;
  else if (text.contains("invalid bulk length") || text.contains("exceeds maximum allowed size"))
    kind = RemoteFailure::TooLarge;
  return failure(kind, command + " refused: " + text);
}

llvm::Error RedisStore::unexpectedReply(llvm::StringRef command, const redisReply &reply) {
  return failure(RemoteFailure::BadReply,
                 command + " answered with " + describeReplyType(reply.type));
}

/// The database of a redis:// path ("", "/", "/N") or a redis+unix query
/// ("", "db=N").
llvm::Expected<unsigned> parseDatabase(llvm::StringRef url, llvm::StringRef text,
                                       llvm::StringRef what) {
  unsigned database = 0;
  if (text.empty())
    return database;
  if (!llvm::all_of(text, llvm::isDigit) || text.getAsInteger(10, database))
    return badUrl(url, "has a database '" + text + "' that is not a number (" + what + ")");
  return database;
}

} // namespace

llvm::Expected<std::unique_ptr<RemoteStore>> openRedisStore(const Endpoint &endpoint,
                                                            const RemoteUrl &url) {
  RedisTarget target;
  target.user = url.user;
  target.password = url.password ? *url.password : endpoint.password;
  if (url.scheme == "redis") {
    if (!url.hasAuthority || url.host.empty())
      return badUrl(endpoint.url, "has no host (redis://[user:password@]host[:port][/db])");
    if (!url.query.empty())
      return badUrl(endpoint.url, "has a query '?" + url.query +
                                      "'; a redis:// URL names its database as its path, "
                                      "redis://host/N");
    target.host = url.host;
    target.port = url.port.value_or(kDefaultPort);
    llvm::StringRef path = url.path;
    path.consume_front("/");
    llvm::Expected<unsigned> database = parseDatabase(endpoint.url, path, "redis://host/N");
    if (!database)
      return database.takeError();
    target.database = *database;
  } else {
    if (!url.host.empty() || url.port)
      return badUrl(endpoint.url, "names a host; a redis+unix URL names a socket, "
                                  "redis+unix:///path/to/socket");
    if (url.path.empty() || url.path == "/" || !llvm::StringRef(url.path).starts_with("/"))
      return badUrl(endpoint.url, "has no absolute socket path (redis+unix:///path/to/socket)");
    target.socketPath = url.path;
    llvm::StringRef query = url.query;
    if (!query.empty() && !query.consume_front("db="))
      return badUrl(endpoint.url,
                    "has a query '?" + url.query + "'; a redis+unix URL takes only ?db=N");
    llvm::Expected<unsigned> database = parseDatabase(endpoint.url, query, "?db=N");
    if (!database)
      return database.takeError();
    target.database = *database;
  }
  return std::make_unique<RedisStore>(endpoint, std::move(target));
}

} // namespace kiln::cache::remote
