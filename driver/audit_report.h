//===- driver/audit_report.h - What `kiln audit` finds ----------*- C++ -*-===//
//
// The report `kiln audit` builds of a package: the Kiln modules in it, what
// each one holds, and what the checks found missing or changed; and the
// two ways it is shown, a listing (or JSON) on stdout and one error per
// problem on stderr.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/cuda_tools/arch_list.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::driver::audit {

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

/// Prints the listing: each module with its kernels, specializations and
/// architectures, and a line for each check every module passed.
void printText(const AuditReport &report, const std::optional<cuda_tools::ArchSet> &required,
               llvm::raw_ostream &os);

/// Prints the report as one JSON object; `ok` says whether the audit passed.
void printJson(const AuditReport &report, const std::optional<cuda_tools::ArchSet> &required,
               bool ok, llvm::raw_ostream &os);

/// Everything wrong with the package, one message each: unreadable files
/// and archives, damaged or incompatible modules, missing architectures,
/// companions that do not match their sources, recorded signatures that
/// are not precompiled, and no modules at all when `archsRequired`.
std::vector<std::string> errorsOf(const AuditReport &report, bool archsRequired);

} // namespace kiln::driver::audit
