//===- module/elf_section_reader.h - A section of an ELF file ---*- C++ -*-===//
//
// A built module's bundle lies in a section of its file that the dynamic
// loader does not map (module/format.h). The runtime reads it from the
// module's file, and `kiln inspect` and `kiln audit` from the file's bytes,
// the same way: the ELF header, the section headers and their names, each
// read and checked against the file's size before use, so that a truncated
// or garbled file gives a message saying what is wrong, never a crash, and
// a file the runtime refuses is one the driver calls damaged.
//
// Plain C++ and POSIX: no Python, no LLVM, no exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::module {

/// Where a file's bytes come from: a descriptor or bytes in memory.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Reads exactly `count` bytes at `offset` (inside size()); false with
  /// `problem` set when the read fails.
  virtual bool read(uint64_t offset, void *buffer, uint64_t count, std::string &problem) const = 0;
};

/// A file's bytes already in memory.
class MemoryByteSource final : public ByteSource {
public:
  explicit MemoryByteSource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t offset, void *buffer, uint64_t count, std::string &problem) const override;

private:
  std::string_view bytes_;
};

/// An open file, read with pread().
class DescriptorByteSource final : public ByteSource {
public:
  DescriptorByteSource(int descriptor, uint64_t size) : descriptor_(descriptor), size_(size) {}
  uint64_t size() const override { return size_; }
  bool read(uint64_t offset, void *buffer, uint64_t count, std::string &problem) const override;

private:
  int descriptor_;
  uint64_t size_;
};

struct SectionLocation {
  uint64_t fileOffset = 0;
  uint64_t size = 0;
};

/// Whether the ELF file `file` (of this machine's class and byte order) has
/// a section named `name`; false also when its section headers cannot be
/// read.
bool hasElfSection(const ByteSource &file, const char *name);

/// Finds the section `name` of the ELF file `file` (of this machine's class
/// and byte order) and checks that it lies in the file and holds
/// `expectedSize` (> 0) bytes. On failure returns false and sets `problem`
/// to what is wrong, as a phrase that completes "module 'x' is damaged:
/// ...", naming the section by `contents`: "the file is truncated: its
/// kernel data ends at byte 40960 but the file has 12288 bytes".
bool locateElfSection(const ByteSource &file, const char *name, const char *contents,
                      uint64_t expectedSize, SectionLocation &section, std::string &problem);

/// Finds a symbol of the dynamic symbol table of the ELF file `file`,
/// defined in it, whose name starts with `prefix` (the first one). On
/// failure returns false and sets `problem`.
bool findExportedSymbol(const ByteSource &file, std::string_view prefix, std::string &symbol,
                        std::string &problem);

} // namespace kiln::module
