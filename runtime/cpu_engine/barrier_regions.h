//===- runtime/cpu_engine/barrier_regions.h - Threads between barriers -*- C++ -*-===//
//
// Runs the threads of one block whose kernel waits only at block barriers.
// The compiler made each thread a coroutine that returns at every barrier
// (KilnCpuRegionStart in module/cpu_kernel_abi.h), with
// what lives across the barrier in a frame this class allocates, and a
// round function that resumes a list of threads in a loop (KilnCpuRegionRound).
// Between barriers a thread is code inlined into that loop: no stack of its
// own, no context switch, no call.
//
// The order is the fiber scheduler's, so that both ways of running a block
// give the same results even where threads race. Its FIFO run queue is
// empty whenever a barrier completes (every live thread waits there), so
// the threads run in rounds: the first in thread order, each next one in
// the order the threads arrived at the barrier, except that the thread that
// completed it (the last to arrive) goes on first. A thread that ends stops
// counting for the barriers still to come.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kiln::cpu_engine {

class BarrierRegions {
public:
  /// Runs every thread of the block `prototype` describes to its end.
  /// `flags` are KilnRegionFlags.
  void run(const KilnCpuThread &prototype, void *const *args, KilnCpuRegionStart start,
           KilnCpuRegionRound round, uint32_t flags);

  /// Whether run() is running threads (the services of a thread that
  /// fails return to it instead of leaving the block).
  bool running() const { return active; }
  /// After a longjmp out of run().
  void abandoned() { active = false; }

  /// `bytes` of frame for a thread of the running block, or of arrays for
  /// a block entry's region loops, aligned to `alignment`; null when memory
  /// is exhausted. Freed when the next block starts (startBlock()).
  void *allocate(uint64_t bytes, uint64_t alignment);
  /// A block entry starts: what allocate() gave is free again.
  void startBlock() {
    chunkInUse = 0;
    bytesUsed = 0;
  }

private:
  /// Gives `threads` one KilnCpuThread per thread of the block `prototype`
  /// describes; true when it made them anew.
  bool prepareThreads(const KilnCpuThread &prototype);
  /// Sets a frame aside for each thread, as large as the largest that
  /// allocate() was asked for: after the first block of a launch, a thread
  /// starts without asking.
  void provideFrames(bool threadsChanged);

  struct Chunk {
    std::unique_ptr<std::byte[]> bytes;
    size_t size = 0;
  };
  std::vector<Chunk> chunks;
  size_t chunkInUse = 0;
  size_t bytesUsed = 0;      // of chunks[chunkInUse]
  uint64_t largestFrame = 0; // that allocate() gave

  std::unique_ptr<std::byte[]> frames; // frameStride bytes a thread, from alignedFrames
  std::byte *alignedFrames = nullptr;
  uint64_t frameStride = 0;
  size_t frameCount = 0;

  bool active = false;
  std::vector<KilnCpuThread> threads;
  KilnCpuThread lastLaunch{}; // the prototype `threads` were made from, blockIdx 0
  std::vector<void *> handles;
  std::vector<uint32_t> order;   // the threads to run, in order
  std::vector<uint32_t> arrived; // those of them that reached the barrier
};

} // namespace kiln::cpu_engine
