//===- frontend/emit/synthesized_kernels.h ---------------------*- C++ -*-===//
//
// A @vectorize ufunc or a @cuda.reduce reduction is a scalar function; what
// runs on the device is a kernel Kiln writes around it, in typed IR, for
// each of its specializations (as Numba writes `__vectorized_<name>` and
// `gpu_reduce_block_strided`):
//
//   ufunc kernel (x1[:], ..., xn[:], out[:]):       all 1-d, any layout
//       i = cuda.grid(1)
//       if i < out.shape[0]:
//           out[i] = core(x1[i], ..., xn[i])
//
//     one element per thread, as Numba's: a grid-stride loop would keep
//     every operand's pointer, shape and stride live in registers.
//
//   reduction kernel (values[:], partials[::1], init, use_init):
//       each thread folds values[i] for its grid-stride indices; each block
//       folds its threads' results in shared memory (a tree, with a barrier
//       per level) and writes one partial per block; block 0 also folds in
//       `init` when use_init. The runtime reduces the partials with the
//       same kernel until one value remains.
//
// The runtime broadcasts ufunc operands by giving them stride 0, so the
// kernels need no broadcasting logic of their own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/typed_ir.h"
#include "ir/types.h"

namespace kiln {

/// Threads per block the reduction kernel is compiled for (its shared
/// array's size); the runtime launches it with at most this many.
inline constexpr unsigned kReductionBlockSize = 1024;

/// The kernel applying `core` element-wise; `symbol` names it.
ir::Function *synthesizeUfuncKernel(ir::Module &module, TypeContext &types, ir::Function &core,
                                    std::string symbol);

/// The kernel reducing arrays of `element` with `core`.
ir::Function *synthesizeReductionKernel(ir::Module &module, TypeContext &types, ir::Function &core,
                                        const Type *element, std::string symbol);

} // namespace kiln
