//===- cache/remote/curl_library.cpp - libcurl, opened when needed --------===//

#include "cache/remote/curl_library.h"

#include "support/dynamic_library.h"

#include <llvm/Support/Process.h>

#include <cassert>
#include <mutex>
#include <optional>
#include <string>

namespace kiln::cache::remote {

namespace {

CurlFunctions functions;
std::optional<std::string> loadFailure;
bool loaded = false;

/// Points `slot` at the library's function `name`; where it has none, keeps
/// the first such failure in `failure`.
template <typename Function>
void bind(const support::DynamicLibrary &library, const char *name, Function *&slot,
          std::optional<std::string> &failure) {
  llvm::Expected<Function *> found = library.function<Function>(name);
  if (found)
    slot = *found;
  else if (failure)
    llvm::consumeError(found.takeError());
  else
    failure = llvm::toString(found.takeError());
}

/// Binds every function of CurlFunctions; what was missing, if anything.
std::optional<std::string> bindAll(const support::DynamicLibrary &library) {
  CurlFunctions &f = functions;
  std::optional<std::string> failure;
  bind(library, "curl_easy_init", f.easy_init, failure);
  bind(library, "curl_easy_setopt", f.easy_setopt, failure);
  bind(library, "curl_easy_getinfo", f.easy_getinfo, failure);
  bind(library, "curl_easy_perform", f.easy_perform, failure);
  bind(library, "curl_easy_reset", f.easy_reset, failure);
  bind(library, "curl_easy_cleanup", f.easy_cleanup, failure);
  bind(library, "curl_easy_strerror", f.easy_strerror, failure);
  bind(library, "curl_multi_init", f.multi_init, failure);
  bind(library, "curl_multi_setopt", f.multi_setopt, failure);
  bind(library, "curl_multi_add_handle", f.multi_add_handle, failure);
  bind(library, "curl_multi_remove_handle", f.multi_remove_handle, failure);
  bind(library, "curl_multi_perform", f.multi_perform, failure);
  bind(library, "curl_multi_poll", f.multi_poll, failure);
  bind(library, "curl_multi_info_read", f.multi_info_read, failure);
  bind(library, "curl_multi_cleanup", f.multi_cleanup, failure);
  bind(library, "curl_multi_strerror", f.multi_strerror, failure);
  bind(library, "curl_slist_append", f.slist_append, failure);
  bind(library, "curl_slist_free_all", f.slist_free_all, failure);
  return failure;
}

/// Opens the library and binds its functions; the message of what failed.
std::optional<std::string> open() {
  std::string name = llvm::sys::Process::GetEnv("KILN_LIBCURL").value_or("libcurl.so.4");
  if (name.empty())
    name = "libcurl.so.4";
  llvm::Expected<support::DynamicLibrary> library = support::DynamicLibrary::open(name);
  if (!library)
    return llvm::toString(library.takeError()) +
           " (HTTP remote caches need libcurl: libcurl.so.4, or the library KILN_LIBCURL names)";
  if (std::optional<std::string> missing = bindAll(*library))
    return missing;
  using GlobalInit = CURLcode(long);
  llvm::Expected<GlobalInit *> globalInit = library->function<GlobalInit>("curl_global_init");
  if (!globalInit)
    return llvm::toString(globalInit.takeError());
  if ((*globalInit)(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return std::string("libcurl could not be initialized");
  return std::nullopt;
}

} // namespace

llvm::Error loadCurl() {
  static std::once_flag once;
  std::call_once(once, [] {
    loadFailure = open();
    loaded = !loadFailure;
  });
  if (loadFailure)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *loadFailure);
  return llvm::Error::success();
}

const CurlFunctions &libcurl() {
  assert(loaded && "libcurl() before loadCurl() succeeded");
  return functions;
}

} // namespace kiln::cache::remote
