//===- module/bundle_reader.cpp - Finding a built module's bundle ---------===//

#include "module/bundle_reader.h"

#include "module/manifest_format.h"

#include <llvm/Support/FormatVariadic.h>

#include <cstring>

namespace kiln::module {

static llvm::Error damaged(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

llvm::Expected<BundleView> findBundle(llvm::StringRef file) {
  size_t at = file.find(llvm::StringRef(KILN_BUNDLE_MAGIC, 8));
  if (at == llvm::StringRef::npos)
    return damaged("no Kiln bundle in this file (is it a module built by `kiln build --module`?)");
  BundleView view;
  view.fileOffset = at;
  llvm::StringRef bundle = file.drop_front(at);
  if (bundle.size() < sizeof(KilnBundleHeader))
    return damaged("the bundle header is truncated");
  std::memcpy(&view.header, bundle.data(), sizeof(KilnBundleHeader));
  const KilnBundleHeader &header = view.header;
  if (header.formatVersion != KILN_MODULE_FORMAT_VERSION)
    return damaged(llvm::formatv("the bundle has format version {0}; this Kiln reads version {1}",
                                 header.formatVersion, KILN_MODULE_FORMAT_VERSION));
  if (header.headerSize != sizeof(KilnBundleHeader))
    return damaged(llvm::formatv("the bundle header is damaged: header size {0}, expected {1}",
                                 header.headerSize, sizeof(KilnBundleHeader)));
  if (header.manifestOffset < header.headerSize || header.manifestOffset > bundle.size() ||
      header.manifestSize > bundle.size() - header.manifestOffset)
    return damaged(llvm::formatv("the manifest (offset {0}, {1} bytes) lies outside the file's "
                                 "{2} bundle bytes: the file is truncated or damaged",
                                 header.manifestOffset, header.manifestSize, bundle.size()));
  if (header.payloadOffset % 16 != 0 ||
      header.payloadOffset < header.manifestOffset + header.manifestSize ||
      header.payloadOffset > bundle.size() ||
      header.payloadSize > bundle.size() - header.payloadOffset)
    return damaged(llvm::formatv("the payload (offset {0}, {1} bytes) lies outside the file's "
                                 "{2} bundle bytes: the file is truncated or damaged",
                                 header.payloadOffset, header.payloadSize, bundle.size()));
  view.manifest = bundle.substr(header.manifestOffset, header.manifestSize);
  view.payload = bundle.substr(header.payloadOffset, header.payloadSize);
  uint64_t checksum = kilnChecksum(view.manifest.data(), view.manifest.size());
  if (checksum != header.manifestChecksum)
    return damaged("the manifest is damaged: its checksum is " + module::checksumText(checksum) +
                   ", the bundle header says " + module::checksumText(header.manifestChecksum));
  return view;
}

} // namespace kiln::module
