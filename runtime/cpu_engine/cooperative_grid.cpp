//===- runtime/cpu_engine/cooperative_grid.cpp - All blocks at once -------===//
//
// BlockRunner::runCooperativeGrid. A kernel that syncs the grid needs every
// block of it resident until the last one arrives, so a cooperative launch
// runs all its blocks on one worker, each block's threads as fibers of the
// block's own scheduler, with the block's own shared memory. The blocks run
// in order, each until every live thread of it waits at the grid barrier or
// has exited; once all have, the grid barrier is passed and they run on,
// round after round. Exited threads count as arrived, as at syncthreads.
// Rounds visit the blocks in order, so results depend on the kernel alone,
// as everywhere in the engine.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/block_runner.h"
#include "runtime/cpu_engine/services.h"

#include <cstring>
#include <new>

namespace kiln::cpu {

namespace {

constexpr size_t sharedAlignment = 16;

size_t roundUp(size_t bytes) {
  return (bytes + sharedAlignment - 1) / sharedAlignment * sharedAlignment;
}

/// The shared memory of every block of the grid, zeroed.
class GridSharedMemory {
public:
  GridSharedMemory(size_t blockBytes, uint64_t blocks)
      : stride(roundUp(blockBytes)), bytes(stride * blocks),
        base(bytes ? static_cast<std::byte *>(
                         ::operator new(bytes, std::align_val_t(sharedAlignment), std::nothrow))
                   : nullptr) {
    if (base)
      std::memset(base, 0, bytes);
  }
  ~GridSharedMemory() {
    if (base)
      ::operator delete(base, std::align_val_t(sharedAlignment));
  }
  GridSharedMemory(const GridSharedMemory &) = delete;
  GridSharedMemory &operator=(const GridSharedMemory &) = delete;

  bool failed() const { return bytes && !base; }
  std::byte *of(uint64_t block) const { return base ? base + stride * block : nullptr; }

private:
  size_t stride, bytes;
  std::byte *base;
};

std::string blockName(const Dim3 &index) {
  return "(" + std::to_string(index.x) + ", " + std::to_string(index.y) + ", " +
         std::to_string(index.z) + ")";
}

} // namespace

void BlockRunner::runCooperativeGrid(LaunchJob &job) {
  currentJob = &job;
  const LaunchConfig &config = job.config;
  const KernelImage &image = job.image;
  const uint64_t blocks = job.blockCount();
  const size_t staticBytes = roundUp(size_t(image.staticSharedBytes));
  GridSharedMemory shared(staticBytes + config.dynamicSharedBytes, blocks);
  if (shared.failed()) {
    job.recordFailure(LaunchErrorKind::ResourceFailure, 0,
                      std::string("cannot run kernel '") + job.kernelName() +
                          "': out of memory for the shared memory of " + std::to_string(blocks) +
                          " resident blocks");
    return;
  }

  KilnCpuThread prototype{};
  prototype.blockDim[0] = config.block.x;
  prototype.blockDim[1] = config.block.y;
  prototype.blockDim[2] = config.block.z;
  prototype.gridDim[0] = config.grid.x;
  prototype.gridDim[1] = config.grid.y;
  prototype.gridDim[2] = config.grid.z;
  prototype.warpSize = DeviceLimits::warpSize;
  prototype.flags = config.threadFlags;
  prototype.interrupt = job.interruptWord();
  prototype.dynamicSharedBytes = config.dynamicSharedBytes;
  prototype.services = &fiberServices;
  prototype.engine = this;

  std::vector<std::unique_ptr<FiberScheduler>> schedulers(blocks);
  std::vector<FiberScheduler::Outcome> outcomes(blocks, FiberScheduler::Outcome::Completed);
  // Whether block `block` may go on; records why not.
  auto settled = [&](uint64_t block, const Dim3 &index, const std::string &problem) {
    switch (outcomes[block]) {
    case FiberScheduler::Outcome::Completed:
    case FiberScheduler::Outcome::AtGridBarrier:
      return true;
    case FiberScheduler::Outcome::Deadlocked:
      job.recordFailure(LaunchErrorKind::Deadlock, block,
                        std::string("deadlock in kernel '") + job.kernelName() + "', block " +
                            blockName(index) + ": " + problem);
      return false;
    case FiberScheduler::Outcome::NoStacks:
      job.recordFailure(LaunchErrorKind::ResourceFailure, block,
                        std::string("cannot run kernel '") + job.kernelName() + "': " + problem);
      return false;
    }
    return false;
  };
  auto indexOf = [&](uint64_t block) {
    return Dim3{static_cast<uint32_t>(block % config.grid.x),
                static_cast<uint32_t>(block / config.grid.x % config.grid.y),
                static_cast<uint32_t>(block / (uint64_t(config.grid.x) * config.grid.y))};
  };
  // A launch that failed or was interrupted ends here, its fibers
  // abandoned: they hold nothing but their stacks.
  auto stopped = [&] {
    if (*job.interruptWord())
      job.pollStop();
    return !job.shouldRun(0);
  };

  bool atBarrier = false;
  for (uint64_t block = 0; block < blocks; ++block) {
    if (stopped())
      return;
    Dim3 index = indexOf(block);
    KilnCpuThread thread = prototype;
    thread.blockIdx[0] = index.x;
    thread.blockIdx[1] = index.y;
    thread.blockIdx[2] = index.z;
    thread.sharedMemory = shared.of(block);
    thread.dynamicSharedMemory = shared.of(block) ? shared.of(block) + staticBytes : nullptr;
    schedulers[block] = std::make_unique<FiberScheduler>(fiberStackBytes);
    currentBlock = block;
    std::string problem;
    outcomes[block] = schedulers[block]->run(thread, image.threadEntry, job.args,
                                             image.localBytesPerThread, problem);
    if (!settled(block, index, problem))
      return;
    atBarrier |= outcomes[block] == FiberScheduler::Outcome::AtGridBarrier;
  }
  while (atBarrier) {
    atBarrier = false;
    for (uint64_t block = 0; block < blocks; ++block) {
      if (outcomes[block] != FiberScheduler::Outcome::AtGridBarrier)
        continue;
      if (stopped())
        return;
      currentBlock = block;
      std::string problem;
      outcomes[block] = schedulers[block]->passGridBarrier(problem);
      if (!settled(block, indexOf(block), problem))
        return;
      atBarrier |= outcomes[block] == FiberScheduler::Outcome::AtGridBarrier;
    }
  }
}

} // namespace kiln::cpu
