//===- cache/remote/circuit_breaker.h - When to stop asking a remote -*- C++ -*-===//
//
// A remote that is down, hangs, refuses our credentials or keeps answering
// with errors costs a build time on every request and gains it nothing.
// The breaker watches how a remote's requests end and stops the build from
// asking it again:
//
//   unreachable, timed out, unauthorized   stop at once: it will not mend
//                                          within one build, and each try
//                                          costs up to a time-out
//   server error, bad reply                three lookups in a row: stop;
//                                          three uploads in a row: stop
//                                          uploading (nginx answers a full
//                                          disk with a plain 500)
//   lookups answered, but slowly           three in a row taking more than
//                                          half the operation time-out: stop
//                                          (a remote that answers in just
//                                          under its time-out would otherwise
//                                          cost that much on every lookup)
//   full                                   stop uploading; lookups go on
//   too large                              skip that entry only
//
// So a remote costs a build at most about one time-out per request in
// flight when it fails, and nothing after.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/remote/remote_store.h"

#include <atomic>

namespace kiln::cache::remote {

class CircuitBreaker {
public:
  /// What a failure means for the requests to come.
  enum class Verdict {
    /// Keep asking (a failure, but not enough to stop).
    Continue,
    /// Skip this one request's object; nothing is wrong with the remote.
    SkipEntry,
    /// No more uploads; lookups go on.
    StopUploads,
    /// No more requests of any kind.
    Stop,
  };

  /// Lookups and uploads fail apart: a server that cannot store can still
  /// serve what it has.
  enum class Request { Lookup, Upload };

  /// Records a failure. Each verdict that stops something is returned once,
  /// by the failure that caused it; later failures see Continue.
  Verdict recordFailure(RemoteFailure failure, Request request);
  void recordSuccess(Request request) {
    if (request == Request::Lookup)
      lookupErrors = slowLookups = 0;
    else
      uploadErrors = 0;
  }
  /// Records a lookup that was answered, but slowly.
  Verdict recordSlowLookup();

  bool allowsRequests() const { return !stopped; }
  bool allowsUploads() const { return !stopped && !uploadsStopped; }

  static constexpr unsigned kErrorsInARow = 3;

private:
  std::atomic<bool> stopped{false};
  std::atomic<bool> uploadsStopped{false};
  std::atomic<unsigned> lookupErrors{0}, uploadErrors{0}, slowLookups{0};
};

} // namespace kiln::cache::remote
