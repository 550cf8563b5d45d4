//===- backend/manifest.h - What a build holds, for the runtime -*- C++ -*-===//
//
// The manifest describes a build and every kernel specialization in it: the
// module, the Kiln that built it, the source it came from, the options and
// architectures it was built with, the module's constants, and per
// specialization its Python name and kind (kernel, ufunc, reduction),
// argument types and names, entry name, parameter layout (docs/abi.md), shared and
// local memory, the images built for it and, per cubin, what ptxas reported
// (registers, stack, spills, shared and local memory). The runtime packs arguments and
// picks images from the manifest alone, without the compiler. It is JSON,
// with keys in a fixed order, so that builds stay byte-identical.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_compiler.h"
#include "backend/cuda_tools/ptxas_log.h"
#include "ir/constant_value.h"
#include "ir/typed_ir.h"
#include "module/manifest_format.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::backend {

/// Where a specialization's fat binary lies in a built module's payload.
struct ManifestBlob {
  uint64_t offset = 0; // from the start of the payload
  uint64_t size = 0;
  uint64_t checksum = 0; // kilnChecksum of the bytes
};

struct ManifestEntry {
  const ir::Function *kernel;
  KernelInterface interface;
  /// Files written for this specialization, relative to the manifest.
  std::vector<std::string> files;
  std::set<unsigned> cubinArchs;
  std::set<unsigned> ptxArchs;
  /// Built modules only.
  std::optional<ManifestBlob> fatbin;
  /// Per sm_ arch: the entry function's resources, as ptxas reported them.
  std::map<unsigned, cuda::FunctionResources> resources;
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

/// A module-level name bound to a Python constant.
struct ManifestConstant {
  std::string name;
  ConstantValue value;
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

/// "kernel", "ufunc" or "reduction".
llvm::StringRef kernelKind(const ir::Function &kernel);

/// The manifest's type of a constant: Numba's typeof, with "unicode_type"
/// for strings: "int64", "float32", "UniTuple(int64 x 2)",
/// "Tuple(int64, float64)". Empty for values Numba cannot type (ints beyond
/// 64 bits).
std::string constantTypeName(const ConstantValue &value);

/// Whether a manifest can hold `value`: None, bool, int, float, complex,
/// str, NumPy scalars and tuples of these that Numba can type.
bool isManifestConstant(const ConstantValue &value);

void writeManifest(llvm::raw_ostream &os, const ManifestModule &module,
                   llvm::ArrayRef<ManifestEntry> entries);

} // namespace kiln::backend
