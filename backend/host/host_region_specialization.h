//===- backend/host/host_region_specialization.h - A region's copies -*- C++ -*-===//
//
// Where a block's threads wait at their barriers together, region loops
// (host_region_loops.h) run a region's code in copies, each for what is
// decided before the round runs it: what every thread of the round
// computes alike, and where in the block a thread is. A branch on a value
// every thread of the round computes alike (`while step > 0` after a
// barrier in the loop) takes one way for the whole round: a copy for each
// way, the round picking one. A branch on threadIdx.x against such a value
// (`if tid < step`) takes one way for the threads below a bound and the
// other for the rest: a loop over each range of threads, with a copy in
// which the branch is decided. The optimizer then removes the code a copy
// never runs, and the loops over threads that do nothing (those from step
// on, in a tree), and vectorizes what is left.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/host/host_region_cut.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <optional>

namespace kiln::backend {

/// The conditions a copy of a region takes as decided, with their values.
using RegionDecisions = llvm::SmallDenseMap<llvm::Value *, bool, 4>;

/// A branch of a region on threadIdx.x against a bound every thread of a
/// round computes alike.
struct ThreadGuard {
  llvm::ICmpInst *compare = nullptr;
  /// The comparison with threadIdx.x (or its extension) on the left.
  llvm::CmpInst::Predicate predicate = llvm::CmpInst::BAD_ICMP_PREDICATE;
  llvm::Value *bound = nullptr;
};

/// The x of a ThreadGuard's threads, from `low` (0 where null) to `high`,
/// for which its comparison is `inside`; the others have the other value.
struct ThreadRange {
  llvm::Value *low = nullptr;
  llvm::Value *high = nullptr;
  bool inside = true;
};

/// `value` as region `k` of a cut body has it: a phi whose edges from
/// within the region all bring one value is that value (its other edges
/// come through barriers, into other regions).
llvm::Value *valueInRegion(llvm::Value *value, const CutBody &cut, unsigned k);

/// Whether `value`, computed in region `k` of a cut body, is the same for
/// every thread all through a round: it depends only on constants, the
/// kernel's parameters, what does not change while a block runs, barrier
/// results and UniformSlot::in, and can be computed before the round.
bool isRoundInvariant(llvm::Value *value, const CutBody &cut, unsigned k, unsigned depth = 0);

/// The branch on a round-invariant condition that every thread running
/// region `k` takes first, if there is one.
llvm::BranchInst *findRegionSwitch(const CutBody &cut, unsigned k);

/// The first ThreadGuard of region `k` in the code a copy for `decided`
/// runs, if there is one.
std::optional<ThreadGuard> findThreadGuard(const CutBody &cut, unsigned k,
                                           const RegionDecisions &decided);

/// Emits, at the builder's position, round-invariant `value` of region `k`;
/// `leaf` gives the block function's value for a parameter of the body or
/// for one of its allocas.
llvm::Value *computeBeforeRound(llvm::IRBuilder<> &builder, llvm::Value *value, const CutBody &cut,
                                unsigned k, llvm::function_ref<llvm::Value *(llvm::Value *)> leaf);

/// Emits the ThreadRange of `guard`, whose bound the round computed as
/// `bound`, for x below `width`.
ThreadRange emitThreadRange(llvm::IRBuilder<> &builder, const ThreadGuard &guard,
                            llvm::Value *bound, llvm::Value *width);

} // namespace kiln::backend
