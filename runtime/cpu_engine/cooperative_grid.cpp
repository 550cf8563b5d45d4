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

namespace kiln::cpu_engine {

namespace {

/// The shared memory of every block of the grid, zeroed.
class GridSharedMemory {
public:
  GridSharedMemory(size_t blockBytes, uint64_t blocks)
      : stride((blockBytes + sharedAlignment - 1) / sharedAlignment * sharedAlignment),
        bytes(stride * blocks),
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

} // namespace

void BlockRunner::runCooperativeGrid(LaunchJob &job) {
  currentJob = &job;
  const LaunchConfig &config = job.config;
  const KernelImage &image = job.image;
  const uint64_t blocks = job.blockCount();
  const size_t staticBytes = paddedStaticSharedBytes(image);
  GridSharedMemory shared(staticBytes + config.dynamicSharedBytes, blocks);
  if (shared.failed()) {
    job.recordFailure(LaunchErrorKind::ResourceFailure, 0,
                      std::string("cannot run kernel '") + job.kernelName() +
                          "': out of memory for the shared memory of " + std::to_string(blocks) +
                          " resident blocks");
    return;
  }

  KilnCpuThread prototype = launchThread(job);
  prototype.services = &fiberServices;

  std::vector<std::unique_ptr<FiberScheduler>> schedulers(blocks);
  std::vector<FiberScheduler::Outcome> outcomes(blocks, FiberScheduler::Outcome::Completed);
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
    Dim3 index = blockIndex(config.grid, block);
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
    if (!fibersWentOn(outcomes[block], index, problem))
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
      if (!fibersWentOn(outcomes[block], blockIndex(config.grid, block), problem))
        return;
      atBarrier |= outcomes[block] == FiberScheduler::Outcome::AtGridBarrier;
    }
  }
}

} // namespace kiln::cpu_engine
