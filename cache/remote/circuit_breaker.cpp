//===- cache/remote/circuit_breaker.cpp -----------------------------------===//

#include "cache/remote/circuit_breaker.h"

namespace kiln::cache::remote {

CircuitBreaker::Verdict CircuitBreaker::recordFailure(RemoteFailure failure, Request request) {
  switch (failure) {
  case RemoteFailure::TooLarge:
    return Verdict::SkipEntry;
  case RemoteFailure::Full:
    return uploadsStopped.exchange(true) ? Verdict::Continue : Verdict::StopUploads;
  case RemoteFailure::Unreachable:
  case RemoteFailure::TimedOut:
  case RemoteFailure::Unauthorized:
    return stopped.exchange(true) ? Verdict::Continue : Verdict::Stop;
  case RemoteFailure::ServerError:
  case RemoteFailure::BadReply:
    if (request == Request::Upload) {
      if (++uploadErrors < kErrorsInARow)
        return Verdict::Continue;
      return uploadsStopped.exchange(true) ? Verdict::Continue : Verdict::StopUploads;
    }
    if (++lookupErrors < kErrorsInARow)
      return Verdict::Continue;
    return stopped.exchange(true) ? Verdict::Continue : Verdict::Stop;
  }
  return Verdict::Continue;
}

CircuitBreaker::Verdict CircuitBreaker::recordSlowLookup() {
  lookupErrors = 0;
  if (++slowLookups < kErrorsInARow)
    return Verdict::Continue;
  return stopped.exchange(true) ? Verdict::Continue : Verdict::Stop;
}

} // namespace kiln::cache::remote
