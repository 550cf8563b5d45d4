//===- module/manifest_format.cpp - Manifest version, checksums -----------===//

#include "module/manifest_format.h"

#include <cstdio>

namespace kiln::module {

std::string checksumText(uint64_t checksum) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(checksum));
  return text;
}

std::optional<uint64_t> parseChecksumText(std::string_view text) {
  if (text.size() != 16)
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9')
      value = value << 4 | uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f')
      value = value << 4 | uint64_t(c - 'a' + 10);
    else
      return std::nullopt;
  }
  return value;
}

} // namespace kiln::module
