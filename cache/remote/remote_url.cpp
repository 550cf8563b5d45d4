//===- cache/remote/remote_url.cpp ----------------------------------------===//

#include "cache/remote/remote_url.h"

#include "cache/remote/remote_store.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::cache::remote {

namespace {

/// `text` with each %XX replaced by its byte; nothing for a '%' not
/// followed by two hex digits.
std::optional<std::string> percentDecode(llvm::StringRef text) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      decoded += text[i];
      continue;
    }
    if (i + 2 >= text.size())
      return std::nullopt;
    if (!llvm::isHexDigit(text[i + 1]) || !llvm::isHexDigit(text[i + 2]))
      return std::nullopt;
    decoded +=
        static_cast<char>(llvm::hexDigitValue(text[i + 1]) * 16 + llvm::hexDigitValue(text[i + 2]));
    i += 2;
  }
  return decoded;
}

bool isSchemeText(llvm::StringRef scheme) {
  return !scheme.empty() && llvm::isAlpha(scheme.front()) && llvm::all_of(scheme, [](char c) {
    return llvm::isAlnum(c) || c == '+' || c == '-' || c == '.';
  });
}

} // namespace

std::string redactUrl(llvm::StringRef url) {
  // Errs on the side of hiding too much: the user-info ends at the last '@'
  // before any query, so a password with an unescaped '/' or '@' in it is
  // hidden too (and a path with an '@' after a port loses a little).
  size_t start = url.find("://");
  start = start == llvm::StringRef::npos ? 0 : start + 3;
  llvm::StringRef rest = url.drop_front(start);
  llvm::StringRef beforeQuery = rest.take_until([](char c) { return c == '?' || c == '#'; });
  size_t at = beforeQuery.rfind('@');
  if (at == llvm::StringRef::npos)
    return url.str();
  size_t colon = beforeQuery.take_front(at).find(':');
  if (colon == llvm::StringRef::npos)
    return url.str();
  return (url.take_front(start + colon + 1) + "***" + url.drop_front(start + at)).str();
}

llvm::Error badUrl(llvm::StringRef url, const llvm::Twine &problem) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "remote cache URL '" + redactUrl(url) + "' " + problem);
}

std::string hideSecrets(llvm::StringRef text, llvm::ArrayRef<llvm::StringRef> secrets) {
  std::string hidden = text.str();
  for (llvm::StringRef secret : secrets) {
    if (secret.empty())
      continue;
    for (size_t at = hidden.find(secret); at != std::string::npos; at = hidden.find(secret, at + 3))
      hidden.replace(at, secret.size(), "***");
  }
  return hidden;
}

std::string hostForUrl(llvm::StringRef host) {
  return host.contains(':') ? ("[" + host + "]").str() : host.str();
}

llvm::Expected<RemoteUrl> splitRemoteUrl(llvm::StringRef url) {
  if (llvm::any_of(url, [](char c) { return llvm::isSpace(c) || llvm::isPrint(c) == 0; }))
    return badUrl(url, "contains a space or a character outside printable ASCII (percent-encode "
                       "it)");
  size_t colon = url.find(':');
  if (colon == llvm::StringRef::npos || !isSchemeText(url.take_front(colon)))
    return badUrl(url, "has no scheme (supported: " + kSupportedSchemes + ")");
  RemoteUrl parts;
  parts.scheme = url.take_front(colon).lower();
  llvm::StringRef rest = url.drop_front(colon + 1);
  if (rest.contains('#'))
    return badUrl(url, "has a fragment ('#...'); a remote URL takes none (write a '#' in a "
                       "password as %23)");

  if (rest.consume_front("//")) {
    parts.hasAuthority = true;
    llvm::StringRef authority = rest.take_until([](char c) { return c == '/' || c == '?'; });
    rest = rest.drop_front(authority.size());
    size_t at = authority.rfind('@');
    if (at != llvm::StringRef::npos) {
      auto [user, password] = authority.take_front(at).split(':');
      bool hasPassword = authority.take_front(at).contains(':');
      authority = authority.drop_front(at + 1);
      std::optional<std::string> decodedUser = percentDecode(user);
      std::optional<std::string> decodedPassword = percentDecode(password);
      if (!decodedUser || !decodedPassword)
        return badUrl(url, "has a '%' in its user-info that is not followed by two hex digits");
      parts.user = std::move(*decodedUser);
      if (hasPassword)
        parts.password = std::move(*decodedPassword);
    }
    llvm::StringRef portText;
    bool hasPort = false;
    if (authority.starts_with("[")) {
      size_t close = authority.find(']');
      if (close == llvm::StringRef::npos)
        return badUrl(url, "has a '[' without a ']' in its host");
      parts.host = authority.slice(1, close).str();
      llvm::StringRef after = authority.drop_front(close + 1);
      if (!after.empty() && !after.consume_front(":"))
        return badUrl(url, "has '" + after + "' after its bracketed host");
      hasPort = !authority.drop_front(close + 1).empty();
      portText = after;
    } else {
      size_t portColon = authority.rfind(':');
      hasPort = portColon != llvm::StringRef::npos;
      parts.host = authority.take_front(portColon).str();
      if (hasPort)
        portText = authority.drop_front(portColon + 1);
    }
    if (hasPort) {
      unsigned port = 0;
      if (portText.empty() || !llvm::all_of(portText, llvm::isDigit) ||
          portText.getAsInteger(10, port) || port == 0 || port > 65535)
        return badUrl(url, "has a bad port '" + portText + "' (a number from 1 to 65535)");
      parts.port = static_cast<uint16_t>(port);
    }
  }

  auto [path, query] = rest.split('?');
  parts.path = path.str();
  parts.query = query.str();
  return parts;
}

} // namespace kiln::cache::remote
