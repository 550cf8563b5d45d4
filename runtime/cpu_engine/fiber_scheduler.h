//===- runtime/cpu_engine/fiber_scheduler.h - Threads as fibers -*- C++ -*-===//
//
// Runs the threads of one block as fibers on the calling worker, and
// implements what makes them wait for each other: the block barrier, the
// warp collectives, and the block's part of a grid barrier (see the [Note]
// in engine.h).
//
// Scheduling is a FIFO run queue of fiber ids. A fiber that must wait
// switches straight to the next runnable fiber; when it completes a barrier
// or a warp group, it marks the other members runnable and carries on
// itself. The worker's own context is resumed only when the run queue is
// empty: every thread has exited, every live thread waits at the grid
// barrier (the caller resumes them once the other blocks have arrived too),
// or the block is deadlocked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"
#include "runtime/cpu_engine/barrier_result.h"
#include "runtime/cpu_engine/fiber_context.h"
#include "runtime/cpu_engine/fiber_stack.h"
#include "runtime/cpu_engine/warp_collectives.h"

#include <string>
#include <vector>

namespace kiln::cpu_engine {

class FiberScheduler;

/// One CUDA thread of the running block. Services receive &abi and cast
/// back, so `abi` must stay the first member of a standard-layout struct.
struct FiberThread {
  enum class Wait : uint8_t { None, Barrier, Warp, Grid, Exited };

  KilnCpuThread abi;
  FiberScheduler *scheduler = nullptr;
  uint32_t linearId = 0;
  Wait wait = Wait::None;

  // At a barrier.
  BarrierOp barrierOp = BarrierOp::Sync;
  int32_t barrierResult = 0;

  // At a warp collective: the request, then the result.
  CollectiveKind collective = CollectiveKind::Syncwarp;
  bool predicate = false;
  bool resultFlag = false;
  uint32_t mask = 0;
  uint32_t mode = 0;
  uint32_t laneOperand = 0;
  uint32_t clamp = 0;
  uint64_t value = 0;
  uint64_t result = 0;

  FiberContext context;
};

class FiberScheduler {
public:
  explicit FiberScheduler(size_t baseStackBytes) : baseStackBytes(baseStackBytes) {}
  FiberScheduler(const FiberScheduler &) = delete;
  FiberScheduler &operator=(const FiberScheduler &) = delete;

  enum class Outcome { Completed, AtGridBarrier, Deadlocked, NoStacks };

  /// Runs every thread of the block `prototype` describes (all fields but
  /// threadIdx and laneId set) through `entry`, until all have exited
  /// (Completed) or every live one waits at the grid barrier
  /// (AtGridBarrier). On Deadlocked, `problem` says where each thread waits;
  /// on NoStacks, why stacks could not be had.
  Outcome run(const KilnCpuThread &prototype, KilnCpuKernelEntry entry, void *const *args,
              size_t localBytesPerThread, std::string &problem);
  /// After AtGridBarrier, once the whole grid has arrived: lets the block's
  /// threads go on from the grid barrier, as run() does from their start.
  Outcome passGridBarrier(std::string &problem);

  // The operations below run on the stack of `self`, the running fiber.

  /// syncthreads and its reductions: returns the reduction for `self`'s op.
  int32_t barrier(FiberThread &self, BarrierOp op, bool predicate);
  /// A warp collective whose request is in `self`; leaves the result there.
  /// activemask() is one too: it waits until no other live lane of the warp
  /// is running (each waits or has exited), then gives each lane waiting at
  /// a call site (`value`) the set of lanes waiting at that site, the lanes
  /// a GPU would run through that call together.
  void warpCollective(FiberThread &self);
  /// cuda.cg.this_grid().sync(): waits until run() or passGridBarrier()
  /// has returned AtGridBarrier and passGridBarrier() is called.
  void gridSync(FiberThread &self);
  /// Lets the other runnable fibers run first; false if there were none.
  bool yield(FiberThread &self);
  /// Ends `self` as if its entry had returned.
  [[noreturn]] void exit(FiberThread &self);

private:
  struct Warp {
    uint32_t live = 0;    // lanes that have not exited
    uint32_t pending = 0; // lanes waiting in a collective
  };

  static void fiberMain(void *argument);
  /// Runs the fiber `first` until no fiber is runnable, and says why.
  Outcome runFrom(uint32_t first, std::string &problem);

  void suspend(FiberThread &self);
  void pushRunnable(uint32_t id);
  bool popRunnable(uint32_t &id);
  void releaseBarrier(const FiberThread *running);
  uint32_t groupOf(const FiberThread &thread) const;
  bool tryCompleteGroup(uint32_t warp, uint32_t lane, const FiberThread *running);
  bool tryCompleteActiveMasks(uint32_t warp, const FiberThread *running);
  uint32_t waitingLanes(uint32_t warp) const;
  void retryWarp(uint32_t warp);
  std::string describeWait(const FiberThread &thread) const;
  std::string describeDeadlock() const;

  size_t baseStackBytes;
  FiberStackPool stacks;
  std::vector<FiberThread> threads;
  std::vector<Warp> warps;
  std::vector<uint32_t> runQueue; // ring buffer: every fiber is in it at most once
  uint32_t queueHead = 0, queueSize = 0;
  std::vector<uint32_t> barrierWaiters; // in arrival order
  uint32_t barrierTrue = 0;
  uint32_t liveThreads = 0;
  uint32_t gridWaiters = 0;
  KilnCpuKernelEntry entry = nullptr;
  void *const *args = nullptr;
  FiberContext workerContext;
};

} // namespace kiln::cpu_engine
