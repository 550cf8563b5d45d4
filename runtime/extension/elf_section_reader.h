//===- runtime/extension/elf_section_reader.h - A section of a file -*- C++ -*-===//
//
// A built module's bundle lies in a section of its file that the dynamic
// loader does not map (module/format.h), so the runtime reads it
// from the file: the ELF header, the section headers and their names, each
// read with pread() and checked against the file's size before use, so that
// a truncated or garbled file gives a message saying what is wrong, never a
// crash. The section found is mapped read-only, for the life of the process
// (fat binaries are loaded lazily from it).
//
// Plain C++ and POSIX: no Python, no LLVM, no exceptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace kiln::runtime {

struct MappedSection {
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  /// Where the section starts in the file.
  uint64_t fileOffset = 0;
};

/// Finds the section `name` in the ELF file `path` (of this process's class
/// and byte order), checks that it lies in the file and holds `expectedSize`
/// (> 0) bytes, and maps it read-only; the mapping is never unmapped. On
/// failure returns false and sets `problem` to what is wrong, as a phrase
/// that completes "module 'x' is damaged: ...", naming the section by
/// `contents`: "the file is truncated: its kernel data ends at byte 40960
/// but the file has 12288 bytes".
bool mapElfSection(const char *path, const char *name, const char *contents, uint64_t expectedSize,
                   MappedSection &section, std::string &problem);

} // namespace kiln::runtime
