//===- runtime/cpu_engine/block_runner.cpp - One block on a worker --------===//

#include "runtime/cpu_engine/block_runner.h"

#include "runtime/cpu_engine/services.h"

#include <cstring>
#include <new>

namespace kiln::cpu {

namespace {

constexpr size_t sharedAlignment = 16;
// Static shared memory is padded to 16 bytes before the dynamic part.
constexpr size_t sharedBufferBytes = DeviceLimits::maxSharedBytesPerBlock + sharedAlignment;
// What a worker's stack keeps for everything but a kernel's local arrays.
constexpr size_t stackReserve = size_t(1) << 20;

std::string blockName(const KilnCpuThread &thread) {
  return "(" + std::to_string(thread.blockIdx[0]) + ", " + std::to_string(thread.blockIdx[1]) +
         ", " + std::to_string(thread.blockIdx[2]) + ")";
}

} // namespace

BlockRunner::BlockRunner(const EngineOptions &options)
    : sharedMemory(static_cast<std::byte *>(
          ::operator new(sharedBufferBytes, std::align_val_t(sharedAlignment)))),
      scheduler(options.fiberStackBytes),
      blockEntryLocalLimit(
          options.workerStackBytes > stackReserve ? options.workerStackBytes - stackReserve : 0) {}

BlockRunner::~BlockRunner() {
  ::operator delete(sharedMemory, std::align_val_t(sharedAlignment));
}

void BlockRunner::runBlocks(LaunchJob &job, BlockRange range) {
  // Divisions only for the first block: 64-bit ones cost tens of cycles
  // each, which adds up over grids of many small blocks.
  const Dim3 &grid = job.config.grid;
  Dim3 index;
  index.x = static_cast<uint32_t>(range.begin % grid.x);
  index.y = static_cast<uint32_t>(range.begin / grid.x % grid.y);
  index.z = static_cast<uint32_t>(range.begin / (uint64_t(grid.x) * grid.y));
  for (uint64_t block = range.begin; block < range.end; ++block) {
    // Blocks without loops never read the interrupt word themselves.
    if (*job.interruptWord())
      job.pollStop();
    if (!job.shouldRun(block))
      return;
    run(job, block, index);
    if (++index.x == grid.x) {
      index.x = 0;
      if (++index.y == grid.y) {
        index.y = 0;
        ++index.z;
      }
    }
  }
}

void BlockRunner::run(LaunchJob &job, uint64_t block, const Dim3 &blockIdx) {
  currentJob = &job;
  currentBlock = block;
  const LaunchConfig &config = job.config;
  const KernelImage &image = job.image;

  KilnCpuThread thread{};
  thread.blockIdx[0] = blockIdx.x;
  thread.blockIdx[1] = blockIdx.y;
  thread.blockIdx[2] = blockIdx.z;
  thread.blockDim[0] = config.block.x;
  thread.blockDim[1] = config.block.y;
  thread.blockDim[2] = config.block.z;
  thread.gridDim[0] = config.grid.x;
  thread.gridDim[1] = config.grid.y;
  thread.gridDim[2] = config.grid.z;
  thread.warpSize = DeviceLimits::warpSize;
  thread.flags = config.threadFlags;
  thread.interrupt = job.interruptWord();

  // Zeroed, so that results never depend on what an earlier block left.
  // validateLaunch() bounds the static size by the buffer's, so this
  // cannot overflow.
  size_t staticBytes =
      (size_t(image.staticSharedBytes) + sharedAlignment - 1) / sharedAlignment * sharedAlignment;
  size_t sharedBytes = staticBytes + config.dynamicSharedBytes;
  if (sharedBytes)
    std::memset(sharedMemory, 0, sharedBytes);
  thread.sharedMemory = sharedMemory;
  thread.dynamicSharedMemory = sharedMemory + staticBytes;
  thread.dynamicSharedBytes = config.dynamicSharedBytes;
  thread.engine = this;

  // A block entry runs on the worker's stack; a kernel whose local arrays
  // would not fit there runs its threads as fibers, whose stacks grow with
  // localBytesPerThread.
  if (image.blockEntry && image.localBytesPerThread <= blockEntryLocalLimit) {
    thread.services = &blockEntryServices;
    regions.startBlock();
    runBlockEntry(thread);
  } else {
    thread.services = &fiberServices;
    runFibers(thread);
  }
}

void BlockRunner::runBlockEntry(KilnCpuThread &thread) {
  // A raise (or an ABI violation) in the block entry comes back here through
  // abandonBlockEntry(). Generated code holds no resources to release, and
  // nothing below reads `thread` after a return through longjmp.
  if (_setjmp(blockEntryExit) == 0)
    currentJob->image.blockEntry(&thread, currentJob->args);
  else
    regions.abandoned();
}

void BlockRunner::abandonBlockEntry() {
  _longjmp(blockEntryExit, 1);
}

void BlockRunner::runFibers(const KilnCpuThread &prototype) {
  LaunchJob &launch = *currentJob;
  std::string problem;
  switch (scheduler.run(prototype, launch.image.threadEntry, launch.args,
                        launch.image.localBytesPerThread, problem)) {
  case FiberScheduler::Outcome::Completed:
    return;
  case FiberScheduler::Outcome::Deadlocked:
    launch.recordFailure(LaunchErrorKind::Deadlock, currentBlock,
                         std::string("deadlock in kernel '") + launch.kernelName() + "', block " +
                             blockName(prototype) + ": " + problem);
    return;
  case FiberScheduler::Outcome::NoStacks:
    launch.recordFailure(LaunchErrorKind::ResourceFailure, currentBlock,
                         std::string("cannot run kernel '") + launch.kernelName() +
                             "': " + problem);
    return;
  }
}

} // namespace kiln::cpu
