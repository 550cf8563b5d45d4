//===- cache/remote/http_store.cpp ----------------------------------------===//

#include "cache/remote/http_store.h"

#include "cache/remote/curl_library.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FormatVariadic.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace kiln::cache::remote {

namespace {

/// Handles kept between requests, each with the connections it made, for
/// the threads of one build.
constexpr size_t kMaxIdleHandles = 8;
/// The connections a batch of lookups opens at most: HTTP/1.1 answers one
/// request at a time on each.
constexpr long kParallelRequests = 8;
/// The most an answer that is not an object may take: an error page.
constexpr uint64_t kSmallAnswerBytes = 64 * 1024;

constexpr llvm::StringLiteral kLayouts = "flat, subdirs, bazel";

struct HandleDeleter {
  void operator()(CURL *handle) const { libcurl().easy_cleanup(handle); }
};
using Handle = std::unique_ptr<CURL, HandleDeleter>;

struct HeaderListDeleter {
  void operator()(curl_slist *list) const { libcurl().slist_free_all(list); }
};
using HeaderList = std::unique_ptr<curl_slist, HeaderListDeleter>;

/// What libcurl's callbacks see of one request.
struct Transfer {
  std::string answer;
  uint64_t answerLimit = 0;
  bool overLimit = false;
  /// A batch's answers so far, and their limit: shared by its transfers.
  uint64_t *batchBytes = nullptr;
  uint64_t batchLimit = 0;
  llvm::StringRef upload;
  size_t uploaded = 0;
  /// Whether a connection was made (or reused) and the request about to go:
  /// a time-out before that is an unreachable server, after it a slow one.
  bool connected = false;
};

size_t takeAnswer(char *data, size_t size, size_t count, void *user) {
  Transfer &transfer = *static_cast<Transfer *>(user);
  size_t bytes = size * count;
  // libcurl's MAXFILESIZE catches an announced length; this catches a
  // chunked answer that grows past the limit.
  if (transfer.answer.size() + bytes > transfer.answerLimit) {
    transfer.overLimit = true;
    return 0;
  }
  if (transfer.batchBytes) {
    *transfer.batchBytes += bytes;
    if (*transfer.batchBytes > transfer.batchLimit) {
      transfer.overLimit = true;
      return 0;
    }
  }
  transfer.answer.append(data, bytes);
  return bytes;
}

size_t giveUpload(char *buffer, size_t size, size_t count, void *user) {
  Transfer &transfer = *static_cast<Transfer *>(user);
  size_t bytes = std::min(size * count, transfer.upload.size() - transfer.uploaded);
  std::memcpy(buffer, transfer.upload.data() + transfer.uploaded, bytes);
  transfer.uploaded += bytes;
  return bytes;
}

/// libcurl rewinds an upload to send it again, on a fresh connection when a
/// reused one turned out closed.
int rewindUpload(void *user, curl_off_t offset, int origin) {
  Transfer &transfer = *static_cast<Transfer *>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > transfer.upload.size())
    return CURL_SEEKFUNC_FAIL;
  transfer.uploaded = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

int noteConnected(void *user, char *, char *, int, int) {
  static_cast<Transfer *>(user)->connected = true;
  return CURL_PREREQFUNC_OK;
}

RemoteFailure failureOfStatus(long status) {
  if (status == 401 || status == 403)
    return RemoteFailure::Unauthorized;
  if (status == 413)
    return RemoteFailure::TooLarge;
  if (status == 507)
    return RemoteFailure::Full;
  if (status >= 300 && status < 600)
    return RemoteFailure::ServerError;
  return RemoteFailure::BadReply;
}

RemoteFailure failureOfCurl(CURLcode code, const Transfer &transfer) {
  switch (code) {
  case CURLE_OPERATION_TIMEDOUT:
    return transfer.connected ? RemoteFailure::TimedOut : RemoteFailure::Unreachable;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_COULDNT_CONNECT:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_SSL_CERTPROBLEM:
    return RemoteFailure::Unreachable;
  case CURLE_LOGIN_DENIED:
    return RemoteFailure::Unauthorized;
  // The URL's scheme was checked when the store was opened: an unsupported
  // protocol now is the server's answer, such as HTTP/0.9.
  case CURLE_UNSUPPORTED_PROTOCOL:
  case CURLE_FILESIZE_EXCEEDED:
  case CURLE_WEIRD_SERVER_REPLY:
  case CURLE_PARTIAL_FILE:
  case CURLE_BAD_CONTENT_ENCODING:
    return RemoteFailure::BadReply;
  case CURLE_WRITE_ERROR:
    return transfer.overLimit ? RemoteFailure::BadReply : RemoteFailure::ServerError;
  default:
    return RemoteFailure::ServerError;
  }
}

struct MultiDeleter {
  void operator()(CURLM *multi) const { libcurl().multi_cleanup(multi); }
};
using Multi = std::unique_ptr<CURLM, MultiDeleter>;

/// One request: its handle and what libcurl's callbacks and error buffer
/// see, which must stay where they are while it runs.
struct Request {
  Handle handle;
  std::string url;
  Transfer transfer;
  char errorText[CURL_ERROR_SIZE] = "";
};

class HttpStore final : public RemoteStore {
public:
  HttpStore(const Endpoint &endpoint, std::string baseUrl, std::optional<std::string> user,
            std::string password, HeaderList headers)
      : endpoint_(endpoint), baseUrl_(std::move(baseUrl)), user_(std::move(user)),
        password_(std::move(password)), headers_(std::move(headers)),
        displayName_(redactUrl(endpoint.url)) {}

  llvm::Expected<std::optional<std::string>> get(llvm::StringRef key) override;
  llvm::Expected<std::vector<std::optional<std::string>>>
  getMany(llvm::ArrayRef<std::string> keys) override;
  llvm::Error put(llvm::StringRef key, llvm::StringRef bytes) override;
  const std::string &displayName() const override { return displayName_; }

private:
  struct Answer {
    long status = 0;
    std::string body;
  };

  std::string objectUrl(llvm::StringRef key) const;
  /// One request; `upload` makes it a PUT, else a GET. Transport failures
  /// are errors; any HTTP status is an Answer.
  llvm::Expected<Answer> perform(const std::string &url, std::optional<llvm::StringRef> upload,
                                 uint64_t answerLimit);
  /// Gives `request` a handle and sets its options: a PUT of `upload`, else
  /// a GET.
  llvm::Error configure(Request &request, std::optional<llvm::StringRef> upload,
                        uint64_t answerLimit);
  /// What `request`, which ended with libcurl's `code`, was answered; its
  /// handle goes back to the pool unless the transfer failed.
  llvm::Expected<Answer> conclude(Request &request, CURLcode code, llvm::StringRef method);
  /// The object a GET's `answer` holds: nothing for 404, an error for any
  /// other status but 200.
  llvm::Expected<std::optional<std::string>> objectOf(llvm::StringRef url, Answer answer) const;
  /// Runs `requests` at once on `multi_`, within the time-outs of one
  /// request; the codes they ended with, in order.
  llvm::Expected<std::vector<CURLcode>>
  performAll(llvm::ArrayRef<std::unique_ptr<Request>> requests);
  Handle takeHandle();
  void keepHandle(Handle handle);
  llvm::Error statusError(llvm::StringRef method, llvm::StringRef url, long status) const;
  llvm::Error failure(RemoteFailure failure, const llvm::Twine &message) const {
    return remoteError(failure, displayName_ + ": " +
                                    hideSecrets(message.str(), {password_, endpoint_.bearerToken}));
  }

  Endpoint endpoint_;
  /// Without credentials or a trailing '/'.
  std::string baseUrl_;
  /// Basic authentication's user, when the URL names one.
  std::optional<std::string> user_;
  std::string password_;
  HeaderList headers_;
  std::string displayName_;
  std::mutex idleMutex_;
  std::vector<Handle> idle_;
  /// Batches run one at a time, on one multi handle that keeps its
  /// connections for the next.
  std::mutex batchMutex_;
  Multi multi_;
};

llvm::Expected<std::optional<std::string>> HttpStore::get(llvm::StringRef key) {
  if (llvm::Error error = checkObjectKey(key))
    return error;
  std::string url = objectUrl(key);
  llvm::Expected<Answer> answer = perform(url, std::nullopt, endpoint_.maxObjectBytes);
  if (!answer)
    return answer.takeError();
  return objectOf(url, std::move(*answer));
}

llvm::Expected<std::optional<std::string>> HttpStore::objectOf(llvm::StringRef url,
                                                               Answer answer) const {
  if (answer.status == 200)
    return std::move(answer.body);
  if (answer.status == 404)
    return std::nullopt;
  return statusError("GET", url, answer.status);
}

llvm::Expected<std::vector<std::optional<std::string>>>
HttpStore::getMany(llvm::ArrayRef<std::string> keys) {
  for (const std::string &key : keys)
    if (llvm::Error error = checkObjectKey(key))
      return error;
  std::lock_guard<std::mutex> lock(batchMutex_);
  uint64_t batchBytes = 0;
  std::vector<std::unique_ptr<Request>> requests;
  for (const std::string &key : keys) {
    requests.push_back(std::make_unique<Request>());
    Request &request = *requests.back();
    request.url = objectUrl(key);
    request.transfer.batchBytes = &batchBytes;
    request.transfer.batchLimit = endpoint_.maxObjectBytes;
    if (llvm::Error error = configure(request, std::nullopt, endpoint_.maxObjectBytes))
      return error;
  }
  llvm::Expected<std::vector<CURLcode>> codes = performAll(requests);
  if (!codes)
    return codes.takeError();
  std::vector<std::optional<std::string>> objects;
  llvm::Error failed = llvm::Error::success();
  for (size_t i = 0; i < requests.size(); ++i) {
    llvm::Expected<Answer> answer = conclude(*requests[i], (*codes)[i], "GET");
    llvm::Expected<std::optional<std::string>> object =
        answer ? objectOf(requests[i]->url, std::move(*answer)) : answer.takeError();
    if (object)
      objects.push_back(std::move(*object));
    else if (failed)
      llvm::consumeError(object.takeError());
    else
      failed = object.takeError();
  }
  if (failed)
    return std::move(failed);
  return objects;
}

llvm::Expected<std::vector<CURLcode>>
HttpStore::performAll(llvm::ArrayRef<std::unique_ptr<Request>> requests) {
  if (!multi_) {
    multi_.reset(libcurl().multi_init());
    if (!multi_)
      return failure(RemoteFailure::ServerError, "libcurl could not make a multi handle");
    libcurl().multi_setopt(multi_.get(), CURLMOPT_MAX_HOST_CONNECTIONS, long(kParallelRequests));
  }
  CURLM *multi = multi_.get();
  for (const std::unique_ptr<Request> &request : requests)
    libcurl().multi_add_handle(multi, request->handle.get());
  auto detach = llvm::make_scope_exit([&] {
    for (const std::unique_ptr<Request> &request : requests)
      libcurl().multi_remove_handle(multi, request->handle.get());
  });
  auto deadline =
      std::chrono::steady_clock::now() + endpoint_.connectTimeout + endpoint_.operationTimeout;
  for (int running = 1; running;) {
    if (CURLMcode code = libcurl().multi_perform(multi, &running); code != CURLM_OK)
      return failure(RemoteFailure::ServerError,
                     llvm::Twine("libcurl failed: ") + libcurl().multi_strerror(code));
    if (!running)
      break;
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      // The connections are mid-answer: they go with their handles.
      for (const std::unique_ptr<Request> &request : requests)
        libcurl().multi_remove_handle(multi, request->handle.get());
      multi_.reset();
      detach.release();
      return failure(RemoteFailure::TimedOut,
                     llvm::formatv("no whole answer to {0} lookups within {1} ms", requests.size(),
                                   endpoint_.operationTimeout.count())
                         .str());
    }
    libcurl().multi_poll(multi, nullptr, 0, static_cast<int>(std::min<int64_t>(left.count(), 1000)),
                         nullptr);
  }
  std::vector<CURLcode> codes(requests.size(), CURLE_OK);
  int queued = 0;
  while (CURLMsg *message = libcurl().multi_info_read(multi, &queued))
    if (message->msg == CURLMSG_DONE)
      for (size_t i = 0; i < requests.size(); ++i)
        if (requests[i]->handle.get() == message->easy_handle)
          codes[i] = message->data.result;
  return codes;
}

llvm::Error HttpStore::put(llvm::StringRef key, llvm::StringRef bytes) {
  if (llvm::Error error = checkObjectKey(key))
    return error;
  std::string url = objectUrl(key);
  llvm::Expected<Answer> answer = perform(url, bytes, kSmallAnswerBytes);
  if (!answer)
    return answer.takeError();
  if (answer->status == 200 || answer->status == 201 || answer->status == 204)
    return llvm::Error::success();
  return statusError("PUT", url, answer->status);
}

std::string HttpStore::objectUrl(llvm::StringRef key) const {
  if (endpoint_.layout == "subdirs")
    return (baseUrl_ + "/" + key.take_front(2) + "/" + key.drop_front(2)).str();
  if (endpoint_.layout == "bazel")
    return (baseUrl_ + "/ac/" + key).str();
  return (baseUrl_ + "/" + key).str();
}

llvm::Expected<HttpStore::Answer> HttpStore::perform(const std::string &url,
                                                     std::optional<llvm::StringRef> upload,
                                                     uint64_t answerLimit) {
  Request request;
  request.url = url;
  if (llvm::Error error = configure(request, upload, answerLimit))
    return error;
  CURLcode code = libcurl().easy_perform(request.handle.get());
  return conclude(request, code, upload ? "PUT" : "GET");
}

llvm::Error HttpStore::configure(Request &request, std::optional<llvm::StringRef> upload,
                                 uint64_t answerLimit) {
  request.handle = takeHandle();
  if (!request.handle)
    return failure(RemoteFailure::ServerError, "libcurl could not make a transfer handle");
  CURL *curl = request.handle.get();
  Transfer &transfer = request.transfer;
  transfer.answerLimit = answerLimit;
  CURLcode setup = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (setup == CURLE_OK)
      setup = libcurl().easy_setopt(curl, option, value);
  };
  set(CURLOPT_URL, request.url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(endpoint_.connectTimeout.count()));
  set(CURLOPT_TIMEOUT_MS,
      static_cast<long>((endpoint_.connectTimeout + endpoint_.operationTimeout).count()));
  set(CURLOPT_MAXFILESIZE_LARGE,
      static_cast<curl_off_t>(std::min<uint64_t>(answerLimit, INT64_MAX)));
  set(CURLOPT_WRITEFUNCTION, takeAnswer);
  set(CURLOPT_WRITEDATA, static_cast<void *>(&transfer));
  set(CURLOPT_PREREQFUNCTION, noteConnected);
  set(CURLOPT_PREREQDATA, static_cast<void *>(&transfer));
  set(CURLOPT_ERRORBUFFER, request.errorText);
  set(CURLOPT_USERAGENT, "kiln");
  if (user_) {
    set(CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    set(CURLOPT_USERNAME, user_->c_str());
    set(CURLOPT_PASSWORD, password_.c_str());
  } else if (endpoint_.netrc) {
    set(CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
    if (const char *netrcFile = std::getenv("NETRC"); netrcFile && *netrcFile)
      set(CURLOPT_NETRC_FILE, netrcFile);
  }
  if (headers_)
    set(CURLOPT_HTTPHEADER, headers_.get());
  if (!endpoint_.caFile.empty())
    set(CURLOPT_CAINFO, endpoint_.caFile.c_str());
  if (upload) {
    transfer.upload = *upload;
    set(CURLOPT_UPLOAD, 1L);
    set(CURLOPT_READFUNCTION, giveUpload);
    set(CURLOPT_READDATA, static_cast<void *>(&transfer));
    set(CURLOPT_SEEKFUNCTION, rewindUpload);
    set(CURLOPT_SEEKDATA, static_cast<void *>(&transfer));
    set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload->size()));
  } else {
    set(CURLOPT_HTTPGET, 1L);
  }
  if (setup != CURLE_OK) {
    libcurl().easy_reset(curl);
    return failure(RemoteFailure::ServerError,
                   llvm::Twine("libcurl refused an option: ") + libcurl().easy_strerror(setup));
  }
  return llvm::Error::success();
}

llvm::Expected<HttpStore::Answer> HttpStore::conclude(Request &request, CURLcode code,
                                                      llvm::StringRef method) {
  CURL *curl = request.handle.get();
  Transfer &transfer = request.transfer;
  long status = 0;
  libcurl().easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  // No option may keep pointing at the request's buffers once it is done.
  libcurl().easy_reset(curl);
  if (code != CURLE_OK) {
    std::string reason = *request.errorText ? request.errorText : libcurl().easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT)
      reason = transfer.connected ? "no whole answer within " +
                                        std::to_string(endpoint_.operationTimeout.count()) + " ms"
                                  : "cannot connect within " +
                                        std::to_string(endpoint_.connectTimeout.count()) + " ms";
    if (code == CURLE_FILESIZE_EXCEEDED || transfer.overLimit)
      reason = "the answer is larger than the limit of " + std::to_string(transfer.answerLimit) +
               " bytes";
    return failure(failureOfCurl(code, transfer), method + " " + request.url + ": " + reason);
  }
  keepHandle(std::move(request.handle));
  return Answer{status, std::move(transfer.answer)};
}

Handle HttpStore::takeHandle() {
  {
    std::lock_guard<std::mutex> lock(idleMutex_);
    if (!idle_.empty()) {
      Handle handle = std::move(idle_.back());
      idle_.pop_back();
      return handle;
    }
  }
  return Handle(libcurl().easy_init());
}

void HttpStore::keepHandle(Handle handle) {
  std::lock_guard<std::mutex> lock(idleMutex_);
  if (idle_.size() < kMaxIdleHandles)
    idle_.push_back(std::move(handle));
}

llvm::Error HttpStore::statusError(llvm::StringRef method, llvm::StringRef url, long status) const {
  llvm::StringRef note = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
  return failure(failureOfStatus(status),
                 method + " " + url + ": HTTP " + llvm::Twine(status) + note);
}

} // namespace

llvm::Expected<std::unique_ptr<RemoteStore>> openHttpStore(const Endpoint &endpoint,
                                                           const RemoteUrl &url) {
  if (llvm::Error error = loadCurl())
    return std::move(error);
  if (!url.hasAuthority || url.host.empty())
    return badUrl(endpoint.url,
                  "has no host (" + url.scheme + "://[user:password@]host[:port][/base/path])");
  if (!url.query.empty())
    return badUrl(endpoint.url, "has a query '?" + url.query +
                                    "'; objects are named by appending to the base path");
  if (!llvm::is_contained({"flat", "subdirs", "bazel"}, endpoint.layout))
    return badUrl(endpoint.url,
                  "has an unknown layout '" + endpoint.layout + "' (" + kLayouts + ")");
  if (llvm::any_of(endpoint.bearerToken, [](char c) { return llvm::isPrint(c) == 0; }))
    return badUrl(endpoint.url, "has a bearer token with a character outside printable ASCII");

  std::string baseUrl = url.scheme + "://" + hostForUrl(url.host);
  if (url.port)
    baseUrl += ":" + std::to_string(*url.port);
  baseUrl += llvm::StringRef(url.path).rtrim('/').str();

  std::optional<std::string> user;
  std::string password;
  if (!url.user.empty() || url.password) {
    user = url.user;
    password = url.password ? *url.password : endpoint.password;
  }
  HeaderList headers;
  if (!endpoint.bearerToken.empty()) {
    std::string header = "Authorization: Bearer " + endpoint.bearerToken;
    headers.reset(libcurl().slist_append(nullptr, header.c_str()));
    if (!headers)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "libcurl could not keep the bearer token's header");
  }
  return std::make_unique<HttpStore>(endpoint, std::move(baseUrl), std::move(user),
                                     std::move(password), std::move(headers));
}

} // namespace kiln::cache::remote
