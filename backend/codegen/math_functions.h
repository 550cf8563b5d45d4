//===- backend/codegen/math_functions.h - Names of math library functions -*- C++ -*-===//
//
// Both math libraries Kiln calls name their functions after C's: the host
// calls `sinf` and `sin` from libm, NVPTX `__nv_sinf` and `__nv_sin` from
// libdevice.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"

#include <llvm/ADT/StringRef.h>

namespace kiln::backend {

/// The double-precision C name of a math intrinsic ("sin", "atan2", "pow");
/// empty for intrinsics that are not library functions.
llvm::StringRef mathBaseName(ir::Intrinsic which);

} // namespace kiln::backend
