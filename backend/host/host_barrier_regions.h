//===- backend/host/host_barrier_regions.h - Barriers as coroutines --*- C++ -*-===//
//
// A kernel whose threads wait only at block barriers runs on the CPU engine
// without a stack per thread: each thread becomes an LLVM coroutine that
// suspends at every barrier, and the engine runs the block's threads from
// barrier to barrier (runtime/cpu_engine/barrier_regions.h). LLVM's
// coroutine passes keep what lives across a barrier in a frame per thread,
// which the engine allocates (KilnCpuServices::allocateFrame).
//
// The lowering marks each barrier's service call (markBarrier); turning a
// kernel body into barrier regions inlines every function it calls, so that
// all of its barriers are in the coroutine itself, and replaces each marked
// call with a suspension. A barrier the inliner cannot reach (recursion)
// leaves the kernel to fibers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <optional>

namespace kiln::backend {

/// Marks `call` as the barrier of KilnBarrierReduce `mode`: its operands are
/// the thread, and for the reducing modes the mode and the predicate.
void markBarrier(llvm::CallInst &call, uint32_t mode);

/// The KilnBarrierReduce mode of `call` if markBarrier marked it.
std::optional<uint32_t> barrierModeOf(const llvm::CallInst &call);

/// A copy of kernel body `body` (thread, parameters...) -> void as a
/// coroutine (thread, parameters...) -> handle that runs up to the first
/// barrier or the end. Null when a barrier cannot be inlined into it.
/// `reduces`: whether a barrier of the kernel is a reducing one; then every
/// barrier leaves its mode and predicate in the thread (runBarrierRegions
/// with KILN_REGIONS_REDUCE), else none does.
llvm::Function *makeBarrierRegions(llvm::Function &body, bool reduces);

/// The block entry's round function (KilnCpuRegionRound), named `name`:
/// resumes threads whose handles come from `coroutines` (the checked and
/// unchecked copies of one kernel; either may be null) in a loop. Until
/// finishRegionRounds runs after LLVM has split the coroutines, the
/// resumption is a call through the handle.
llvm::Function *makeRegionRound(llvm::Module &module, llvm::StringRef name,
                                llvm::ArrayRef<llvm::Function *> coroutines);

/// In each round function of the split `module`, calls the coroutines'
/// resume functions directly instead of through the handle, and inlines
/// them: resuming a thread costs no call.
void finishRegionRounds(llvm::Module &module);

/// Whether the coroutine `handle` has reached its end.
llvm::Value *regionsDone(llvm::IRBuilder<> &builder, llvm::Value *handle);

} // namespace kiln::backend
