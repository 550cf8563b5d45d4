//===- tests/cache/remote/store_test_support.h - What every store test uses -*- C++ -*-===//
#pragma once

#include "cache/remote/remote_store.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace kiln::cache::remote::testing {

/// A valid object key, different for each `seed`.
inline std::string objectKey(unsigned seed) {
  std::mt19937 random(seed);
  std::string key;
  for (int i = 0; i < 64; ++i)
    key += "0123456789abcdef"[random() % 16];
  return key;
}

/// `size` bytes of every value, NUL and CR LF included.
inline std::string objectBytes(size_t size, unsigned seed = 1) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char &byte : bytes)
    byte = static_cast<char>(random() % 256);
  return bytes;
}

/// What a failed request said: its kind when it is a RemoteError.
struct Failure {
  std::optional<RemoteFailure> kind;
  std::string message;
};

inline Failure failureOf(llvm::Error error) {
  Failure failure;
  llvm::handleAllErrors(
      std::move(error),
      [&](const RemoteError &remote) {
        failure.kind = remote.failure();
        failure.message = remote.message();
      },
      [&](const llvm::ErrorInfoBase &other) { failure.message = other.message(); });
  return failure;
}

template <typename T> Failure failureOf(llvm::Expected<T> result) {
  if (result)
    return Failure{std::nullopt, "(it succeeded)"};
  return failureOf(result.takeError());
}

inline std::string kindName(std::optional<RemoteFailure> kind) {
  return kind ? describeFailure(*kind).str() : std::string("not a RemoteError");
}

/// An endpoint at `url`, everything else as Endpoint's defaults.
inline Endpoint endpointAt(std::string url) {
  Endpoint endpoint;
  endpoint.url = std::move(url);
  return endpoint;
}

/// The store for `endpoint`; fails the test when it cannot be opened.
inline std::unique_ptr<RemoteStore> openStore(const Endpoint &endpoint) {
  llvm::Expected<std::unique_ptr<RemoteStore>> store = openRemoteStore(endpoint);
  if (!store) {
    ADD_FAILURE() << "cannot open " << endpoint.url << ": " << llvm::toString(store.takeError());
    return nullptr;
  }
  return std::move(*store);
}

/// A loopback server of kind `Server` (loopback_servers.h) started with
/// `arguments`; fails the test when it cannot start.
template <typename Server, typename... Arguments>
std::unique_ptr<Server> startServer(Arguments &&...arguments) {
  llvm::Expected<std::unique_ptr<Server>> server =
      Server::start(std::forward<Arguments>(arguments)...);
  if (!server) {
    ADD_FAILURE() << llvm::toString(server.takeError());
    return nullptr;
  }
  return std::move(*server);
}

/// An endpoint at `url` with time-outs generous enough for a loaded machine
/// (the time-out tests set their own), and no ~/.netrc of whoever runs the
/// tests taking part, except where tested.
inline Endpoint patientEndpoint(std::string url) {
  Endpoint endpoint = endpointAt(std::move(url));
  endpoint.connectTimeout = std::chrono::milliseconds(2000);
  endpoint.operationTimeout = std::chrono::milliseconds(5000);
  endpoint.netrc = false;
  return endpoint;
}

/// How long `work` took.
template <typename Work> std::chrono::milliseconds timeOf(Work &&work) {
  auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

} // namespace kiln::cache::remote::testing
