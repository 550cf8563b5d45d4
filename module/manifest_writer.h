//===- module/manifest_writer.h - Writing a build's manifest ----*- C++ -*-===//
//
// The manifest describes a build and every kernel specialization in it
// (docs/abi.md): the module, the Kiln that built it, the source it came
// from, the options and architectures it was built with, the module's
// constants, and per specialization its Python name and kind, argument
// types and names, entry name, parameter layout, shared and local memory,
// the images built for it and, per cubin, what ptxas reported. The runtime
// packs arguments and picks images from the manifest alone, without the
// compiler. It is JSON with keys in the schema's order
// (module/manifest_keys.def), so that builds stay byte-identical.
//
// The records below are the manifest's own terms: the compile pipeline
// fills them from what it built (pipeline/manifest_records.h); nothing here
// knows the compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::module {

/// Where a specialization's fat binary lies in a built module's payload.
struct ManifestBlob {
  uint64_t offset = 0; // from the start of the payload
  uint64_t size = 0;
  uint64_t checksum = 0; // kilnChecksum of the bytes
};

/// One machine parameter of a specialization (docs/abi.md).
struct ManifestParameter {
  unsigned argument = 0;
  std::string role; // "data", "shape", ...
  unsigned dimension = 0;
  std::vector<unsigned> path;
  std::string type; // "i64", "ptr", ...
  uint64_t size = 0;
};

/// What ptxas reported for a specialization's entry function on one arch.
struct ManifestResources {
  uint64_t registers = 0;
  uint64_t stackBytes = 0;
  uint64_t spillStoreBytes = 0;
  uint64_t spillLoadBytes = 0;
  uint64_t sharedBytes = 0;
  uint64_t localBytes = 0;
};

struct ManifestSpecialization {
  std::string name; // the Python name
  std::string kind; // "kernel", "ufunc" or "reduction"
  std::string symbol;
  std::string entry;
  std::vector<std::string> argumentTypes;
  std::vector<std::string> argumentNames;
  std::vector<ManifestParameter> parameters;
  uint64_t staticSharedBytes = 0;
  uint64_t localBytes = 0;
  bool synchronizes = false;
  bool raises = false;
  bool cooperative = false;
  /// launch_bounds' first bound, where the kernel has launch bounds.
  std::optional<uint64_t> maxThreadsPerBlock;
  bool blockEntry = false;
  /// Which copies of the kernel's body its host code holds: "checked",
  /// "unchecked" or "both" (backend/host/index_check_copies.h); empty
  /// where there is no host code.
  std::string indexChecks;
  /// "file:line" of each operation the host code's messages name, by the
  /// index the code passes (cpu_kernel_abi.h, raiseIndexError).
  std::vector<std::string> sites;
  std::set<unsigned> cubinArchs;
  std::set<unsigned> ptxArchs;
  /// Files written for this specialization, relative to the manifest.
  std::vector<std::string> files;
  /// Per cubin, by sm_ name, in the order given.
  std::vector<std::pair<std::string, ManifestResources>> resources;
  /// Built modules only.
  std::optional<ManifestBlob> fatbin;
};

/// The options the command line applied to every kernel (unset: each
/// kernel's own decorator options).
struct ManifestOptions {
  bool fastmath = false;
  bool debug = false;
  bool lineinfo = false;
  std::optional<unsigned> opt;
  std::optional<unsigned> maxRegisters;
  std::vector<std::string> ptxasFlags;
};

/// A module-level name bound to a Python constant: its Numba type and its
/// value as the manifest writes it (docs/abi.md).
struct ManifestConstant {
  std::string name;
  std::string type;
  llvm::json::Value value = nullptr;
};

/// A source file a companion module was built from.
struct ManifestSource {
  std::string file;   // relative to the module's folder, with '/'
  std::string sha256; // lowercase hex
};

/// What the manifest says about the build as a whole.
struct ManifestModule {
  std::string name; // dotted: "pkg.kernels"
  std::string kilnVersion;
  std::string sourceFile; // the file name, without folders
  uint64_t sourceChecksum = 0;
  ManifestOptions options;
  std::set<unsigned> cubinArchs;
  std::set<unsigned> ptxArchs;
  /// Sorted by name.
  std::vector<ManifestConstant> constants;
  /// For the companion of a module that stays Python: that module's dotted
  /// name, and every source file the build read, the module first, which
  /// the runtime checks before it uses a specialization. Empty otherwise.
  std::string companionOf;
  std::vector<ManifestSource> sources;
};

void writeManifest(llvm::raw_ostream &os, const ManifestModule &module,
                   llvm::ArrayRef<ManifestSpecialization> specializations);

// The parts of a manifest, each written as writeManifest() writes it, key
// and value, for tools that show parts of one (`kiln inspect --json`).

/// "source": the file the module was built from.
void writeSource(llvm::json::OStream &json, const ManifestModule &module);
/// "companion_of" and "sources" for a companion module; nothing otherwise.
void writeCompanion(llvm::json::OStream &json, const ManifestModule &module);
void writeOptions(llvm::json::OStream &json, const ManifestOptions &options);
/// "archs": the module's cubin and PTX architectures.
void writeArchs(llvm::json::OStream &json, const ManifestModule &module);
void writeConstants(llvm::json::OStream &json, llvm::ArrayRef<ManifestConstant> constants);
/// A specialization's "resources", per sm_ name.
void writeResources(llvm::json::OStream &json,
                    llvm::ArrayRef<std::pair<std::string, ManifestResources>> resources);
/// A specialization's "fatbin".
void writeFatbin(llvm::json::OStream &json, const ManifestBlob &fatbin);

/// The options' keys and values, in the manifest's order, for writing them
/// as JSON or as `key=value` text.
std::vector<std::pair<std::string_view, llvm::json::Value>>
optionEntries(const ManifestOptions &options);

} // namespace kiln::module
