//===- frontend/emit/emit_typed_ir.h ---------------------------*- C++ -*-===//
//
// The last step of the front end: every specialization that a kernel, ufunc
// or reduction reaches becomes a typed IR function (see typed_ir.h), with
// the decisions of type inference made explicit: conversions become Casts,
// builtins become operations and intrinsics, `cuda.grid(2)` becomes index
// arithmetic, loops become counters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/frontend.h"
#include "ir/typed_ir.h"

#include <memory>

namespace kiln {

/// Builds the typed IR of a module that checked without errors. Kernels
/// come first, in source order, then the device functions they call. The
/// result is verified; a verification failure is reported as an internal
/// error diagnostic and gives null.
std::unique_ptr<ir::Module> emitTypedIR(CheckedModule &checked, llvm::StringRef moduleName);

} // namespace kiln
