//===- cache/remote/http_store.h - Objects on an HTTP server -*- C++ -*-===//
//
// A RemoteStore on an HTTP object store (nginx's WebDAV module,
// bazel-remote, an S3-compatible bucket behind a proxy), through libcurl:
// GET an object's URL for its bytes (404 is a miss), PUT its bytes to store
// it. Where an object lives under the base URL is Endpoint::layout's choice.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cache/remote/remote_store.h"
#include "cache/remote/remote_url.h"

namespace kiln::cache::remote {

/// A store for `endpoint`, whose URL `url` has the scheme http or https; an
/// error for a URL or layout it cannot use. Does not connect.
llvm::Expected<std::unique_ptr<RemoteStore>> openHttpStore(const Endpoint &endpoint,
                                                           const RemoteUrl &url);

} // namespace kiln::cache::remote
