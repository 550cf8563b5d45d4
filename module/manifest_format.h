//===- module/manifest_format.h - Manifest version, checksums ---*- C++ -*-===//
//
// What writers and readers of manifests (docs/abi.md) agree on besides the
// JSON itself: its format version and how checksums are spelled.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::module {

/// Manifests say "format": this. Bumped whenever a key changes meaning or
/// a reader would need to know of a new one.
constexpr unsigned ManifestFormat = 2;

/// How a specialization's "index_checks" names the copies of the kernel's
/// body its host code holds: with index checks, without, or both, between
/// which the CPU engine chooses at each launch. Modules of earlier builds
/// have no "index_checks": both.
constexpr std::string_view IndexChecksChecked = "checked";
constexpr std::string_view IndexChecksUnchecked = "unchecked";
constexpr std::string_view IndexChecksBoth = "both";

/// Whether `spelling` is one of the three above.
constexpr bool isIndexChecksSpelling(std::string_view spelling) {
  return spelling == IndexChecksChecked || spelling == IndexChecksUnchecked ||
         spelling == IndexChecksBoth;
}

/// A checksum as manifests write it: 16 lowercase hex digits.
std::string checksumText(uint64_t checksum);

/// The checksum `text` spells as checksumText() writes it; nothing when it
/// is not 16 lowercase hex digits.
std::optional<uint64_t> parseChecksumText(std::string_view text);

} // namespace kiln::module
