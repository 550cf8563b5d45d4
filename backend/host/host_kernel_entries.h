//===- backend/host/host_kernel_entries.h - A kernel's host entry points -*- C++ -*-===//
//
// The entry points through which the CPU engine runs a lowered kernel
// (module/cpu_kernel_abi.h), each (thread, args) -> void, `args` holding
// one pointer per flat parameter:
//
//   `_thread`  runs one thread: it calls the kernel's body. Where the
//              kernel also has a `_block` entry, the engine runs threads
//              through it only in its reference mode (the oracle of its fast
//              paths, where speed does not matter), or when their local
//              arrays would not fit a worker's stack: a kernel with a block
//              entry and no local arrays gets it unoptimized (optnone), so
//              that only the block entry pays for LLVM's full pipeline;
//   `_block`   runs every thread of a block, when the kernel has one:
//              - threads that never wait for each other one after the other
//                in a loop nest over the block's threads, or, when blocks
//                are independent, the loops over a run of blocks
//                (host_block_runs.h);
//              - threads that wait only at block barriers region by region
//                (host_region_loops.h) where the kernel fits, else as the
//                barrier regions the engine resumes (host_barrier_regions.h).
//
// Where the kernel's host code holds both a checked and an unchecked copy
// of its body, every entry picks one once per launch (see "Index checks"
// in host_target.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_abi.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/Function.h>

namespace kiln::backend {

/// What decides which entries a kernel gets, and how they run it.
struct KernelEntryNeeds {
  /// Whether the kernel gets a `_block` entry: not when it raises, or when
  /// its threads wait for each other other than at block barriers.
  bool hasBlockEntry = false;
  /// Whether its threads wait at block barriers.
  bool synchronizes = false;
  /// Whether a barrier of the kernel is syncthreads_count/_and/_or.
  bool reducesAtBarriers = false;
  /// Whether launches run the checked copy unless the engine's flags say
  /// otherwise.
  bool checksByDefault = true;
  /// Whether the kernel has local arrays: those of a thread may not fit a
  /// worker's stack, where the engine runs the threads through `_thread`.
  bool hasLocalArrays = false;
};

/// Makes `kernel`, the lowered kernel (thread, parameters...) -> void,
/// internal as `<name>_body`, and writes the entry points named after it.
/// `uncheckedKernel`: its copy without index checks, or null when it has
/// none.
void writeKernelEntries(llvm::Function &kernel, llvm::Function *uncheckedKernel,
                        llvm::ArrayRef<KernelParameter> parameters, const KernelEntryNeeds &needs);

} // namespace kiln::backend
