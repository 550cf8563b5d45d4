//===- tests/module/sample_manifests.h - Records for the manifest tests ---===//
//
// Manifest records as the pipeline fills them (module/manifest_writer.h),
// shared by the writer's and the reader's tests: a specialization with
// every key, one with only what every specialization has, and a companion
// module with sources, options and constants of several kinds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/manifest_writer.h"

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace kiln::module::testing {

inline ManifestSpecialization scaleKernel() {
  ManifestSpecialization entry;
  entry.name = "scale";
  entry.kind = "kernel";
  entry.symbol = "pkg.kernels.scale$0";
  entry.entry = "_kiln_scale_0";
  entry.argumentTypes = {"array(float32, 1d, C)", "UniTuple(float32 x 2)"};
  entry.argumentNames = {"out", "factors"};
  entry.parameters = {{0, "data", 0, {}, "ptr", 8},
                      {0, "shape", 0, {}, "i64", 8},
                      {0, "stride", 0, {}, "i64", 8},
                      {1, "value", 0, {0}, "f32", 4},
                      {1, "value", 0, {1}, "f32", 4}};
  entry.staticSharedBytes = 1024;
  entry.localBytes = 16;
  entry.synchronizes = true;
  entry.raises = true;
  entry.cooperative = true;
  entry.maxThreadsPerBlock = 256;
  entry.blockEntry = true;
  entry.indexChecks = "unchecked";
  entry.cubinArchs = {75, 90, 100};
  entry.ptxArchs = {90};
  entry.files = {"scale.cubin"};
  // By architecture, as the pipeline gives them: "sm_100" last.
  entry.resources = {{"sm_75", {18, 0, 0, 0, 1024, 16}},
                     {"sm_90", {16, 8, 4, 4, 1024, 16}},
                     {"sm_100", {20, 32, 8, 12, 1024, 16}}};
  entry.fatbin = ManifestBlob{4096, 12345, 0xfedcba9876543210ULL};
  return entry;
}

/// A reduction with neither resources, a fat binary nor launch bounds.
inline ManifestSpecialization plainReduction() {
  ManifestSpecialization entry;
  entry.name = "total";
  entry.kind = "reduction";
  entry.symbol = "pkg.kernels.total$1";
  entry.entry = "_kiln_total_1";
  entry.argumentTypes = {"int64"};
  entry.argumentNames = {"values"};
  entry.parameters = {{0, "value", 0, {}, "i64", 8}};
  return entry;
}

inline ManifestModule companionModule() {
  ManifestModule module;
  module.name = "pkg._kernels_kiln";
  module.kilnVersion = "0.1.0";
  module.sourceFile = "kernels.py";
  module.sourceChecksum = 0x0123456789abcdefULL;
  module.options.fastmath = true;
  module.options.lineinfo = true;
  module.options.opt = 3;
  module.options.maxRegisters = 64;
  module.options.ptxasFlags = {"-v", "--warn-on-spills"};
  module.cubinArchs = {75, 90, 100};
  module.ptxArchs = {90};
  module.constants.push_back({"NAN", "float64", "nan"});
  module.constants.push_back({"SCALE", "complex128", llvm::json::Array{1.5, "nan"}});
  module.constants.push_back({"TPB", "int64", 16});
  module.constants.push_back({"WEIGHTS", "Tuple(int64, float64)", llvm::json::Array{1, 2.5}});
  module.companionOf = "pkg.kernels";
  module.sources = {{"kernels.py", std::string(64, 'a')}, {"../helpers.py", std::string(64, 'b')}};
  return module;
}

/// The manifest writeManifest() writes for `module` and `entries`.
inline std::string manifestText(const ManifestModule &module,
                                llvm::ArrayRef<ManifestSpecialization> entries) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeManifest(os, module, entries);
  return text;
}

} // namespace kiln::module::testing
