//===- module/manifest_format.cpp - Manifest version, checksums -----------===//

#include "module/manifest_format.h"

#include <cstdio>

namespace kiln::module {

std::string checksumText(uint64_t checksum) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(checksum));
  return text;
}

} // namespace kiln::module
