//===- driver/audit_command.cpp - `kiln audit` ----------------------------===//
//
//   $ kiln audit dist/demo-0.1.0-cp311-cp311-linux_x86_64.whl --require-arch "75;80"
//   wheel dist/demo-0.1.0-cp311-cp311-linux_x86_64.whl: 1 Kiln module
//   demo/kernels.cpython-311-x86_64-linux-gnu.so
//     module   demo.kernels, built by Kiln 0.1.0 (bundle format 2, manifest format 2)
//     archs    cubins sm_75 sm_80; PTX compute_80
//     kernel saxpy
//       (float32, array(float32, 1d, C), array(float32, 1d, C))
//         cubins sm_75 sm_80; PTX compute_80
//   every specialization has the required architectures: sm_75 sm_80 cubins, compute_80 PTX
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

#include "driver/audit_command.h"

#include "backend/cuda_tools/arch_list.h"
#include "backend/cuda_tools/cuda_archs.h"
#include "backend/manifest.h"
#include "frontend/resolve/build_config.h"
#include "frontend/source/source_file.h"
#include "module/elf_section_reader.h"
#include "module/format.h"
#include "module/manifest_format.h"
#include "module/module_check.h"
#include "module/module_reader.h"
#include "pipeline/signature_file.h"
#include "support/nearest_file.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/ScopeExit.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <archive.h>
#include <archive_entry.h>
#include <cstring>
#include <map>
#include <set>

namespace kiln::driver {

namespace {

/// Members larger than this are not read (a module is a few MB).
constexpr uint64_t MaxMemberBytes = uint64_t(2) << 30;
/// Archives inside archives inside archives...: a .conda is two levels.
constexpr int MaxNesting = 4;

enum class ModuleStatus { Ok, Damaged, Incompatible };

struct AuditedSpecialization {
  std::string description; // "saxpy (float32, array(float32, 1d, C))"
  std::vector<std::string> args;
  std::set<unsigned> cubins;
  std::set<unsigned> ptx;
};

struct AuditedKernel {
  std::string name;
  std::string kind;
  std::vector<AuditedSpecialization> specializations;
};

/// A requirement one module fails: an architecture, and the
/// specializations without it.
struct Missing {
  std::string arch; // "sm_90" or "compute_90"
  bool ptx = false;
  std::vector<std::string> specializations;
  size_t outOf = 0;
};

struct AuditedModule {
  /// Where: "pkg/kernels.so", or "outer.conda!pkg-x.tar.zst!lib/kernels.so".
  std::string location;
  ModuleStatus status = ModuleStatus::Ok;
  std::string problem;
  std::string module;
  std::string kilnVersion;
  std::optional<uint32_t> bundleFormat;
  std::optional<int64_t> manifestFormat;
  std::set<unsigned> cubins;
  std::set<unsigned> ptx;
  std::vector<AuditedKernel> kernels;
  std::vector<Missing> missing;
  /// A companion of a module that stays Python: that module's name, the
  /// source files it was built from (path from its folder, SHA-256), and
  /// those of them the package holds changed or not at all.
  std::string companionOf;
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::string> staleSources;
  /// Any other module: the file it was built from (its name) and that
  /// file's kilnChecksum, as its manifest records them; a package that
  /// holds the file beside the module with other contents ships kernels
  /// that are not the ones its source shows.
  std::string sourceFile;
  std::string sourceChecksum;
};

/// A recorded signature the package has no precompiled specialization of.
struct NotPrecompiled {
  std::string kernel; // module-qualified
  std::string signature;
  std::string module; // the companion's location, or the source's without one
};

struct AuditReport {
  std::string path;
  std::string kind;
  std::vector<AuditedModule> modules;
  /// Damaged archives and unreadable files.
  std::vector<std::string> problems;
  /// Every Python source file, by location, with its SHA-256, and with its
  /// kilnChecksum (16 hex digits).
  std::map<std::string, std::string> pythonSources;
  std::map<std::string, std::string> pythonChecksums;
  /// The signatures file checked against the companions, if any.
  std::string signatureFile;
  std::vector<NotPrecompiled> notPrecompiled;
};

std::set<unsigned> archNumbers(const llvm::json::Array *archs) {
  std::set<unsigned> numbers;
  if (archs)
    for (const llvm::json::Value &value : *archs)
      if (std::optional<int64_t> number = value.getAsInteger(); number && *number > 0)
        numbers.insert(unsigned(*number));
  return numbers;
}

std::string archText(const std::set<unsigned> &archs, bool ptx) {
  std::string text;
  for (unsigned arch : archs)
    text +=
        (text.empty() ? "" : " ") + std::string(ptx ? "compute_" : "sm_") + std::to_string(arch);
  return text.empty() ? "none" : text;
}

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
  bundle::ModuleCheck check = bundle::checkModuleFile(bytes, checkedBundle);
  module.module = check.moduleName;
  module.kilnVersion = check.kilnVersion;
  module.manifestFormat = check.manifestFormat;
  if (check.verdict == bundle::ModuleVerdict::Incompatible) {
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
  llvm::Expected<bundle::InspectedModule> read = bundle::readCheckedModule(bytes, checkedBundle);
  if (!read) {
    module.status = ModuleStatus::Damaged;
    module.problem = llvm::toString(read.takeError());
    return;
  }
  const llvm::json::Object &root = *read->manifest.getAsObject();
  if (const llvm::json::Object *archs = root.getObject("archs")) {
    module.cubins = archNumbers(archs->getArray("cubins"));
    module.ptx = archNumbers(archs->getArray("ptx"));
  }
  if (std::optional<llvm::StringRef> companionOf = root.getString("companion_of")) {
    module.companionOf = companionOf->str();
    if (const llvm::json::Array *sources = root.getArray("sources"))
      for (const llvm::json::Value &value : *sources)
        if (const llvm::json::Object *source = value.getAsObject())
          module.sources.emplace_back(source->getString("file").value_or("").str(),
                                      source->getString("sha256").value_or("").str());
  } else if (const llvm::json::Object *source = root.getObject("source")) {
    module.sourceFile = source->getString("file").value_or("").str();
    module.sourceChecksum = source->getString("checksum").value_or("").str();
  }
  for (const bundle::KernelGroup &group : read->kernels) {
    AuditedKernel kernel{group.name, group.kind, {}};
    for (const llvm::json::Object *spec : group.specializations) {
      AuditedSpecialization audited;
      audited.description = bundle::describeSpecialization(*spec);
      if (const llvm::json::Array *args = spec->getArray("args"))
        for (const llvm::json::Value &arg : *args)
          audited.args.push_back(arg.getAsString().value_or("?").str());
      audited.cubins = archNumbers(spec->getArray("cubins"));
      audited.ptx = archNumbers(spec->getArray("ptx"));
      kernel.specializations.push_back(std::move(audited));
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
      !bundle::hasElfSection(bundle::MemoryByteSource({bytes.data(), bytes.size()}),
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
          bundle::checksumText(kilnChecksum(bytes.data(), bytes.size()));
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

void checkRequired(AuditedModule &module, const cuda::ArchSet &required) {
  if (module.status != ModuleStatus::Ok)
    return;
  size_t total = 0;
  for (const AuditedKernel &kernel : module.kernels)
    total += kernel.specializations.size();
  auto check = [&](unsigned arch, bool ptx) {
    Missing missing{(ptx ? "compute_" : "sm_") + std::to_string(arch), ptx, {}, total};
    for (const AuditedKernel &kernel : module.kernels)
      for (const AuditedSpecialization &spec : kernel.specializations)
        if (!(ptx ? spec.ptx : spec.cubins).count(arch))
          missing.specializations.push_back(spec.description);
    if (!missing.specializations.empty())
      module.missing.push_back(std::move(missing));
  };
  for (unsigned arch : required.cubins)
    check(arch, false);
  for (unsigned arch : required.ptx)
    check(arch, true);
}

std::string missingText(const AuditedModule &module, const Missing &missing) {
  std::string text = "module '" + (module.module.empty() ? module.location : module.module) +
                     "' (" + module.location + ") has no " + missing.arch +
                     (missing.ptx ? " PTX" : " cubin");
  if (missing.specializations.size() == missing.outOf)
    return text + " (in any of its " + std::to_string(missing.outOf) + " specializations)";
  text += " for " + std::to_string(missing.specializations.size()) + " of its " +
          std::to_string(missing.outOf) + " specializations:";
  for (const std::string &spec : missing.specializations)
    text += "\n  " + spec;
  return text;
}

/// `location` with `relative` (a path from its folder, '/'-separated,
/// maybe with "..") applied: "w.whl!pkg/sub/_k.so", "../helpers.py" ->
/// "w.whl!pkg/helpers.py".
std::string siblingLocation(llvm::StringRef location, llvm::StringRef relative) {
  size_t bang = location.rfind('!');
  llvm::StringRef archive = bang == llvm::StringRef::npos ? "" : location.take_front(bang + 1);
  llvm::StringRef inside = location.drop_front(archive.size());
  llvm::SmallVector<llvm::StringRef, 8> parts;
  inside.split(parts, '/');
  parts.pop_back(); // the companion's own name
  llvm::SmallVector<llvm::StringRef, 4> steps;
  relative.split(steps, '/');
  for (llvm::StringRef step : steps) {
    if (step == "..") {
      if (!parts.empty())
        parts.pop_back();
    } else if (step != "." && !step.empty()) {
      parts.push_back(step);
    }
  }
  return archive.str() + llvm::join(parts, "/");
}

/// A manifest type as recording runs spell it in signatures:
/// "array(float32, 1d, C)" -> "float32[::1]", "bool" -> "boolean",
/// "UniTuple(int64 x 2)" -> "UniTuple(int64, 2)".
std::string recordedSpelling(llvm::StringRef type) {
  if (type == "bool")
    return "boolean";
  if (type.consume_front("array(") && type.consume_back(")")) {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    type.split(parts, ", ");
    unsigned dims = 0;
    if (parts.size() != 3 || parts[1].drop_back().getAsInteger(10, dims) || dims == 0)
      return type.str();
    std::vector<std::string> axes(dims, ":");
    if (parts[2] == "C")
      axes.back() = "::1";
    else if (parts[2] == "F")
      axes.front() = "::1";
    return recordedSpelling(parts[0]) + "[" + llvm::join(axes, ", ") + "]";
  }
  if (type.consume_front("UniTuple(") && type.consume_back(")")) {
    auto [element, count] = type.rsplit(" x ");
    return "UniTuple(" + recordedSpelling(element) + ", " + count.str() + ")";
  }
  return type.str();
}

/// Checks each companion's sources against the package's, the source of
/// every other module against the file of its name beside it (when there
/// is one), and each recorded signature of a module the package holds
/// against its precompiled specializations.
void checkCompanions(AuditReport &report, const pipeline::SignatureTable &recorded) {
  for (AuditedModule &module : report.modules) {
    for (const auto &[file, sha256] : module.sources) {
      auto found = report.pythonSources.find(siblingLocation(module.location, file));
      if (found == report.pythonSources.end())
        module.staleSources.push_back(file + " is not in the package");
      else if (found->second != sha256)
        module.staleSources.push_back(file + " changed after the module was built from it");
    }
    if (module.sourceFile.empty())
      continue;
    auto found = report.pythonChecksums.find(siblingLocation(module.location, module.sourceFile));
    if (found != report.pythonChecksums.end() && found->second != module.sourceChecksum)
      module.staleSources.push_back(module.sourceFile +
                                    " changed after the module was built from it");
  }
  for (const auto &[kernel, signatures] : recorded) {
    auto [moduleName, function] = llvm::StringRef(kernel).rsplit('.');
    if (function.empty())
      continue;
    const AuditedModule *built = nullptr;
    for (const AuditedModule &module : report.modules)
      if (module.status == ModuleStatus::Ok &&
          (module.companionOf == moduleName ||
           (module.companionOf.empty() && module.module == moduleName)))
        built = &module;
    std::string sourcePath = moduleName.str() + ".py";
    std::replace(sourcePath.begin(), sourcePath.end() - 3, '.', '/');
    std::string source;
    for (const auto &[location, sha256] : report.pythonSources) {
      llvm::StringRef path(location);
      if (path == sourcePath || path.ends_with("/" + sourcePath) ||
          path.ends_with("!" + sourcePath))
        source = location;
    }
    if (!built && source.empty())
      continue; // another package's kernel
    for (const std::string &signature : signatures) {
      bool precompiled = false;
      if (built)
        for (const AuditedKernel &audited : built->kernels)
          if (audited.name == function)
            for (const AuditedSpecialization &spec : audited.specializations) {
              std::vector<std::string> spelled;
              for (const std::string &arg : spec.args)
                spelled.push_back(recordedSpelling(arg));
              precompiled |= signature == "void(" + llvm::join(spelled, ", ") + ")";
            }
      if (!precompiled)
        report.notPrecompiled.push_back({kernel, signature, built ? built->location : source});
    }
  }
}

void printText(const AuditReport &report, const std::optional<cuda::ArchSet> &required,
               llvm::raw_ostream &os) {
  os << report.kind << ' ' << report.path << ": " << report.modules.size() << " Kiln module"
     << (report.modules.size() == 1 ? "" : "s") << '\n';
  for (const AuditedModule &module : report.modules) {
    os << module.location << '\n';
    if (!module.module.empty() || !module.kilnVersion.empty())
      os << "  module   " << (module.module.empty() ? "?" : module.module) << ", built by Kiln "
         << (module.kilnVersion.empty() ? "?" : module.kilnVersion) << " (bundle format "
         << (module.bundleFormat ? std::to_string(*module.bundleFormat) : "?")
         << ", manifest format "
         << (module.manifestFormat ? std::to_string(*module.manifestFormat) : "?") << ")\n";
    if (module.status != ModuleStatus::Ok) {
      os << (module.status == ModuleStatus::Damaged ? "  damaged: " : "  incompatible: ")
         << module.problem << '\n';
      continue;
    }
    if (!module.companionOf.empty())
      os << "  companion of " << module.companionOf << ", built from " << module.sources.size()
         << " source file" << (module.sources.size() == 1 ? "" : "s")
         << (module.staleSources.empty() ? ", all unchanged" : ", not all as built") << '\n';
    else
      for (const std::string &stale : module.staleSources)
        os << "  source   " << stale << '\n';
    os << "  archs    cubins " << archText(module.cubins, false) << "; PTX "
       << archText(module.ptx, true) << '\n';
    for (const AuditedKernel &kernel : module.kernels) {
      os << "  " << kernel.kind << ' ' << kernel.name << '\n';
      for (const AuditedSpecialization &spec : kernel.specializations) {
        os << "    (";
        for (size_t i = 0; i < spec.args.size(); ++i)
          os << (i ? ", " : "") << spec.args[i];
        os << ")\n      cubins " << archText(spec.cubins, false) << "; PTX "
           << archText(spec.ptx, true) << '\n';
      }
    }
  }
  bool anyMissing = false;
  for (const AuditedModule &module : report.modules)
    anyMissing |= !module.missing.empty();
  if (required && !anyMissing && !report.modules.empty())
    os << "every specialization has the required architectures: " << required->describe() << '\n';
  if (!report.signatureFile.empty() && report.notPrecompiled.empty())
    os << "every signature " << report.signatureFile
       << " records for this package's kernels is precompiled\n";
}

void printJson(const AuditReport &report, const std::optional<cuda::ArchSet> &required, bool ok,
               llvm::raw_ostream &os) {
  llvm::json::OStream json(os, 2);
  auto archArray = [&](llvm::StringRef key, const std::set<unsigned> &archs) {
    json.attributeArray(key, [&] {
      for (unsigned arch : archs)
        json.value(arch);
    });
  };
  json.object([&] {
    json.attribute("path", report.path);
    json.attribute("kind", report.kind);
    json.attribute("ok", ok);
    if (required)
      json.attributeObject("required_archs", [&] {
        archArray("cubins", required->cubins);
        archArray("ptx", required->ptx);
      });
    else
      json.attribute("required_archs", nullptr);
    json.attributeArray("modules", [&] {
      for (const AuditedModule &module : report.modules)
        json.object([&] {
          json.attribute("path", module.location);
          json.attribute("status", module.status == ModuleStatus::Ok        ? "ok"
                                   : module.status == ModuleStatus::Damaged ? "damaged"
                                                                            : "incompatible");
          json.attribute("problem", module.problem.empty() ? llvm::json::Value(nullptr)
                                                           : llvm::json::Value(module.problem));
          json.attribute("module", module.module.empty() ? llvm::json::Value(nullptr)
                                                         : llvm::json::Value(module.module));
          json.attribute("kiln_version", module.kilnVersion.empty()
                                             ? llvm::json::Value(nullptr)
                                             : llvm::json::Value(module.kilnVersion));
          json.attribute("bundle_format", module.bundleFormat
                                              ? llvm::json::Value(*module.bundleFormat)
                                              : llvm::json::Value(nullptr));
          json.attribute("manifest_format", module.manifestFormat
                                                ? llvm::json::Value(*module.manifestFormat)
                                                : llvm::json::Value(nullptr));
          json.attributeObject("archs", [&] {
            archArray("cubins", module.cubins);
            archArray("ptx", module.ptx);
          });
          json.attributeArray("kernels", [&] {
            for (const AuditedKernel &kernel : module.kernels)
              json.object([&] {
                json.attribute("name", kernel.name);
                json.attribute("kind", kernel.kind);
                json.attributeArray("specializations", [&] {
                  for (const AuditedSpecialization &spec : kernel.specializations)
                    json.object([&] {
                      json.attributeArray("args", [&] {
                        for (const std::string &arg : spec.args)
                          json.value(arg);
                      });
                      archArray("cubins", spec.cubins);
                      archArray("ptx", spec.ptx);
                    });
                });
              });
          });
          json.attribute("companion_of", module.companionOf.empty()
                                             ? llvm::json::Value(nullptr)
                                             : llvm::json::Value(module.companionOf));
          json.attributeArray("stale_sources", [&] {
            for (const std::string &stale : module.staleSources)
              json.value(stale);
          });
          json.attributeArray("missing", [&] {
            for (const Missing &missing : module.missing)
              json.object([&] {
                json.attribute("arch", missing.arch);
                json.attribute("kind", missing.ptx ? "ptx" : "cubin");
                json.attributeArray("specializations", [&] {
                  for (const std::string &spec : missing.specializations)
                    json.value(spec);
                });
              });
          });
        });
    });
    json.attributeArray("problems", [&] {
      for (const std::string &problem : report.problems)
        json.value(problem);
    });
    json.attribute("signature_file", report.signatureFile.empty()
                                         ? llvm::json::Value(nullptr)
                                         : llvm::json::Value(report.signatureFile));
    json.attributeArray("not_precompiled", [&] {
      for (const NotPrecompiled &entry : report.notPrecompiled)
        json.object([&] {
          json.attribute("kernel", entry.kernel);
          json.attribute("signature", entry.signature);
          json.attribute("module", entry.module);
        });
    });
  });
  os << '\n';
}

} // namespace

int runAudit(const AuditOptions &options) {
  std::optional<cuda::ArchSet> required;
  if (options.requireArch) {
    llvm::Expected<cuda::ArchSet> parsed = cuda::parseArchList(*options.requireArch);
    if (!parsed) {
      llvm::WithColor::error(llvm::errs(), "kiln")
          << "--require-arch: " << llvm::toString(parsed.takeError()) << '\n';
      return 2;
    }
    required = std::move(*parsed);
  }
  AuditReport report;
  report.path = options.path;
  auditPath(options.path, report);
  if (required)
    for (AuditedModule &module : report.modules)
      checkRequired(module, *required);
  report.signatureFile = options.signatures;
  if (report.signatureFile.empty() && !options.signaturesGiven)
    report.signatureFile = support::findNearestFile("", "kiln-signatures.toml");
  pipeline::SignatureTable recorded;
  if (!report.signatureFile.empty()) {
    llvm::Expected<pipeline::SignatureTable> table =
        pipeline::readSignatureTable(report.signatureFile, {"signatures"});
    if (!table) {
      llvm::WithColor::error(llvm::errs(), "kiln") << llvm::toString(table.takeError()) << '\n';
      return 1;
    }
    recorded = std::move(*table);
  }
  checkCompanions(report, recorded);

  // Everything wrong, on stderr, after the listing.
  std::vector<std::string> errors = report.problems;
  for (const AuditedModule &module : report.modules) {
    if (module.status != ModuleStatus::Ok)
      errors.push_back("'" + module.location + "'" +
                       (module.module.empty() ? "" : " (module " + module.module + ")") +
                       (module.status == ModuleStatus::Damaged ? " is damaged: " : " was ") +
                       module.problem);
    for (const Missing &missing : module.missing)
      errors.push_back(missingText(module, missing));
    for (const std::string &stale : module.staleSources)
      errors.push_back("'" + module.location + "' (" +
                       (module.companionOf.empty() ? "module " + module.module
                                                   : "companion of " + module.companionOf) +
                       ") does not match its source: " + stale);
  }
  for (const NotPrecompiled &entry : report.notPrecompiled)
    errors.push_back(entry.kernel + " is recorded with " + entry.signature + " in " +
                     report.signatureFile + ", but '" + entry.module +
                     "' has no precompiled specialization of it");
  if (required && report.modules.empty() && report.problems.empty())
    errors.push_back("no Kiln modules in '" + options.path +
                     "' (--require-arch needs at least one)");

  if (options.json)
    printJson(report, required, errors.empty(), llvm::outs());
  else
    printText(report, required, llvm::outs());
  llvm::outs().flush();
  for (const std::string &error : errors)
    llvm::WithColor::error(llvm::errs(), "kiln") << error << '\n';
  return errors.empty() ? 0 : 1;
}

CLI::App *addAuditCommand(CLI::App &app, AuditOptions &audit) {
  CLI::App *auditCommand = app.add_subcommand(
      "audit", "List the Kiln modules in a wheel, conda package or folder, and check their "
               "architectures");
  auditCommand
      ->add_option("path", audit.path,
                   "A wheel, a .conda or .tar.bz2 package, a folder, or a built module")
      ->required();
  auditCommand->add_option_function<std::string>(
      "--require-arch", [&](const std::string &list) { audit.requireArch = list; },
      "Architectures every specialization must have, as for --arch (e.g. '7.5 8.0 9.0+PTX' "
      "requires those cubins and compute_90 PTX); fail naming what is missing");
  auditCommand->add_option_function<std::string>(
      "--signatures",
      [&](const std::string &file) {
        audit.signatures = file;
        audit.signaturesGiven = true;
      },
      "The recorded signatures every companion must hold (default: the nearest "
      "kiln-signatures.toml; '' for none)");
  auditCommand->add_flag("--json", audit.json, "Print the result as JSON");
  return auditCommand;
}

} // namespace kiln::driver
