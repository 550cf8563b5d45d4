//===- cache/remote/remote_store.cpp --------------------------------------===//

#include "cache/remote/remote_store.h"

#include "cache/remote/http_store.h"
#include "cache/remote/redis_store.h"
#include "cache/remote/remote_url.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::cache::remote {

char RemoteError::ID = 0;

llvm::StringRef describeFailure(RemoteFailure failure) {
  switch (failure) {
  case RemoteFailure::Unreachable:
    return "unreachable";
  case RemoteFailure::TimedOut:
    return "timed out";
  case RemoteFailure::Unauthorized:
    return "unauthorized";
  case RemoteFailure::TooLarge:
    return "too large";
  case RemoteFailure::Full:
    return "full";
  case RemoteFailure::ServerError:
    return "server error";
  case RemoteFailure::BadReply:
    return "bad reply";
  }
  llvm_unreachable("every RemoteFailure is described");
}

llvm::Error remoteError(RemoteFailure failure, const llvm::Twine &message) {
  return llvm::make_error<RemoteError>(failure, message.str());
}

RemoteStore::~RemoteStore() = default;

llvm::Error checkObjectKey(llvm::StringRef key) {
  if (key.size() == 64 &&
      llvm::all_of(key, [](char c) { return llvm::isDigit(c) || (c >= 'a' && c <= 'f'); }))
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + key +
                                     "' is not a remote object key (64 lowercase hex digits)");
}

llvm::Expected<std::unique_ptr<RemoteStore>> openRemoteStore(const Endpoint &endpoint) {
  llvm::Expected<RemoteUrl> url = splitRemoteUrl(endpoint.url);
  if (!url)
    return url.takeError();
  if (endpoint.connectTimeout.count() <= 0 || endpoint.operationTimeout.count() <= 0)
    return badUrl(endpoint.url, "has a connect or operation time-out that is not positive");
  if (url->scheme == "redis" || url->scheme == "redis+unix")
    return openRedisStore(endpoint, *url);
  if (url->scheme == "http" || url->scheme == "https")
    return openHttpStore(endpoint, *url);
  return badUrl(endpoint.url, "has an unknown scheme '" + url->scheme +
                                  "' (supported: " + kSupportedSchemes + ")");
}

} // namespace kiln::cache::remote
