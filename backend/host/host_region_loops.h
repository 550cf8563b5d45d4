//===- backend/host/host_region_loops.h - Barriers as loops over threads -*- C++ -*-===//
//
// How the CPU engine runs a kernel whose threads wait at block barriers
// when it can: the kernel is cut at each barrier into regions, and each
// region becomes a loop over the block's threads (the work-item loops of
// PoCL and of SYCL's CPU back ends). A value that lives across a barrier is
// kept in an array with one element per thread, as is every private array;
// the rest stays in registers, and LLVM optimizes each region's loop as it
// does a barrier-free block entry's.
//
// Threads need not wait at the same barrier (some may have ended, some may
// wait at another): each thread's state says where it waits, and a round
// runs every region some thread waits at, in the order of their barriers,
// each over the threads waiting there, as the coroutines of
// host_barrier_regions.h resume them from whichever barrier they wait at.
// The reducing barriers (syncthreads_count/_and/_or) reduce over all the
// threads that wait, as there.
//
// Most kernels' threads wait together, though: every branch that sends
// threads different ways joins again before the next barrier, but for the
// threads that fail an index check, which end (host_region_uniformity.h).
// Then a round runs the one region they all wait at, over every thread
// that has not ended, with no state to ask; a value that every thread
// holds alike across a barrier (a tree's step) is one variable for the
// block; and the region's code comes in copies for what the round decides
// before it runs, such as the threads on either side of `tid < step`
// (host_region_specialization.h), which the optimizer can then vectorize
// and empty.
//
// Either way the threads run in the order fibers would run them: the one
// that completed the barrier first, then the others in the order they
// reached it.
//
// Kernels this does not take run as those coroutines: kernels compiled
// with opt=0, with private memory whose size is not known when they are
// compiled, with more than 62 barriers, or keeping more than
// maxRegionLoopSlotBytes per thread across barriers (large local arrays).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Function.h>

#include <cstdint>

namespace kiln::backend {

/// The most bytes a thread may keep across barriers in region loops. Larger
/// arrays come from the engine (KilnCpuServices::allocateFrame), once per
/// block: 4 MiB for a block of 1024 threads at most.
inline constexpr uint64_t maxRegionLoopSlotBytes = 4096;
/// Up to this many bytes per thread, the arrays are on the stack of the
/// thread that runs the block, which may be the launching thread (64 KiB
/// for the 512 threads it runs at most).
inline constexpr uint64_t maxStackSlotBytes = 128;

/// The block function of `loopBody`, a kernel body as the block entry's loop
/// takes it ((thread, threadIdx.x, .y, .z, laneId, parameters...), every
/// call inlined, see specializeForThreadLoop): (thread, parameters...) ->
/// void, running every thread of the block `thread` describes region by
/// region. It sets KILN_THREAD_REGION_LOOPS in the thread's flags, so that
/// an index error ends only its thread. `loopBody` is erased either way.
/// Null when the kernel does not fit (see above).
llvm::Function *makeRegionLoops(llvm::Function *loopBody);

} // namespace kiln::backend
