//===- cache/remote/remote_store.h - A server that keeps bytes by key -*- C++ -*-===//
//
// The remote cache tier talks to servers teams already run: Redis
// (redis_store.h) and HTTP object stores such as nginx's WebDAV module,
// bazel-remote or an S3-compatible bucket (http_store.h). To the tier each
// is a RemoteStore: get (one key, or a batch), put, nothing more. What the bytes mean (a signed
// cache entry) is the tier's business (remote_entry.h); how long to keep
// asking a server that misbehaves is the tier's too (remote_tier.h).
//
// A store never throws, never blocks longer than its time-outs, and says
// why a request failed with a RemoteError whose kind the tier acts on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cache::remote {

/// Why a request to a remote failed.
enum class RemoteFailure {
  /// No connection: refused, no route, name not found, connect time-out.
  Unreachable,
  /// Connected, but no full answer within the operation time-out.
  TimedOut,
  /// Credentials missing or refused (HTTP 401/403, Redis NOAUTH/WRONGPASS).
  Unauthorized,
  /// The server refuses an object this large (HTTP 413).
  TooLarge,
  /// The server has no room (HTTP 507, Redis OOM, a full disk).
  Full,
  /// Any other refusal or server-side error (HTTP 5xx, a Redis error reply).
  ServerError,
  /// An answer that is not what the protocol promises.
  BadReply,
};

llvm::StringRef describeFailure(RemoteFailure failure);

class RemoteError : public llvm::ErrorInfo<RemoteError> {
public:
  static char ID;
  RemoteError(RemoteFailure failure, std::string message)
      : failure_(failure), message_(std::move(message)) {}
  RemoteFailure failure() const { return failure_; }
  void log(llvm::raw_ostream &os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  RemoteFailure failure_;
  std::string message_;
};

llvm::Error remoteError(RemoteFailure failure, const llvm::Twine &message);

/// One server, as the configuration names it.
struct Endpoint {
  /// redis://[user:password@]host[:port][/db], redis+unix://[user:password@]/path/to/socket[?db=N],
  /// http(s)://[user:password@]host[:port][/base/path].
  std::string url;
  /// The longest wait for a connection (with HTTPS, its TLS handshake too).
  std::chrono::milliseconds connectTimeout{100};
  /// The longest wait, once connected, for a request's whole answer: a large
  /// object must arrive within it too. A new Redis connection's AUTH and
  /// SELECT count against the request that made it.
  std::chrono::milliseconds operationTimeout{1000};
  /// HTTP only: where an object lives under the base URL.
  ///   "flat"     <base>/<key>
  ///   "subdirs"  <base>/<key[0:2]>/<key[2:]>
  ///   "bazel"    <base>/ac/<key>  (bazel-remote's action cache)
  std::string layout = "flat";
  /// HTTP: sent as "Authorization: Bearer <token>"; empty for none.
  std::string bearerToken;
  /// A password for the URL's user (or Redis's default user) when the URL
  /// carries none; empty for none.
  std::string password;
  /// HTTP: use ~/.netrc (or $NETRC) for credentials the URL lacks.
  bool netrc = true;
  /// HTTPS: a file of CA certificates to trust instead of the system's.
  std::string caFile;
  /// An answer larger than this is a BadReply, never an allocation.
  uint64_t maxObjectBytes = uint64_t(512) << 20;
};

/// Success for a key of 64 lowercase hex digits; otherwise an error that is
/// not a RemoteError, since such a key is the caller's mistake, not the
/// server's (and would otherwise name a path such as "../x" on an HTTP store).
llvm::Error checkObjectKey(llvm::StringRef key);

/// The most keys one getMany asks.
inline constexpr size_t kBatchKeys = 32;

/// A remote object store: bytes by key. Keys are 64 lowercase hex digits
/// (checkObjectKey); get and put refuse any other key with its error.
/// Every method is thread-safe; connections are made lazily, kept for
/// reuse, and dropped after a failure.
class RemoteStore {
public:
  virtual ~RemoteStore();

  /// The object `key`; nothing when the server does not have it.
  virtual llvm::Expected<std::optional<std::string>> get(llvm::StringRef key) = 0;

  /// The objects `keys` (at most kBatchKeys of them), in order, nothing for
  /// those the server does not have, asked in one round trip where the
  /// protocol allows: Redis sends every GET before reading the first
  /// answer, HTTP asks over several connections at once. The batch is one
  /// request to the time-outs (its whole answer within the operation
  /// time-out) and to the size limit (its objects together at most
  /// maxObjectBytes); any failure fails all of it.
  virtual llvm::Expected<std::vector<std::optional<std::string>>>
  getMany(llvm::ArrayRef<std::string> keys) = 0;

  /// Stores `bytes` as `key`, replacing what was there.
  virtual llvm::Error put(llvm::StringRef key, llvm::StringRef bytes) = 0;

  /// The URL with any password or token replaced by "***", for messages.
  virtual const std::string &displayName() const = 0;
};

/// `url` with the password of its user-info, if any, replaced by "***".
std::string redactUrl(llvm::StringRef url);

/// A store for `endpoint`, by its URL's scheme; an error for a URL that
/// cannot be used (unknown scheme, no host, bad port). Connects lazily:
/// an unreachable server is not an error here.
llvm::Expected<std::unique_ptr<RemoteStore>> openRemoteStore(const Endpoint &endpoint);

} // namespace kiln::cache::remote
