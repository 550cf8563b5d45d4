//===- backend/cuda_tools/fatbin_reader.cpp - Reading fat binaries -------------------===//

#include "backend/cuda_tools/fatbin_reader.h"

#include <llvm/Support/Endian.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace kiln::cuda_tools {

namespace {

constexpr uint32_t kMagic = 0xBA55ED50;
constexpr uint64_t kContainerHeaderSize = 16;
constexpr uint64_t kEntryHeaderSize = 64;

constexpr uint64_t kFlag64Bit = 0x1;
constexpr uint64_t kFlagDebug = 0x2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;

constexpr uint16_t kKindPtx = 1;
constexpr uint16_t kKindElf = 2;
constexpr uint16_t kKindLtoIr = 8;

uint16_t read16(llvm::StringRef bytes, uint64_t at) {
  return llvm::support::endian::read16le(bytes.data() + at);
}
uint32_t read32(llvm::StringRef bytes, uint64_t at) {
  return llvm::support::endian::read32le(bytes.data() + at);
}
uint64_t read64(llvm::StringRef bytes, uint64_t at) {
  return llvm::support::endian::read64le(bytes.data() + at);
}

std::string hex(uint64_t value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format_hex(value, 2);
  return text;
}

llvm::Error corrupt(uint64_t offset, const llvm::Twine &problem) {
  return llvm::createStringError(
      ("invalid fat binary at offset " + hex(offset) + ": " + problem).str());
}

/// `size` bytes at `offset` lie within [0, limit).
bool fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

/// The extent of an ELF64 file inside `payload`: the end of its last header
/// table or section. An error when the ELF points past the payload.
llvm::Expected<uint64_t> elfExtent(llvm::StringRef payload, uint64_t entryOffset) {
  constexpr uint64_t kElfHeaderSize = 64;
  if (payload.size() < kElfHeaderSize || !payload.starts_with("\x7f"
                                                              "ELF"))
    return corrupt(entryOffset, "the cubin image is not an ELF file");
  if (payload[4] != 2 || payload[5] != 1)
    return corrupt(entryOffset, "the cubin image is not a 64-bit little-endian ELF file");
  uint64_t programHeaders = read64(payload, 32), sectionHeaders = read64(payload, 40);
  uint16_t programEntrySize = read16(payload, 54), programCount = read16(payload, 56);
  uint16_t sectionEntrySize = read16(payload, 58), sectionCount = read16(payload, 60);
  uint64_t size = payload.size();
  uint64_t extent = kElfHeaderSize;

  uint64_t programTable = uint64_t(programEntrySize) * programCount;
  if (programCount != 0) {
    if (!fits(programHeaders, programTable, size))
      return corrupt(entryOffset, "the cubin's program headers lie past its image");
    extent = std::max(extent, programHeaders + programTable);
  }
  uint64_t sectionTable = uint64_t(sectionEntrySize) * sectionCount;
  if (sectionCount != 0) {
    if (sectionEntrySize < 64 || !fits(sectionHeaders, sectionTable, size))
      return corrupt(entryOffset, "the cubin's section headers lie past its image");
    extent = std::max(extent, sectionHeaders + sectionTable);
    constexpr uint32_t kNoBits = 8;
    for (uint64_t i = 0; i < sectionCount; ++i) {
      uint64_t header = sectionHeaders + i * sectionEntrySize;
      uint32_t type = read32(payload, header + 4);
      uint64_t offset = read64(payload, header + 24), sectionSize = read64(payload, header + 32);
      if (type == kNoBits || sectionSize == 0)
        continue;
      if (!fits(offset, sectionSize, size))
        return corrupt(entryOffset, "a section of the cubin lies past its image");
      extent = std::max(extent, offset + sectionSize);
    }
  }
  return extent;
}

/// Reads a (offset, size) string inside the entry header.
llvm::Expected<std::string> headerString(llvm::StringRef header, uint64_t offset, uint64_t size,
                                         uint64_t entryOffset, llvm::StringRef what) {
  if (!fits(offset, size, header.size()))
    return corrupt(entryOffset, "the " + what + " lies outside the entry header");
  llvm::StringRef text = header.substr(offset, size);
  return text.take_until([](char c) { return c == '\0'; }).str();
}

llvm::Expected<FatbinEntry> readEntry(llvm::StringRef bytes, uint64_t offset, uint64_t end) {
  if (!fits(offset, kEntryHeaderSize, end))
    return corrupt(offset, "an image header needs " + llvm::Twine(kEntryHeaderSize) +
                               " bytes, but only " + llvm::Twine(end - offset) + " remain");
  FatbinEntry entry;
  entry.offset = offset;
  entry.rawKind = read16(bytes, offset);
  entry.headerSize = read32(bytes, offset + 4);
  entry.payloadSize = read64(bytes, offset + 8);
  uint32_t compressedSize = read32(bytes, offset + 16);
  uint32_t optionsDescriptor = read32(bytes, offset + 20);
  entry.versionMinor = read16(bytes, offset + 24);
  entry.versionMajor = read16(bytes, offset + 26);
  entry.arch = read32(bytes, offset + 28);
  uint32_t identifierOffset = read32(bytes, offset + 32);
  uint32_t identifierSize = read32(bytes, offset + 36);
  entry.flags = read64(bytes, offset + 40);
  entry.uncompressedSize = read64(bytes, offset + 56);

  switch (entry.rawKind) {
  case kKindPtx:
    entry.kind = FatbinEntryKind::Ptx;
    break;
  case kKindElf:
    entry.kind = FatbinEntryKind::Cubin;
    break;
  case kKindLtoIr:
    entry.kind = FatbinEntryKind::LtoIr;
    break;
  default:
    entry.kind = FatbinEntryKind::Unknown;
  }
  entry.is64Bit = entry.flags & kFlag64Bit;
  entry.debug = entry.flags & kFlagDebug;
  if (entry.flags & kFlagZstd)
    entry.compression = FatbinCompressionMethod::Zstd;
  else if (entry.flags & kFlagLz4)
    entry.compression = FatbinCompressionMethod::Lz4;

  if (entry.headerSize < kEntryHeaderSize)
    return corrupt(offset, "image header size " + llvm::Twine(entry.headerSize) +
                               " is smaller than " + llvm::Twine(kEntryHeaderSize));
  if (!fits(offset, entry.headerSize, end))
    return corrupt(offset, "image header size " + llvm::Twine(entry.headerSize) +
                               " runs past the end of the container");
  uint64_t payloadOffset = offset + entry.headerSize;
  if (!fits(payloadOffset, entry.payloadSize, end))
    return corrupt(offset, "the " + entry.label() + " image of " + llvm::Twine(entry.payloadSize) +
                               " bytes runs past the end of the container (" +
                               llvm::Twine(end - payloadOffset) + " bytes remain)");

  llvm::StringRef header = bytes.substr(offset, entry.headerSize);
  if (optionsDescriptor != 0) {
    if (!fits(optionsDescriptor, 8, entry.headerSize))
      return corrupt(offset, "the options descriptor lies outside the image header");
    llvm::Expected<std::string> options =
        headerString(header, read32(header, optionsDescriptor),
                     read32(header, optionsDescriptor + 4), offset, "options text");
    if (!options)
      return options.takeError();
    entry.ptxasOptions = std::move(*options);
  }
  if (identifierOffset != 0) {
    llvm::Expected<std::string> identifier =
        headerString(header, identifierOffset, identifierSize, offset, "identifier");
    if (!identifier)
      return identifier.takeError();
    entry.identifier = std::move(*identifier);
  }

  llvm::StringRef payload = bytes.substr(payloadOffset, entry.payloadSize);
  if (entry.compressed()) {
    entry.compressedSize = compressedSize;
    if (compressedSize > entry.payloadSize)
      return corrupt(offset, "compressed size " + llvm::Twine(compressedSize) +
                                 " exceeds the payload size " + llvm::Twine(entry.payloadSize));
    return entry;
  }
  switch (entry.kind) {
  case FatbinEntryKind::Cubin: {
    llvm::Expected<uint64_t> extent = elfExtent(payload, offset);
    if (!extent)
      return extent.takeError();
    entry.image = payload.take_front(*extent).str();
    break;
  }
  case FatbinEntryKind::Ptx:
    entry.image = payload.take_until([](char c) { return c == '\0'; }).str();
    break;
  case FatbinEntryKind::LtoIr:
  case FatbinEntryKind::Unknown:
    entry.image = payload.str();
    break;
  }
  return entry;
}

} // namespace

llvm::StringRef fatbinEntryKindName(FatbinEntryKind kind) {
  switch (kind) {
  case FatbinEntryKind::Ptx:
    return "PTX";
  case FatbinEntryKind::Cubin:
    return "cubin";
  case FatbinEntryKind::LtoIr:
    return "LTO-IR";
  case FatbinEntryKind::Unknown:
    return "unknown";
  }
  return "?";
}

llvm::StringRef compressionMethodName(FatbinCompressionMethod method) {
  switch (method) {
  case FatbinCompressionMethod::None:
    return "none";
  case FatbinCompressionMethod::Lz4:
    return "LZ4";
  case FatbinCompressionMethod::Zstd:
    return "zstd";
  }
  return "?";
}

std::string FatbinEntry::label() const {
  std::string number = std::to_string(arch);
  switch (kind) {
  case FatbinEntryKind::Ptx:
    return "compute_" + number + " PTX";
  case FatbinEntryKind::Cubin:
    return "sm_" + number + " cubin";
  case FatbinEntryKind::LtoIr:
    return "sm_" + number + " LTO-IR";
  case FatbinEntryKind::Unknown:
    return "sm_" + number + " kind-" + std::to_string(rawKind);
  }
  return number;
}

llvm::Expected<std::vector<FatbinEntry>> readFatbin(llvm::StringRef bytes) {
  std::vector<FatbinEntry> entries;
  uint64_t offset = 0;
  bool first = true;
  while (offset < bytes.size()) {
    llvm::StringRef rest = bytes.drop_front(offset);
    if (!first && rest.find_first_not_of('\0') == llvm::StringRef::npos)
      break; // padding after the last container
    if (rest.size() < kContainerHeaderSize)
      return corrupt(offset, "truncated: " + llvm::Twine(rest.size()) +
                                 " bytes left, fewer than a fat binary header's " +
                                 llvm::Twine(kContainerHeaderSize));
    uint32_t magic = read32(bytes, offset);
    if (magic != kMagic)
      return corrupt(offset,
                     "not a fat binary (magic " + hex(magic) + ", expected " + hex(kMagic) + ")");
    uint16_t version = read16(bytes, offset + 4);
    uint16_t headerSize = read16(bytes, offset + 6);
    uint64_t entriesSize = read64(bytes, offset + 8);
    if (version != 1)
      return corrupt(offset, "unsupported fat binary version " + llvm::Twine(version));
    if (headerSize < kContainerHeaderSize || headerSize > rest.size())
      return corrupt(offset, "fat binary header size " + llvm::Twine(headerSize) + " is invalid");
    uint64_t entriesOffset = offset + headerSize;
    if (!fits(entriesOffset, entriesSize, bytes.size()))
      return corrupt(offset, "truncated: the header announces " + llvm::Twine(entriesSize) +
                                 " bytes of images, but only " +
                                 llvm::Twine(bytes.size() - entriesOffset) + " follow");
    uint64_t end = entriesOffset + entriesSize;
    uint64_t at = entriesOffset;
    while (at < end) {
      llvm::Expected<FatbinEntry> entry = readEntry(bytes, at, end);
      if (!entry)
        return entry.takeError();
      at += entry->headerSize + entry->payloadSize;
      entries.push_back(std::move(*entry));
    }
    offset = llvm::alignTo(end, 8);
    first = false;
  }
  if (first)
    return corrupt(0, "the input is empty");
  return entries;
}

} // namespace kiln::cuda_tools
