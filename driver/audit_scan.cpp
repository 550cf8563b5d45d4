//===- driver/audit_scan.cpp - Finding the modules of a package -----------===//
//
// How modules are found: every file of a folder, every member of an
// archive libarchive reads (zip for wheels and .conda, tar with any
// compression for .tar.bz2 and the .tar.zst inside a .conda), recursively
// for archives inside archives. A file is a Kiln module when it is an ELF
// file with a .kiln.bundle section (module/format.h); ELF files
// whose section headers cannot be read (a file cut short) count when they
// hold the bundle's magic followed by a plausible header. Other files,
// including other extension modules, are skipped.
//
// Each module is checked as the runtime checks a module before it imports
// it (module/module_check.h): one of another format or CPU ABI version was
// built by an incompatible Kiln, one that fails any other check is damaged,
// in the words of the ImportError an import would raise.
//
//===----------------------------------------------------------------------===//

#include "driver/audit_scan.h"

#include "frontend/source/source_file.h"
#include "module/elf_section_reader.h"
#include "module/format.h"
#include "module/manifest_format.h"
#include "module/module_check.h"
#include "module/module_reader.h"

#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>

#include <archive.h>
#include <archive_entry.h>
#include <cstring>

namespace kiln::driver::audit {

namespace {

/// Members larger than this are not read (a module is a few MB).
constexpr uint64_t MaxMemberBytes = uint64_t(2) << 30;
/// Archives inside archives inside archives...: a .conda is two levels.
constexpr int MaxNesting = 4;

/// Fills `module` from the module file `bytes`, checked as the runtime
/// checks a module before it imports it (module/module_check.h).
void readModuleFile(llvm::StringRef bytes, AuditedModule &module) {
  size_t magicAt = bytes.find(llvm::StringRef(KILN_BUNDLE_MAGIC, 8));
  if (magicAt != llvm::StringRef::npos && bytes.size() - magicAt >= sizeof(KilnBundleHeader)) {
    KilnBundleHeader header;
    std::memcpy(&header, bytes.data() + magicAt, sizeof header);
    module.bundleFormat = header.formatVersion;
  }
  std::string_view checkedBundle;
  module::ModuleCheck check = module::checkModuleFile(bytes, checkedBundle);
  module.module = check.moduleName;
  module.kilnVersion = check.kilnVersion;
  module.manifestFormat = check.manifestFormat;
  if (check.verdict == module::ModuleVerdict::Incompatible) {
    module.status = ModuleStatus::Incompatible;
    module.problem = llvm::formatv(
        "built by an incompatible Kiln{0}: {1}; rebuild it",
        module.kilnVersion.empty() ? "" : " (" + module.kilnVersion + ")", check.problem);
    return;
  }
  if (!check.sound()) {
    module.status = ModuleStatus::Damaged;
    module.problem = check.problem;
    return;
  }
  llvm::Expected<module::InspectedModule> read = module::readCheckedModule(bytes, checkedBundle);
  if (!read) {
    module.status = ModuleStatus::Damaged;
    module.problem = llvm::toString(read.takeError());
    return;
  }
  const module::ManifestModule &manifest = read->manifest.module;
  module.cubins = manifest.cubinArchs;
  module.ptx = manifest.ptxArchs;
  if (!manifest.companionOf.empty()) {
    module.companionOf = manifest.companionOf;
    for (const module::ManifestSource &source : manifest.sources)
      module.sources.emplace_back(source.file, source.sha256);
  } else if (!manifest.sourceFile.empty()) {
    module.sourceFile = manifest.sourceFile;
    module.sourceChecksum = module::checksumText(manifest.sourceChecksum);
  }
  for (const module::KernelGroup &group : read->kernels) {
    AuditedKernel kernel{group.name, group.kind, {}};
    for (size_t index : group.specializations) {
      const module::ManifestSpecialization &spec = read->specialization(index);
      kernel.specializations.push_back({module::describeSpecialization(spec), spec.argumentTypes,
                                        spec.cubinArchs, spec.ptxArchs});
    }
    module.kernels.push_back(std::move(kernel));
  }
}

/// Whether the bytes at `at` look like a bundle header (of any version):
/// the magic, a small version and a sane header size.
bool plausibleBundle(llvm::StringRef bytes, size_t at) {
  if (bytes.size() - at < 16)
    return false;
  uint32_t version, headerSize;
  std::memcpy(&version, bytes.data() + at + 8, 4);
  std::memcpy(&headerSize, bytes.data() + at + 12, 4);
  return version >= 1 && version < 1000 && headerSize >= 16 && headerSize <= 4096;
}

/// Returns the module `bytes` holds, or nothing when they are not a Kiln
/// module.
std::optional<AuditedModule> auditFile(const std::string &location, llvm::StringRef bytes) {
  if (!bytes.starts_with("\x7f"
                         "ELF"))
    return std::nullopt;
  AuditedModule module;
  module.location = location;
  llvm::StringRef magic(KILN_BUNDLE_MAGIC, 8);
  size_t magicAt = bytes.find(magic);
  while (magicAt != llvm::StringRef::npos && !plausibleBundle(bytes, magicAt))
    magicAt = bytes.find(magic, magicAt + 1);
  if (magicAt == llvm::StringRef::npos &&
      !module::hasElfSection(module::MemoryByteSource({bytes.data(), bytes.size()}),
                             KILN_BUNDLE_SECTION))
    return std::nullopt;
  readModuleFile(bytes, module);
  return module;
}

/// "wheel", "conda package", ... for the top line.
std::string kindOf(llvm::StringRef path) {
  if (path.ends_with(".whl"))
    return "wheel";
  if (path.ends_with(".conda") || path.ends_with(".tar.bz2"))
    return "conda package";
  return "archive";
}

bool looksLikeArchive(llvm::StringRef name) {
  for (llvm::StringRef suffix : {".whl", ".conda", ".zip", ".tar", ".tar.bz2", ".tbz2", ".tar.gz",
                                 ".tgz", ".tar.zst", ".tzst", ".tar.xz", ".txz", ".egg"})
    if (name.ends_with(suffix))
      return true;
  return false;
}

class Auditor {
public:
  explicit Auditor(AuditReport &report) : report(report) {}

  /// Visits one file (or archive member) with these bytes.
  void visit(const std::string &location, llvm::StringRef bytes, int depth) {
    if (llvm::StringRef(location).ends_with(".py")) {
      report.pythonSources[location] =
          llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)), /*LowerCase=*/true);
      report.pythonChecksums[location] =
          module::checksumText(kilnChecksum(bytes.data(), bytes.size()));
      return;
    }
    if (std::optional<AuditedModule> module = auditFile(location, bytes)) {
      report.modules.push_back(std::move(*module));
      return;
    }
    if (depth < MaxNesting && looksLikeArchive(location)) {
      archive *reader = newReader();
      auto release = llvm::make_scope_exit([&] { archive_read_free(reader); });
      if (archive_read_open_memory(reader, bytes.data(), bytes.size()) != ARCHIVE_OK)
        return damagedArchive(location, reader);
      walk(reader, location, depth + 1);
    }
  }

  /// Visits every member of an opened archive.
  void walk(archive *reader, const std::string &location, int depth) {
    while (true) {
      archive_entry *entry = nullptr;
      int status = archive_read_next_header(reader, &entry);
      if (status == ARCHIVE_EOF)
        return;
      if (status < ARCHIVE_WARN || !entry)
        return damagedArchive(location.empty() ? report.path : location, reader);
      if (archive_entry_filetype(entry) != AE_IFREG)
        continue;
      const char *rawName = archive_entry_pathname(entry);
      std::string name = rawName ? rawName : "?";
      std::string member = location.empty() ? name : location + "!" + name;
      if (archive_entry_size_is_set(entry) &&
          uint64_t(archive_entry_size(entry)) > MaxMemberBytes) {
        report.problems.push_back("'" + member + "' is larger than " +
                                  std::to_string(MaxMemberBytes) + " bytes; not audited");
        continue;
      }
      // Read the start; the rest only for ELF files and archives.
      std::string bytes;
      char buffer[64 * 1024];
      bool wanted = true, failed = false;
      while (true) {
        la_ssize_t got = archive_read_data(reader, buffer, sizeof buffer);
        if (got < 0) {
          failed = true;
          break;
        }
        if (got == 0)
          break;
        bytes.append(buffer, size_t(got));
        if (bytes.size() >= 4 &&
            !llvm::StringRef(bytes).starts_with("\x7f"
                                                "ELF") &&
            !looksLikeArchive(name) && !llvm::StringRef(name).ends_with(".py")) {
          wanted = false;
          break;
        }
        if (bytes.size() > MaxMemberBytes) {
          report.problems.push_back("'" + member + "' expands to more than " +
                                    std::to_string(MaxMemberBytes) + " bytes; not audited");
          wanted = false;
          break;
        }
      }
      if (failed)
        return damagedArchive(location.empty() ? report.path : location, reader, name);
      if (wanted)
        visit(member, bytes, depth);
      else if (archive_read_data_skip(reader) < ARCHIVE_WARN)
        return damagedArchive(location.empty() ? report.path : location, reader, name);
    }
  }

  static archive *newReader() {
    archive *reader = archive_read_new();
    archive_read_support_filter_all(reader);
    archive_read_support_format_zip(reader);
    archive_read_support_format_tar(reader);
    archive_read_support_format_gnutar(reader);
    return reader;
  }

  /// An archive (or a member of `archive`, when `member` is given) that
  /// libarchive cannot read.
  void damagedArchive(llvm::StringRef archive, struct archive *reader,
                      llvm::StringRef member = "") {
    const char *message = archive_error_string(reader);
    std::string why = message ? message : "unknown error";
    if (!member.empty())
      report.problems.push_back("'" + archive.str() + "' is damaged: its member '" + member.str() +
                                "' cannot be read (" + why + ")");
    else
      report.problems.push_back("'" + archive.str() +
                                "' is damaged or not an archive Kiln reads (" + why + ")");
  }

private:
  AuditReport &report;
};

} // namespace

/// The path's contents: a folder, a module or an archive.
void auditPath(const std::string &path, AuditReport &report) {
  Auditor auditor(report);
  auto readAndVisit = [&](const std::string &file, const std::string &location) {
    llvm::ErrorOr<std::string> bytes = readSourceFile(file);
    if (!bytes) {
      report.problems.push_back("cannot read '" + file +
                                "': " + readErrorMessage(bytes.getError()));
      return;
    }
    auditor.visit(location, *bytes, 0);
  };
  if (llvm::sys::fs::is_directory(path)) {
    report.kind = "folder";
    std::vector<std::string> files;
    std::error_code error;
    for (llvm::sys::fs::recursive_directory_iterator it(path, error), end; it != end && !error;
         it.increment(error)) {
      llvm::ErrorOr<llvm::sys::fs::basic_file_status> status = it->status();
      if (status && status->type() == llvm::sys::fs::file_type::regular_file)
        files.push_back(it->path());
    }
    if (error)
      report.problems.push_back("cannot list '" + path + "': " + error.message());
    llvm::sort(files); // a stable order
    for (const std::string &file : files) {
      llvm::StringRef relative(file);
      relative.consume_front(path);
      relative = relative.ltrim('/');
      readAndVisit(file, relative.str());
    }
    return;
  }
  llvm::ErrorOr<std::string> contents = readSourceFile(path);
  if (!contents) {
    report.problems.push_back("cannot read '" + path +
                              "': " + readErrorMessage(contents.getError()));
    return;
  }
  llvm::StringRef bytes = *contents;
  if (bytes.starts_with("\x7f"
                        "ELF")) {
    report.kind = "file";
    if (std::optional<AuditedModule> module =
            auditFile(llvm::sys::path::filename(path).str(), bytes))
      report.modules.push_back(std::move(*module));
    return;
  }
  report.kind = kindOf(path);
  archive *reader = Auditor::newReader();
  auto release = llvm::make_scope_exit([&] { archive_read_free(reader); });
  if (archive_read_open_memory(reader, bytes.data(), bytes.size()) != ARCHIVE_OK) {
    // Compressed data cut short is damaged; bytes no reader recognizes are
    // something else.
    const char *message = archive_error_string(reader);
    if (!bytes.empty() && message &&
        !llvm::StringRef(message).starts_with("Unrecognized archive format"))
      return auditor.damagedArchive(path, reader);
    report.problems.push_back("'" + path +
                              "' is neither a Kiln module, a folder, nor an archive Kiln reads "
                              "(wheel, .conda, .tar.bz2, zip, tar): " +
                              (message ? message : "unknown format"));
    return;
  }
  // Member locations are relative to the archive; nested ones name the
  // archive member they are in: "pkg-x.tar.zst!lib/python3.11/.../kernels.so".
  auditor.walk(reader, "", 1);
}

} // namespace kiln::driver::audit
