//===- backend/host/host_region_uniformity.h - What every thread shares -*- C++ -*-===//
//
// Which values of a kernel body cut at its barriers are the same for every
// thread of a block, and whether the block's threads all wait at the same
// barriers in the same order: what lets region loops (host_region_loops.h)
// keep a value in one variable for the block rather than one per thread,
// and run each region over every thread without asking where each waits.
//
// A value is divergent (it may differ between threads at the same point of
// their runs) when it is a thread index or is computed from one, is read
// from memory threads may write, is a call's result, or is chosen by a
// divergent branch: a phi where the paths of a divergent branch meet, or a
// value from inside a loop that threads leave at different iterations. The
// threads wait at their barriers together when the paths of every
// divergent branch meet again before any barrier: each region then sends
// all the threads it runs that go on to one barrier. Paths that end a
// thread before its next barrier (a failed index check, an early return)
// do not count; the threads that take them end, and the others go on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

namespace kiln::backend {

struct RegionUniformity {
  /// Whether every thread that starts a region and does not end in it
  /// leaves it for the same barrier. When false, `divergent` is incomplete
  /// and must not be read.
  bool barriersUniform = false;
  /// The values that may differ between the block's threads.
  llvm::DenseSet<const llvm::Value *> divergent;

  bool isUniform(const llvm::Value *value) const { return !divergent.contains(value); }
};

/// The uniformity of `body`, a kernel body as region loops take it:
/// (thread, threadIdx.x, .y, .z, laneId, parameters...). `isBarrier`: the
/// blocks that stand for its barriers. `readsUniformly`: the loads whose
/// value is the same for every thread (fields of the block, a reducing
/// barrier's result); every other load is divergent.
RegionUniformity
analyzeRegionUniformity(llvm::Function &body,
                        llvm::function_ref<bool(const llvm::BasicBlock &)> isBarrier,
                        llvm::function_ref<bool(const llvm::LoadInst &)> readsUniformly);

} // namespace kiln::backend
