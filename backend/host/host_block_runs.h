//===- backend/host/host_block_runs.h - Runs of blocks as one loop nest -*- C++ -*-===//
//
// The block entry of a kernel whose blocks are independent takes from the
// engine a run of consecutive blocks of one grid row (blockRunLimit in
// module/cpu_kernel_abi.h) and runs it row by row: for each (threadIdx.z,
// threadIdx.y), that row of threads of every block of the run. Rows of the
// arrays a kernel indexes by (y, x) are then read from start to end, as an
// `@njit` loop over them reads them, instead of a block's width at a time.
//
// A kernel that uses threadIdx.x, blockIdx.x and laneId only to form the
// global x index (cuda.grid, or blockIdx.x * blockDim.x + threadIdx.x)
// runs one loop over that index across the whole run, which the optimizer
// splits at the kernel's guards and vectorizes once per row. Other kernels
// loop over the run's blocks around a loop over threadIdx.x.
//
// Independent means: the kernel waits for no other thread and calls no
// service but the index error's: no atomics, fences or prints, whose order
// across blocks a run would change. An index error leaves the run with the
// failing thread's blockIdx.x in the KilnCpuThread, and the engine finishes
// the other blocks from the row they stopped at, which the entry then
// starts from.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <optional>

namespace kiln::backend {

/// A kernel body as a run's loop nest calls it.
struct BlockRunBody {
  /// (thread, threadIdx.x, .y, .z, laneId, blockIdx.x, global x index (i64),
  /// parameters...), every call inlined.
  llvm::Function *function = nullptr;
  /// Whether it takes threadIdx.x, laneId and blockIdx.x from the global x
  /// index alone (the loop nest passes poison for them).
  bool globalXOnly = false;
};

/// The body of a run's loop nest for `loopBody`, a kernel body as a block
/// entry's loop takes it (see specializeForThreadLoop); nullopt when the
/// kernel's blocks are not independent.
std::optional<BlockRunBody> makeBlockRunBody(llvm::Function &loopBody);

/// Emits, at `builder`, the loop nest that runs the run of blocks the
/// engine offers the block entry whose KilnCpuThread is `thread`, calling
/// `body` with `parameters`, after taking the run (blockRunLength).
void emitBlockRunLoops(llvm::IRBuilder<> &builder, llvm::Value *thread, const BlockRunBody &body,
                       llvm::ArrayRef<llvm::Value *> parameters);

} // namespace kiln::backend
