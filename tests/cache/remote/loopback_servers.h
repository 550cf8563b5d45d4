//===- tests/cache/remote/loopback_servers.h - Servers for the store tests -*- C++ -*-===//
//
// The stores are tested against the real servers teams run, Redis and
// nginx (with its WebDAV module), each started on a free loopback port in a
// temporary folder and killed when the test ends; and against two stand-ins
// for servers that misbehave: one that answers every request with the same
// bytes, and one that never accepts a connection.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace kiln::cache::remote::testing {

/// A temporary folder, removed with all it holds when destroyed.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string file(llvm::StringRef name) const;

private:
  std::string path_;
};

/// A child process; killed and reaped when destroyed, even while paused.
class ChildProcess {
public:
  /// Starts `arguments` (the program first, by path) with its output in `logFile`.
  static llvm::Expected<std::unique_ptr<ChildProcess>> start(llvm::ArrayRef<std::string> arguments,
                                                             llvm::StringRef logFile);
  ~ChildProcess();
  /// SIGSTOP: the kernel still accepts connections, nobody answers them.
  void pause();
  void resume();
  bool hasExited();

private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  bool reaped_ = false;
};

struct RedisOptions {
  /// --requirepass, when not empty.
  std::string password;
  /// Also listen on a Unix socket in the server's folder.
  bool unixSocket = false;
  /// More configuration, "--name", "value"...
  std::vector<std::string> extraArguments;
};

/// redis-server on 127.0.0.1, saving nothing.
class RedisServer {
public:
  static llvm::Expected<std::unique_ptr<RedisServer>> start(const RedisOptions &options = {});
  /// redis://[userInfo@]127.0.0.1:<port><path>
  std::string url(llvm::StringRef userInfo = "", llvm::StringRef path = "") const;
  const std::string &socketPath() const { return socketPath_; }
  ChildProcess &process() { return *process_; }

private:
  TempDir folder_;
  uint16_t port_ = 0;
  std::string socketPath_;
  std::unique_ptr<ChildProcess> process_;
};

/// nginx serving a folder over WebDAV (PUT creates missing folders; bodies
/// up to 1 MiB), with /basic/ behind basic authentication (kUser,
/// kPassword) and /bearer/ behind "Authorization: Bearer kToken".
class NginxServer {
public:
  static constexpr llvm::StringLiteral kUser = "builder";
  static constexpr llvm::StringLiteral kPassword = "basic-pa55word";
  static constexpr llvm::StringLiteral kToken = "bearer-t0ken";
  static constexpr uint64_t kMaxBodyBytes = 1 << 20;

  /// With `https`, TLS with a self-signed certificate for 127.0.0.1
  /// (certificate()), made by the openssl command.
  static llvm::Expected<std::unique_ptr<NginxServer>> start(bool https = false);
  /// http(s)://[userInfo@]127.0.0.1:<port><path>
  std::string url(llvm::StringRef path = "", llvm::StringRef userInfo = "") const;
  /// The folder nginx serves.
  std::string root() const { return folder_.file("root"); }
  std::string certificate() const { return folder_.file("cert.pem"); }
  /// One line per request: nginx's serial number of its connection, then
  /// the request line.
  std::string accessLog() const { return folder_.file("access.log"); }
  ChildProcess &process() { return *process_; }

private:
  TempDir folder_;
  bool https_ = false;
  uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

/// Answers every connection on 127.0.0.1 with `answer` once `requestEnd`
/// has arrived (or, with an empty `requestEnd`, any bytes), then waits for
/// the client to hang up, or, with `hangUp`, hangs up itself: a server that
/// closes the connection in the middle of what it was asked.
class ScriptedServer {
public:
  static llvm::Expected<std::unique_ptr<ScriptedServer>>
  start(std::string answer, std::string requestEnd, bool hangUp = false);
  ~ScriptedServer();
  uint16_t port() const { return port_; }

private:
  ScriptedServer() = default;
  void serve();
  void answerConnection(int connection);
  int listener_ = -1;
  uint16_t port_ = 0;
  std::string answer_;
  std::string requestEnd_;
  bool hangUp_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

/// A listening socket on 127.0.0.1 that never accepts, its backlog already
/// full: the kernel drops further connection requests, so a client waits
/// for its own connect time-out, as with a host that is down.
class UnansweredListener {
public:
  static llvm::Expected<std::unique_ptr<UnansweredListener>> start();
  ~UnansweredListener();
  uint16_t port() const { return port_; }

private:
  UnansweredListener() = default;
  int listener_ = -1;
  std::vector<int> queued_;
  uint16_t port_ = 0;
};

/// A port on 127.0.0.1 that nothing listens on (at the time of asking).
uint16_t freeLoopbackPort();

} // namespace kiln::cache::remote::testing
