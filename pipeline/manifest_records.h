//===- pipeline/manifest_records.h - Builds in manifest terms ---*- C++ -*-===//
//
// What the compiler built, as the records the manifest writer takes
// (module/manifest_writer.h): a specialization's kind, argument types and
// names, parameter layout, resources and launch facts; a module constant's
// Numba type and value.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_compiler.h"
#include "backend/cuda_tools/ptxas_log.h"
#include "ir/constant_value.h"
#include "ir/typed_ir.h"
#include "module/manifest_writer.h"

#include <map>
#include <string>

namespace kiln::pipeline {

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

/// The manifest's record of constant `name`, which isManifestConstant().
module::ManifestConstant manifestConstant(std::string name, const ConstantValue &value);

/// The manifest's record of a specialization of `kernel` with `interface`,
/// whose entry function got `resources` per sm_ arch; the caller adds the
/// files, architectures and fat binary it built.
module::ManifestSpecialization
manifestSpecialization(const ir::Function &kernel, const backend::KernelInterface &interface,
                       const std::map<unsigned, cuda_tools::FunctionResources> &resources);

} // namespace kiln::pipeline
