//===- backend/host/host_interrupt_polls.h - Ctrl-C reaches every loop -*- C++ -*-===//
//
// A kernel on the CPU engine runs in the user's process, and Ctrl-C must
// stop it even when it loops forever. The engine cannot stop a thread from
// outside; it sets the launch's interrupt word (KilnCpuThread::interrupt),
// and generated code polls the word and calls the `interrupted` service,
// which ends the launch or, when the engine only wanted a poll, returns.
//
// Every loop polls on its latches but two kinds, which cannot run long:
// the loops the back end writes over a block's threads or a run's
// (markThreadLoop), which end after blockDim or KILN_CPU_MAX_BLOCK_RUN
// blocks' threads, and the engine polls between blocks; and loops that
// ScalarEvolution proves run at most `unpolledIterationLimit` iterations,
// counting the iterations of their inner loops that do not poll. Any other
// loop polls, in whatever shape the optimizer left it: a `while` on data,
// a `range` over an argument, a loop made from tail recursion, each copy
// of a split or vectorized loop. (ScalarEvolution alone cannot bound the
// thread loops once they are split at range checks and vectorized, and
// the thread loops' marks go with every copy the optimizer makes.) Polls
// go in after optimization, so that they cost a load and a branch per
// iteration and keep no loop from being vectorized or unrolled.
//
// A function the optimizer took the KilnCpuThread from (it removes unused
// parameters of internal functions, and a device function that neither
// raises nor checks an index has no use for the thread until its loops
// poll) gets it back first, from its callers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

namespace kiln::backend {

/// Marks the loop whose latch is `latch` as a loop over a block's threads
/// (or a run's), which needs no interrupt polls.
void markThreadLoop(llvm::BranchInst &latch);

/// Makes every loop of the module's kernel code that can run long poll the
/// engine's interrupt word. Run after optimization.
void insertInterruptPolls(llvm::Module &module);

/// The same for the loops of one function whose first parameter is the
/// thread: a coroutine before LLVM splits it, after which its parts take
/// the frame instead.
void insertInterruptPolls(llvm::Function &function);

} // namespace kiln::backend
