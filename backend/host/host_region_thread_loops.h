//===- backend/host/host_region_thread_loops.h - Loops over threads -*- C++ -*-===//
//
// The loops region loops (host_region_loops.h) run a region's code in for
// one round: over the block's threads in the order fibers would run them,
// from the round's first thread to the last and then from thread 0 to the
// one before it; in each half row by row; where threads may have ended,
// over the runs of threads that have not; and in each run over the threads,
// whose linear index and threadIdx.x count up by one from one bound to
// another, which is what the optimizer's loop passes (range check splits,
// vectorization) read best.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

namespace kiln::backend {

/// The loops over the halves of a block and their rows. The builder is in
/// a row's body, where the threads from x to xEnd run.
struct ThreadRows {
  llvm::PHINode *secondHalf = nullptr;
  llvm::PHINode *rowStart = nullptr;
  /// The row's first thread's linear index, and the row's range of x.
  llvm::Value *rowBase = nullptr;
  llvm::Value *x = nullptr;
  llvm::Value *xEnd = nullptr;
  /// The row's y and z indices, null where they are not counted.
  llvm::Value *y = nullptr;
  llvm::Value *z = nullptr;
  llvm::BasicBlock *halves = nullptr;
  llvm::BasicBlock *rows = nullptr;
  llvm::BasicBlock *halfDone = nullptr;
};

/// A loop over the threads of a row from one x to another. The builder is
/// in its body, which ends at `latch`.
struct ThreadLoop {
  llvm::PHINode *x = nullptr;
  llvm::Value *linear = nullptr;
  llvm::Value *to = nullptr;
  llvm::BasicBlock *body = nullptr;
  llvm::BasicBlock *latch = nullptr;
  llvm::BasicBlock *after = nullptr;
};

/// Writes the loops over a block's threads at a builder's position.
class ThreadLoops {
public:
  /// For a block of `dims` (blockDim's three) and `threadCount` threads;
  /// y and z are counted where `countsY` and `countsZ`.
  ThreadLoops(llvm::IRBuilder<> &builder, llvm::ArrayRef<llvm::Value *> dims,
              llvm::Value *threadCount, bool countsY, bool countsZ)
      : builder(builder), dims{dims[0], dims[1], dims[2]}, threadCount(threadCount),
        countsY(countsY), countsZ(countsZ) {}

  /// Starts the loops over the halves and rows from thread `first`.
  ThreadRows beginRows(llvm::Value *first);
  /// Ends them, from the builder's block.
  void endRows(ThreadRows &rows);
  /// Runs `emit(from, to)` for each run of threads of the row whose element
  /// of `states` (i32) is 0, those that have not ended: the whole row
  /// unless `endedBefore`.
  void emitLiveRuns(const ThreadRows &rows, llvm::Value *states, llvm::Value *endedBefore,
                    llvm::function_ref<void(llvm::Value *, llvm::Value *)> emit);
  /// Starts a loop over the threads of the row from x `from` to `to`.
  ThreadLoop beginThreads(const ThreadRows &rows, llvm::Value *from, llvm::Value *to);
  /// Ends it at its latch, leaving the builder after it.
  void endThreads(ThreadLoop &loop);

private:
  /// The first x from `from` to `to` in the row whose thread's state is not
  /// 0 (`ended`) or is 0 (`!ended`).
  llvm::Value *emitScan(const ThreadRows &rows, llvm::Value *states, llvm::Value *from,
                        llvm::Value *to, bool ended);
  llvm::BasicBlock *newBlock(const char *name);

  llvm::IRBuilder<> &builder;
  llvm::Value *dims[3];
  llvm::Value *threadCount;
  const bool countsY, countsZ;
};

} // namespace kiln::backend
