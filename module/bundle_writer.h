//===- module/bundle_writer.h - A built module's bundle ---------*- C++ -*-===//
//
// The bundle is what a built module carries for the runtime
// (module/format.h):
//
//   KilnBundleHeader   56 bytes: magic, format, sizes, manifest checksum
//   manifest           UTF-8 JSON, at headerSize
//   zero padding       to a multiple of 16
//   payload            one fat binary per image (specializations share it),
//                      each starting at a multiple of 16 from the payload's
//                      start, zero padded
//
// Fat binary offsets are known before the manifest is written (they depend
// on the sizes alone), so that the manifest can record them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::module {

/// Where blobs of `sizes` go in the payload, from its start.
std::vector<uint64_t> payloadOffsets(llvm::ArrayRef<uint64_t> sizes);

/// The bundle of `manifest` and `blobs` (placed at payloadOffsets()).
std::string writeBundle(llvm::StringRef manifest, llvm::ArrayRef<std::string> blobs);

} // namespace kiln::module
