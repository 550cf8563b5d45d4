//===- module/elf_section_reader.cpp - A section of an ELF file -----------===//
//
// Reads only what it needs, in this order, each piece checked before the
// next is trusted: the ELF header (magic, class, byte order, size of a
// section header), the section header table (inside the file), the section
// name table (a section inside the file), the named section (inside the
// file, of the expected size). Offsets and sizes come from the file, so
// every sum is checked for overflow and every range against the file's
// size: a file cut short says where its data should end and where the file
// ends.
//
//===----------------------------------------------------------------------===//

#include "module/elf_section_reader.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>
#include <vector>

namespace kiln::module {

namespace {

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char NativeData = ELFDATA2LSB;
#else
constexpr unsigned char NativeData = ELFDATA2MSB;
#endif
#if __SIZEOF_POINTER__ == 8
constexpr unsigned char NativeClass = ELFCLASS64;
#else
constexpr unsigned char NativeClass = ELFCLASS32;
#endif

using Header = ElfW(Ehdr);
using SectionHeader = ElfW(Shdr);

/// Whether [offset, offset + size) lies in a file of `fileSize` bytes;
/// `end` is where the range ends (saturated on overflow).
bool inFile(uint64_t offset, uint64_t size, uint64_t fileSize, uint64_t &end) {
  end = offset + size < offset ? UINT64_MAX : offset + size;
  return end <= fileSize;
}

/// "the file is truncated: its section headers end at byte N but the file
/// has M bytes".
std::string truncated(const std::string &whatEnds, uint64_t end, uint64_t fileSize) {
  return "the file is truncated: its " + whatEnds + " at byte " + std::to_string(end) +
         " but the file has " + std::to_string(fileSize) + " bytes";
}

} // namespace

bool MemoryByteSource::read(uint64_t offset, void *buffer, uint64_t count,
                            std::string &problem) const {
  if (offset > bytes_.size() || count > bytes_.size() - offset) {
    problem = "its file ended while it was read";
    return false;
  }
  std::memcpy(buffer, bytes_.data() + offset, count);
  return true;
}

bool DescriptorByteSource::read(uint64_t offset, void *buffer, uint64_t count,
                                std::string &problem) const {
  auto *bytes = static_cast<uint8_t *>(buffer);
  while (count) {
    ssize_t done = pread(descriptor_, bytes, count, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR)
      continue;
    if (done <= 0) {
      problem = done < 0 ? std::string("its file cannot be read (") + std::strerror(errno) + ")"
                         : std::string("its file ended while it was read");
      return false;
    }
    bytes += done;
    offset += uint64_t(done);
    count -= uint64_t(done);
  }
  return true;
}

namespace {

/// Reads the section headers of `file` and the names table they point at.
bool readSectionHeaders(const ByteSource &file, std::vector<SectionHeader> &sections,
                        std::string &names, std::string &problem) {
  const uint64_t fileSize = file.size();
  Header header;
  if (fileSize < sizeof header) {
    problem = truncated("ELF header ends", sizeof header, fileSize);
    return false;
  }
  if (!file.read(0, &header, sizeof header, problem))
    return false;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != NativeClass || header.e_ident[EI_DATA] != NativeData) {
    problem = "its file is not an ELF file of this machine";
    return false;
  }
  if (header.e_shoff == 0) {
    problem = "its file has no section headers (was it stripped of them?)";
    return false;
  }
  if (header.e_shentsize != sizeof(SectionHeader)) {
    problem = "its ELF header is damaged (section header size " +
              std::to_string(header.e_shentsize) + ")";
    return false;
  }

  // Section 0 holds the real count and name table index when they do not
  // fit the ELF header (count 0, index SHN_XINDEX).
  uint64_t end;
  uint64_t count = header.e_shnum;
  uint64_t namesIndex = header.e_shstrndx;
  if (count == 0 || namesIndex == SHN_XINDEX) {
    SectionHeader first;
    if (!inFile(header.e_shoff, sizeof first, fileSize, end)) {
      problem = truncated("section headers end", end, fileSize);
      return false;
    }
    if (!file.read(header.e_shoff, &first, sizeof first, problem))
      return false;
    count = count ? count : uint64_t(first.sh_size);
    namesIndex = namesIndex == SHN_XINDEX ? first.sh_link : namesIndex;
  }
  if (count == 0 || count > UINT64_MAX / sizeof(SectionHeader)) {
    problem = "its section headers are damaged (" + std::to_string(count) + " sections)";
    return false;
  }
  if (!inFile(header.e_shoff, count * sizeof(SectionHeader), fileSize, end)) {
    problem = truncated("section headers end", end, fileSize);
    return false;
  }
  sections.resize(count);
  if (!file.read(header.e_shoff, sections.data(), count * sizeof(SectionHeader), problem))
    return false;

  if (namesIndex >= count || sections[namesIndex].sh_type != SHT_STRTAB) {
    problem = "its section headers are damaged (no section name table)";
    return false;
  }
  const SectionHeader &namesSection = sections[namesIndex];
  if (!inFile(namesSection.sh_offset, namesSection.sh_size, fileSize, end)) {
    problem = truncated("section names end", end, fileSize);
    return false;
  }
  names.assign(namesSection.sh_size, '\0');
  if (!file.read(namesSection.sh_offset, names.data(), names.size(), problem))
    return false;
  return true;
}

} // namespace

namespace {

/// The section header named `name`, or null.
const SectionHeader *sectionNamed(const std::vector<SectionHeader> &sections,
                                  const std::string &names, const char *name) {
  const size_t nameSize = std::strlen(name);
  for (const SectionHeader &candidate : sections)
    if (candidate.sh_name < names.size() &&
        names.compare(candidate.sh_name, nameSize + 1, name, nameSize + 1) == 0)
      return &candidate;
  return nullptr;
}

} // namespace

bool hasElfSection(const ByteSource &file, const char *name) {
  std::vector<SectionHeader> sections;
  std::string names, problem;
  return readSectionHeaders(file, sections, names, problem) &&
         sectionNamed(sections, names, name) != nullptr;
}

bool locateElfSection(const ByteSource &file, const char *name, const char *contents,
                      uint64_t expectedSize, SectionLocation &section, std::string &problem) {
  std::vector<SectionHeader> sections;
  std::string names;
  if (!readSectionHeaders(file, sections, names, problem))
    return false;
  const uint64_t fileSize = file.size();
  uint64_t end;
  const SectionHeader *found = sectionNamed(sections, names, name);
  if (!found) {
    problem = std::string("its file has no section ") + name;
    return false;
  }
  if (found->sh_type != SHT_PROGBITS) {
    problem = std::string("its section ") + name + " is damaged (type " +
              std::to_string(found->sh_type) + ")";
    return false;
  }
  if (!inFile(found->sh_offset, found->sh_size, fileSize, end)) {
    problem = truncated(std::string(contents) + " ends", end, fileSize);
    return false;
  }
  if (found->sh_size != expectedSize) {
    problem = "its " + std::string(contents) + " has " + std::to_string(found->sh_size) +
              " bytes but its code expects " + std::to_string(expectedSize);
    return false;
  }
  if (expectedSize == 0) {
    problem = "its " + std::string(contents) + " is empty";
    return false;
  }

  section.fileOffset = found->sh_offset;
  section.size = found->sh_size;
  return true;
}

bool findExportedSymbol(const ByteSource &file, std::string_view prefix, std::string &symbol,
                        std::string &problem) {
  std::vector<SectionHeader> sections;
  std::string names;
  if (!readSectionHeaders(file, sections, names, problem))
    return false;
  const uint64_t fileSize = file.size();
  uint64_t end;
  for (const SectionHeader &table : sections) {
    if (table.sh_type != SHT_DYNSYM || table.sh_link >= sections.size() ||
        table.sh_entsize != sizeof(ElfW(Sym)))
      continue;
    const SectionHeader &stringsSection = sections[table.sh_link];
    if (!inFile(table.sh_offset, table.sh_size, fileSize, end) ||
        !inFile(stringsSection.sh_offset, stringsSection.sh_size, fileSize, end)) {
      problem = truncated("dynamic symbols end", end, fileSize);
      return false;
    }
    std::vector<ElfW(Sym)> symbols(table.sh_size / sizeof(ElfW(Sym)));
    std::string strings(stringsSection.sh_size, '\0');
    if (!file.read(table.sh_offset, symbols.data(), symbols.size() * sizeof(ElfW(Sym)), problem) ||
        !file.read(stringsSection.sh_offset, strings.data(), strings.size(), problem))
      return false;
    for (const ElfW(Sym) & candidate : symbols) {
      if (candidate.st_shndx == SHN_UNDEF || candidate.st_name >= strings.size())
        continue;
      std::string_view name(
          strings.data() + candidate.st_name,
          strnlen(strings.data() + candidate.st_name, strings.size() - candidate.st_name));
      if (name.substr(0, prefix.size()) == prefix) {
        symbol = name;
        return true;
      }
    }
  }
  problem = "its file exports no " + std::string(prefix) + "... symbol";
  return false;
}

} // namespace kiln::module
