//===- cache/remote/curl_library.h - libcurl, opened when needed -*- C++ -*-===//
//
// The HTTP store speaks through libcurl, which brings some thirty libraries
// with it (TLS, Kerberos, LDAP, ICU, ...): linked into kiln, the dynamic
// loader would map them all at every start, a tenth of a warm build, and a
// wheel would have to carry them. So kiln opens libcurl the first time a
// build asks an HTTP remote, and only its declarations come from
// <curl/curl.h>.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Support/Error.h>

#include <curl/curl.h>

namespace kiln::cache::remote {

/// The libcurl functions the HTTP store calls.
struct CurlFunctions {
  CURL *(*easy_init)();
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  CURLcode (*easy_perform)(CURL *);
  void (*easy_reset)(CURL *);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  CURLM *(*multi_init)();
  CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, curl_waitfd[], unsigned, int, int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  CURLMcode (*multi_cleanup)(CURLM *);
  const char *(*multi_strerror)(CURLMcode);
  curl_slist *(*slist_append)(curl_slist *, const char *);
  void (*slist_free_all)(curl_slist *);
};

/// Opens libcurl ($KILN_LIBCURL, a path or a soname, else libcurl.so.4) and
/// sets up its global state, once per process; later calls return what the
/// first found. An error says which library could not be loaded, or which
/// function it lacks.
llvm::Error loadCurl();

/// The functions of the library loadCurl() opened. Only after it succeeded.
const CurlFunctions &libcurl();

} // namespace kiln::cache::remote
