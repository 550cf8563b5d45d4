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

namespace kiln::cpu_engine {

/// Shared memory is 16-byte aligned, and so is the dynamic part after the
/// static arrays.
inline constexpr size_t sharedAlignment = 16;

/// The bytes of `image`'s static shared arrays, padded to where the dynamic
/// part starts.
inline size_t paddedStaticSharedBytes(const KernelImage &image) {
  return (size_t(image.staticSharedBytes) + sharedAlignment - 1) / sharedAlignment *
         sharedAlignment;
}

/// blockIdx of block number `block` (x fastest, then y, z) of `grid`.
inline Dim3 blockIndex(const Dim3 &grid, uint64_t block) {
  return Dim3{static_cast<uint32_t>(block % grid.x), static_cast<uint32_t>(block / grid.x % grid.y),
              static_cast<uint32_t>(block / (uint64_t(grid.x) * grid.y))};
}

class BlockRunner {
public:
  explicit BlockRunner(const EngineOptions &options);
  ~BlockRunner();
  BlockRunner(const BlockRunner &) = delete;
  BlockRunner &operator=(const BlockRunner &) = delete;

  /// Runs blocks `range` (numbered x fastest, then y, z) of `job` in order,
  /// a grid row's blocks as one run where the kernel takes runs, until one
  /// is to be skipped (then so are all after it).
  void runBlocks(LaunchJob &job, BlockRange range);

  LaunchJob &job() const { return *currentJob; }
  uint64_t block() const { return currentBlock; }
  BarrierRegions &barrierRegions() { return regions; }

  /// Leaves the running block entry, skipping its remaining threads.
  [[noreturn]] void abandonBlockEntry();

private:
  /// Runs block `block` at `blockIdx`, or the run of up to `runLimit`
  /// blocks from it along x that its block entry takes; returns how many ran.
  uint32_t run(LaunchJob &job, uint64_t block, const Dim3 &blockIdx, uint32_t runLimit);
  /// Whether the kernel's blocks run through its block entry: it has one,
  /// and its local arrays fit the worker's stack.
  bool runsBlockEntry(const KernelImage &image) const {
    return image.blockEntry && image.localBytesPerThread <= blockEntryLocalLimit;
  }
  /// How many blocks from `blockIdx` the block entry may take at once.
  uint32_t runLimitAt(const LaunchJob &job, const Dim3 &blockIdx, uint64_t blocksLeft) const;
  /// False when the entry was left early (abandonBlockEntry).
  bool runBlockEntry(KilnCpuThread &thread);
  void finishCutRun(KilnCpuThread &thread, uint32_t firstX, uint32_t length);
  /// What every thread of `job`'s launch shares: its dimensions, flags,
  /// interrupt word, dynamic shared size and this runner; the indices,
  /// shared memory and services are the caller's to set.
  KilnCpuThread launchThread(const LaunchJob &job);
  void runFibers(const KilnCpuThread &prototype);
  /// Whether a block's fibers may go on after `outcome` (they completed, or
  /// wait at the grid barrier); else records why not for the launch.
  bool fibersWentOn(FiberScheduler::Outcome outcome, const Dim3 &blockIdx,
                    const std::string &problem);
  /// Runs every block of a cooperative launch at once (cooperative_grid.cpp).
  void runCooperativeGrid(LaunchJob &job);

  std::byte *sharedMemory;
  const size_t fiberStackBytes;
  FiberScheduler scheduler;
  BarrierRegions regions;
  const size_t blockEntryLocalLimit; // larger local arrays run as fibers
  LaunchJob *currentJob = nullptr;
  uint64_t currentBlock = 0;
  jmp_buf blockEntryExit;
};

} // namespace kiln::cpu_engine
