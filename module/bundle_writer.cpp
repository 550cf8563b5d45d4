//===- module/bundle_writer.cpp - A built module's bundle -----------------===//

#include "module/bundle_writer.h"

#include "module/format.h"

#include <llvm/Support/Alignment.h>
#include <llvm/Support/Endian.h>

#include <cstring>

namespace kiln::module {

static constexpr uint64_t BlobAlignment = 16;
static_assert(sizeof(KilnBundleHeader) == 56, "docs/abi.md documents a 56-byte header");

std::vector<uint64_t> payloadOffsets(llvm::ArrayRef<uint64_t> sizes) {
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (uint64_t size : sizes) {
    offsets.push_back(offset);
    offset = llvm::alignTo(offset + size, BlobAlignment);
  }
  return offsets;
}

std::string writeBundle(llvm::StringRef manifest, llvm::ArrayRef<std::string> blobs) {
  std::vector<uint64_t> sizes;
  for (const std::string &blob : blobs)
    sizes.push_back(blob.size());
  std::vector<uint64_t> offsets = payloadOffsets(sizes);
  uint64_t payloadSize =
      blobs.empty() ? 0 : llvm::alignTo(offsets.back() + sizes.back(), BlobAlignment);

  KilnBundleHeader header;
  std::memset(&header, 0, sizeof header);
  std::memcpy(header.magic, KILN_BUNDLE_MAGIC, sizeof header.magic);
  header.formatVersion = KILN_MODULE_FORMAT_VERSION;
  header.headerSize = sizeof(KilnBundleHeader);
  header.manifestOffset = sizeof(KilnBundleHeader);
  header.manifestSize = manifest.size();
  header.manifestChecksum = kilnChecksum(manifest.data(), manifest.size());
  header.payloadOffset = llvm::alignTo(header.manifestOffset + manifest.size(), BlobAlignment);
  header.payloadSize = payloadSize;
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "the bundle header is little-endian, as every Kiln target");

  std::string bundle(header.payloadOffset + payloadSize, '\0');
  std::memcpy(bundle.data(), &header, sizeof header);
  std::memcpy(bundle.data() + header.manifestOffset, manifest.data(), manifest.size());
  for (size_t i = 0; i < blobs.size(); ++i)
    std::memcpy(bundle.data() + header.payloadOffset + offsets[i], blobs[i].data(),
                blobs[i].size());
  return bundle;
}

} // namespace kiln::module
