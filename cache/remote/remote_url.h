//===- cache/remote/remote_url.h - A remote's URL, taken apart -*- C++ -*-===//
//
// Both stores read the same URL shape, scheme://[user[:password]@]host[:port]
// /path?query, and every message about a URL must hide its password: the
// splitting and the hiding live here, once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::cache::remote {

/// The schemes openRemoteStore knows, for messages.
inline constexpr llvm::StringLiteral kSupportedSchemes = "redis, redis+unix, http, https";

struct RemoteUrl {
  /// Lower case.
  std::string scheme;
  /// Whether the URL has an authority ("scheme://..."); "redis+unix:/path" has none.
  bool hasAuthority = false;
  /// Percent-decoded.
  std::string user;
  /// Percent-decoded; set when the user-info has a ':', even if empty after it.
  std::optional<std::string> password;
  /// Without the brackets of an IPv6 literal.
  std::string host;
  std::optional<uint16_t> port;
  /// As written: empty, or starting with '/'.
  std::string path;
  /// After the '?', as written.
  std::string query;
};

/// `url` split into its parts; an error naming the (redacted) URL when it
/// has no scheme, a bad port, a fragment or bad percent-encoding.
llvm::Expected<RemoteUrl> splitRemoteUrl(llvm::StringRef url);

/// An error about `url` (redacted): "remote cache URL '<url>' <problem>".
llvm::Error badUrl(llvm::StringRef url, const llvm::Twine &problem);

/// `text` with every occurrence of each non-empty secret replaced by "***":
/// what a server echoes back must not carry a password into a message.
std::string hideSecrets(llvm::StringRef text, llvm::ArrayRef<llvm::StringRef> secrets);

/// The host as a URL writes it: IPv6 literals in brackets.
std::string hostForUrl(llvm::StringRef host);

} // namespace kiln::cache::remote
