//===- backend/cuda_tools/fatbin_reader.h - Reading fat binaries -----------*- C++ -*-===//
//
// Lists the images in a fat binary, for the tests and `kiln inspect`. NVIDIA
// does not document the format; this is what the files CUDA 13's fatbinary
// writes show (and what public readers such as cuda-fatbin-decompression
// agree with). All integers are little-endian.
//
// A fat binary is one or more containers, each 8-byte aligned:
//
//   offset size  container header (16 bytes)
//        0    4  magic 0xBA55ED50
//        4    2  version, 1
//        6    2  header size, 16
//        8    8  size of the entries that follow the header
//
// and then the entries, back to back, each a header and a payload:
//
//   offset size  entry header (64 bytes or more)
//        0    2  kind: 1 PTX, 2 ELF (cubin), 8 LTO-IR
//        2    2  entry format, 0x0101
//        4    4  header size (64, or more with options or an identifier);
//                the payload starts this many bytes after the entry
//        8    8  payload size (padded to 8 bytes)
//       16    4  compressed size (0 if the payload is not compressed)
//       20    4  where in the header the options descriptor is (0: none):
//                a 4-byte offset and a 4-byte size, within the header, of
//                the ptxas options text (fatbinary --cmdline)
//       24    2  minor and
//       26    2  major version: the PTX ISA for PTX (7.8), the ELF code
//                version for cubins (1.8)
//       28    4  architecture: 90 for sm_90 or compute_90
//       32    4  offset and
//       36    4  size, within the header, of the identifier (fatbinary --ident)
//       40    8  flags: 0x1 64-bit, 0x2 debug, 0x4 CUDA, 0x10 Linux host,
//                0x2000 LZ4-compressed, 0x8000 zstd-compressed
//       48    8  (0, or a hash for LTO-IR)
//       56    8  uncompressed size (0 if not compressed)
//
// An uncompressed PTX payload is the text, NUL-terminated and padded; a
// cubin payload is the ELF file. Compressed payloads are not decompressed.
//
// Every offset and size is checked against the input: a truncated or
// corrupted file gives an error, never a read out of bounds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cuda_tools {

enum class FatbinEntryKind { Ptx, Cubin, LtoIr, Unknown };

/// "PTX", "cubin", "LTO-IR", "unknown".
llvm::StringRef fatbinEntryKindName(FatbinEntryKind kind);

enum class FatbinCompressionMethod { None, Lz4, Zstd };

/// "none", "LZ4", "zstd".
llvm::StringRef compressionMethodName(FatbinCompressionMethod method);

struct FatbinEntry {
  FatbinEntryKind kind = FatbinEntryKind::Unknown;
  /// The kind field as stored (meaningful for Unknown).
  unsigned rawKind = 0;
  unsigned arch = 0;
  unsigned versionMajor = 0;
  unsigned versionMinor = 0;
  uint64_t flags = 0;
  bool is64Bit = false;
  bool debug = false;
  FatbinCompressionMethod compression = FatbinCompressionMethod::None;
  /// Where the entry header starts in the input.
  uint64_t offset = 0;
  uint64_t headerSize = 0;
  /// The stored payload, padding included.
  uint64_t payloadSize = 0;
  /// For compressed entries.
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  /// ptxas options recorded with the image (fatbinary --cmdline), if any.
  std::string ptxasOptions;
  /// fatbinary --ident, if any.
  std::string identifier;
  /// The image, for uncompressed entries: a cubin's ELF bytes (without
  /// padding), PTX text (without the NUL), other kinds' whole payload.
  /// Empty for compressed entries.
  std::string image;

  bool compressed() const { return compression != FatbinCompressionMethod::None; }
  /// "sm_90 cubin", "compute_90 PTX", "sm_90 LTO-IR".
  std::string label() const;
};

/// Parses a fat binary (one or more containers; zero bytes may pad the
/// end). An error says what is wrong and at which offset.
llvm::Expected<std::vector<FatbinEntry>> readFatbin(llvm::StringRef bytes);

} // namespace kiln::cuda_tools
