//===- frontend/typing/compile_time_shape.h --------------------*- C++ -*-===//
//
// Kernels allocate no memory at run time: an array they make, such as
// `arr.copy()`, lives in the thread's local memory, so its size must be
// known when the kernel compiles. These are the arrays whose shape is: a
// module's array frozen in, and a cuda.local.array or cuda.shared.array of
// constant shape.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ssa/ssa.h"
#include "ir/types.h"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::typing {

/// The extents a shape argument spells: an integer literal or a tuple of
/// them (cuda.local.array(16, ...), cuda.local.array((4, 4), ...)).
std::vector<uint64_t> literalShape(const Type *shape);

/// The shape of the array `array` evaluates to if the kernel's compilation
/// knows it, as above; none for any other array (an argument, a slice, an
/// array in dynamic shared memory).
std::optional<std::vector<uint64_t>>
compileTimeShape(const ssa::Instr *array,
                 llvm::function_ref<const Type *(const ssa::Instr *)> typeOf);

} // namespace kiln::typing
