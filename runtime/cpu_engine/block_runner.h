//===- runtime/cpu_engine/block_runner.h - One block on a worker -*- C++ -*-===//
//
// Each worker owns a BlockRunner: the block's shared memory, the fibers or
// barrier regions its threads run as, and the way out of a block entry that must stop early.
// Generated code finds it through KilnCpuThread::engine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cpu_engine/barrier_regions.h"
#include "runtime/cpu_engine/engine.h"
#include "runtime/cpu_engine/fiber_scheduler.h"
#include "runtime/cpu_engine/launch_job.h"

#include <cstddef>
#include <memory>
#include <setjmp.h>

namespace kiln::cpu {

class BlockRunner {
public:
  explicit BlockRunner(const EngineOptions &options);
  ~BlockRunner();
  BlockRunner(const BlockRunner &) = delete;
  BlockRunner &operator=(const BlockRunner &) = delete;

  /// Runs blocks `range` (numbered x fastest, then y, z) of `job` in order,
  /// until one is to be skipped (then so are all after it).
  void runBlocks(LaunchJob &job, BlockRange range);

  LaunchJob &job() const { return *currentJob; }
  uint64_t block() const { return currentBlock; }
  FiberScheduler &fibers() { return scheduler; }
  BarrierRegions &barrierRegions() { return regions; }

  /// Leaves the running block entry, skipping its remaining threads.
  [[noreturn]] void abandonBlockEntry();

private:
  void run(LaunchJob &job, uint64_t block, const Dim3 &blockIdx);
  void runBlockEntry(KilnCpuThread &thread);
  void runFibers(const KilnCpuThread &prototype);

  std::byte *sharedMemory;
  FiberScheduler scheduler;
  BarrierRegions regions;
  const size_t blockEntryLocalLimit; // larger local arrays run as fibers
  LaunchJob *currentJob = nullptr;
  uint64_t currentBlock = 0;
  jmp_buf blockEntryExit;
};

} // namespace kiln::cpu
