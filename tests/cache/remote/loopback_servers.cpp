//===- tests/cache/remote/loopback_servers.cpp ----------------------------===//

#include "tests/cache/remote/loopback_servers.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln::cache::remote::testing {

namespace {

using Clock = std::chrono::steady_clock;

/// How long a server may take to start accepting connections.
constexpr std::chrono::seconds kStartTimeout{20};
/// Ports to try when another process takes the one we picked first.
constexpr int kStartAttempts = 3;

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string readLog(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> log = llvm::MemoryBuffer::getFile(path);
  return log ? (*log)->getBuffer().str() : std::string("(no log)");
}

llvm::Error writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (error)
    return failure("cannot write " + path + ": " + error.message());
  out << text;
  return llvm::Error::success();
}

std::string findServer(llvm::StringRef name) {
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
    return *found;
  if (llvm::ErrorOr<std::string> found =
          llvm::sys::findProgramByName(name, {"/usr/sbin", "/usr/bin"}))
    return *found;
  return name.str();
}

sockaddr_in loopbackAddress(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

uint16_t boundPort(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  return ntohs(address.sin_port);
}

bool acceptsOnPort(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = loopbackAddress(port);
  bool accepted = ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
  ::close(fd);
  return accepted;
}

bool acceptsOnSocket(llvm::StringRef path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.str().c_str(), sizeof address.sun_path - 1);
  bool accepted = ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
  ::close(fd);
  return accepted;
}

/// Waits until `accepts()` or the process dies; the error carries its log.
template <typename Probe>
llvm::Error waitUntilAccepting(ChildProcess &process, llvm::StringRef what, llvm::StringRef logFile,
                               Probe accepts) {
  Clock::time_point deadline = Clock::now() + kStartTimeout;
  while (!accepts()) {
    if (process.hasExited())
      return failure(what + " exited before accepting connections:\n" + readLog(logFile));
    if (Clock::now() > deadline)
      return failure(what + " accepted no connection within " + llvm::Twine(kStartTimeout.count()) +
                     " s:\n" + readLog(logFile));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return llvm::Error::success();
}

} // namespace

TempDir::TempDir() {
  llvm::SmallString<128> path;
  if (std::error_code error = llvm::sys::fs::createUniqueDirectory("kiln-remote-test", path))
    llvm::report_fatal_error(llvm::Twine("cannot make a temporary folder: ") + error.message());
  path_ = path.str().str();
}

TempDir::~TempDir() {
  (void)llvm::sys::fs::remove_directories(path_);
}

std::string TempDir::file(llvm::StringRef name) const {
  return (path_ + "/" + name).str();
}

llvm::Expected<std::unique_ptr<ChildProcess>>
ChildProcess::start(llvm::ArrayRef<std::string> arguments, llvm::StringRef logFile) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string log = logFile.str();
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char *> argv;
  for (const std::string &argument : arguments)
    argv.push_back(const_cast<char *>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0)
    return failure("cannot start " + arguments.front() + ": " + std::strerror(status));
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid));
}

ChildProcess::~ChildProcess() {
  if (reaped_)
    return;
  ::kill(pid_, SIGKILL);
  ::kill(pid_, SIGCONT);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

void ChildProcess::pause() {
  ::kill(pid_, SIGSTOP);
}

void ChildProcess::resume() {
  ::kill(pid_, SIGCONT);
}

bool ChildProcess::hasExited() {
  if (reaped_)
    return true;
  int status = 0;
  reaped_ = ::waitpid(pid_, &status, WNOHANG) == pid_;
  return reaped_;
}

uint16_t freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = loopbackAddress(0);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  uint16_t port = boundPort(fd);
  ::close(fd);
  return port;
}

llvm::Expected<std::unique_ptr<RedisServer>> RedisServer::start(const RedisOptions &options) {
  auto server = std::make_unique<RedisServer>();
  std::string log = server->folder_.file("redis.log");
  if (options.unixSocket)
    server->socketPath_ = server->folder_.file("redis.sock");
  for (int attempt = 1;; ++attempt) {
    server->port_ = freeLoopbackPort();
    std::vector<std::string> arguments{findServer("redis-server"),
                                       "--port",
                                       std::to_string(server->port_),
                                       "--bind",
                                       "127.0.0.1",
                                       "--save",
                                       "",
                                       "--appendonly",
                                       "no",
                                       "--dir",
                                       server->folder_.path()};
    if (!options.password.empty())
      arguments.insert(arguments.end(), {"--requirepass", options.password});
    if (options.unixSocket)
      arguments.insert(arguments.end(),
                       {"--unixsocket", server->socketPath_, "--unixsocketperm", "700"});
    arguments.insert(arguments.end(), options.extraArguments.begin(), options.extraArguments.end());
    llvm::Expected<std::unique_ptr<ChildProcess>> process = ChildProcess::start(arguments, log);
    if (!process)
      return process.takeError();
    server->process_ = std::move(*process);
    uint16_t port = server->port_;
    llvm::Error ready = waitUntilAccepting(*server->process_, "redis-server", log,
                                           [port] { return acceptsOnPort(port); });
    if (!ready && options.unixSocket) {
      std::string socketPath = server->socketPath_;
      ready = waitUntilAccepting(*server->process_, "redis-server", log,
                                 [socketPath] { return acceptsOnSocket(socketPath); });
    }
    if (!ready)
      return server;
    if (attempt == kStartAttempts ||
        !llvm::StringRef(readLog(log)).contains("Address already in use"))
      return ready;
    llvm::consumeError(std::move(ready));
  }
}

std::string RedisServer::url(llvm::StringRef userInfo, llvm::StringRef path) const {
  return ("redis://" + userInfo + (userInfo.empty() ? "" : "@") +
          "127.0.0.1:" + llvm::Twine(port_) + path)
      .str();
}

llvm::Expected<std::unique_ptr<NginxServer>> NginxServer::start(bool https) {
  auto server = std::make_unique<NginxServer>();
  server->https_ = https;
  const TempDir &folder = server->folder_;
  if (std::error_code error = llvm::sys::fs::create_directory(folder.file("root")))
    return failure("cannot make nginx's root: " + error.message());
  if (llvm::Error error =
          writeFile(folder.file("htpasswd"), (kUser + ":{PLAIN}" + kPassword + "\n").str()))
    return error;
  std::string log = folder.file("error.log");
  if (https) {
    std::vector<std::string> arguments{findServer("openssl"),
                                       "req",
                                       "-x509",
                                       "-newkey",
                                       "ec",
                                       "-pkeyopt",
                                       "ec_paramgen_curve:prime256v1",
                                       "-nodes",
                                       "-days",
                                       "2",
                                       "-subj",
                                       "/CN=127.0.0.1",
                                       "-addext",
                                       "subjectAltName=IP:127.0.0.1",
                                       "-keyout",
                                       folder.file("key.pem"),
                                       "-out",
                                       server->certificate()};
    llvm::SmallVector<llvm::StringRef, 20> argumentRefs(arguments.begin(), arguments.end());
    std::string opensslLog = folder.file("openssl.log");
    std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(opensslLog),
                                                  llvm::StringRef(opensslLog)};
    if (llvm::sys::ExecuteAndWait(arguments.front(), argumentRefs, std::nullopt, redirects) != 0)
      return failure("openssl could not make a certificate:\n" + readLog(opensslLog));
  }

  for (int attempt = 1;; ++attempt) {
    server->port_ = freeLoopbackPort();
    std::string dir = folder.path();
    std::string listen = "127.0.0.1:" + std::to_string(server->port_) + (https ? " ssl" : "");
    std::string tls = https ? "    ssl_certificate " + server->certificate() +
                                  ";\n    ssl_certificate_key " + folder.file("key.pem") + ";\n"
                            : "";
    std::string config = "daemon off;\n"
                         "master_process off;\n"
                         "worker_processes 1;\n"
                         "pid " +
                         dir +
                         "/nginx.pid;\n"
                         "error_log " +
                         log +
                         " info;\n"
                         "events { worker_connections 256; }\n"
                         "http {\n"
                         "  log_format connections '$connection $request';\n"
                         "  access_log " +
                         dir +
                         "/access.log connections;\n"
                         "  client_body_temp_path " +
                         dir +
                         "/client_body_temp;\n"
                         "  proxy_temp_path " +
                         dir +
                         "/proxy_temp;\n"
                         "  fastcgi_temp_path " +
                         dir +
                         "/fastcgi_temp;\n"
                         "  uwsgi_temp_path " +
                         dir +
                         "/uwsgi_temp;\n"
                         "  scgi_temp_path " +
                         dir +
                         "/scgi_temp;\n"
                         "  client_max_body_size 1m;\n"
                         "  server {\n"
                         "    listen " +
                         listen + ";\n" + tls + "    root " + server->root() +
                         ";\n"
                         "    dav_methods PUT DELETE;\n"
                         "    create_full_put_path on;\n"
                         "    location /basic/ {\n"
                         "      auth_basic \"kiln\";\n"
                         "      auth_basic_user_file " +
                         dir +
                         "/htpasswd;\n"
                         "    }\n"
                         "    location /bearer/ {\n"
                         "      if ($http_authorization != \"Bearer " +
                         kToken.str() +
                         "\") {\n"
                         "        return 401;\n"
                         "      }\n"
                         "    }\n"
                         "  }\n"
                         "}\n";
    if (llvm::Error error = writeFile(folder.file("nginx.conf"), config))
      return error;
    llvm::Expected<std::unique_ptr<ChildProcess>> process = ChildProcess::start(
        {findServer("nginx"), "-p", dir, "-c", folder.file("nginx.conf"), "-e", log},
        folder.file("nginx.out"));
    if (!process)
      return process.takeError();
    server->process_ = std::move(*process);
    uint16_t port = server->port_;
    llvm::Error ready =
        waitUntilAccepting(*server->process_, "nginx", log, [port] { return acceptsOnPort(port); });
    if (!ready)
      return server;
    if (attempt == kStartAttempts ||
        !llvm::StringRef(readLog(log)).contains("Address already in use"))
      return ready;
    llvm::consumeError(std::move(ready));
  }
}

std::string NginxServer::url(llvm::StringRef path, llvm::StringRef userInfo) const {
  return ((https_ ? "https://" : "http://") + userInfo + (userInfo.empty() ? "" : "@") +
          "127.0.0.1:" + llvm::Twine(port_) + path)
      .str();
}

llvm::Expected<std::unique_ptr<ScriptedServer>>
ScriptedServer::start(std::string answer, std::string requestEnd, bool hangUp) {
  std::unique_ptr<ScriptedServer> server(new ScriptedServer());
  server->answer_ = std::move(answer);
  server->requestEnd_ = std::move(requestEnd);
  server->hangUp_ = hangUp;
  server->listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = loopbackAddress(0);
  if (::bind(server->listener_, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
      ::listen(server->listener_, 16) != 0)
    return failure(llvm::Twine("cannot listen on loopback: ") + std::strerror(errno));
  server->port_ = boundPort(server->listener_);
  server->thread_ = std::thread([raw = server.get()] { raw->serve(); });
  return server;
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  if (thread_.joinable())
    thread_.join();
  if (listener_ >= 0)
    ::close(listener_);
}

void ScriptedServer::serve() {
  std::vector<std::thread> connections;
  while (!stopping_) {
    pollfd entry{listener_, POLLIN, 0};
    if (::poll(&entry, 1, 50) <= 0)
      continue;
    int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection >= 0)
      connections.emplace_back([this, connection] { answerConnection(connection); });
  }
  for (std::thread &connection : connections)
    connection.join();
}

void ScriptedServer::answerConnection(int connection) {
  std::string request;
  bool answered = false;
  char buffer[4096];
  while (!stopping_) {
    pollfd entry{connection, POLLIN, 0};
    if (::poll(&entry, 1, 50) <= 0)
      continue;
    ssize_t count = ::read(connection, buffer, sizeof buffer);
    if (count <= 0)
      break;
    request.append(buffer, static_cast<size_t>(count));
    if (!answered && llvm::StringRef(request).contains(requestEnd_)) {
      answered = true;
      llvm::StringRef rest = answer_;
      while (!rest.empty()) {
        ssize_t sent = ::send(connection, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (sent <= 0)
          break;
        rest = rest.drop_front(static_cast<size_t>(sent));
      }
      if (hangUp_)
        break;
    }
  }
  ::close(connection);
}

llvm::Expected<std::unique_ptr<UnansweredListener>> UnansweredListener::start() {
  std::unique_ptr<UnansweredListener> listener(new UnansweredListener());
  listener->listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = loopbackAddress(0);
  if (::bind(listener->listener_, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
      ::listen(listener->listener_, 0) != 0)
    return failure(llvm::Twine("cannot listen on loopback: ") + std::strerror(errno));
  listener->port_ = boundPort(listener->listener_);
  // A backlog of 0 holds one connection; this one fills it.
  int queued = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in target = loopbackAddress(listener->port_);
  if (::connect(queued, reinterpret_cast<sockaddr *>(&target), sizeof target) != 0)
    return failure(llvm::Twine("cannot fill the backlog: ") + std::strerror(errno));
  listener->queued_.push_back(queued);
  return listener;
}

UnansweredListener::~UnansweredListener() {
  for (int fd : queued_)
    ::close(fd);
  if (listener_ >= 0)
    ::close(listener_);
}

} // namespace kiln::cache::remote::testing
