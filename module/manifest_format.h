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

/// A checksum as manifests write it: 16 lowercase hex digits.
std::string checksumText(uint64_t checksum);

/// The checksum `text` spells as checksumText() writes it; nothing when it
/// is not 16 lowercase hex digits.
std::optional<uint64_t> parseChecksumText(std::string_view text);

} // namespace kiln::module
