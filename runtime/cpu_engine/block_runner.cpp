//===- runtime/cpu_engine/block_runner.cpp - One block on a worker --------===//

#include "runtime/cpu_engine/block_runner.h"

#include "runtime/cpu_engine/services.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace kiln::cpu_engine {

namespace {

// Static shared memory is padded to 16 bytes before the dynamic part.
constexpr size_t sharedBufferBytes = DeviceLimits::maxSharedBytesPerBlock + sharedAlignment;
// What a worker's stack keeps for everything but a kernel's local arrays.
constexpr size_t stackReserve = size_t(1) << 20;

std::string blockName(const Dim3 &index) {
  return "(" + std::to_string(index.x) + ", " + std::to_string(index.y) + ", " +
         std::to_string(index.z) + ")";
}

} // namespace

BlockRunner::BlockRunner(const EngineOptions &options)
    : sharedMemory(static_cast<std::byte *>(
          ::operator new(sharedBufferBytes, std::align_val_t(sharedAlignment)))),
      fiberStackBytes(options.fiberStackBytes), scheduler(options.fiberStackBytes),
      blockEntryLocalLimit(
          options.workerStackBytes > stackReserve ? options.workerStackBytes - stackReserve : 0) {}

BlockRunner::~BlockRunner() {
  ::operator delete(sharedMemory, std::align_val_t(sharedAlignment));
}

void BlockRunner::runBlocks(LaunchJob &job, BlockRange range) {
  if (job.image.cooperative) { // the whole grid: its chunk (see LaunchJob)
    runCooperativeGrid(job);
    return;
  }
  // Divisions only for the first block: 64-bit ones cost tens of cycles
  // each, which adds up over grids of many small blocks.
  const Dim3 &grid = job.config.grid;
  Dim3 index = blockIndex(grid, range.begin);
  for (uint64_t block = range.begin; block < range.end;) {
    // Blocks without loops never read the interrupt word themselves.
    if (*job.interruptWord())
      job.pollStop();
    if (!job.shouldRun(block))
      return;
    uint32_t ran = run(job, block, index, runLimitAt(job, index, range.end - block));
    block += ran;
    index.x += ran;
    if (index.x == grid.x) {
      index.x = 0;
      if (++index.y == grid.y) {
        index.y = 0;
        ++index.z;
      }
    }
  }
}

uint32_t BlockRunner::runLimitAt(const LaunchJob &job, const Dim3 &blockIdx,
                                 uint64_t blocksLeft) const {
  // Blocks of a run share nothing but global memory: each block's shared
  // memory must start zeroed and its own.
  if (!runsBlockEntry(job.image) || job.image.staticSharedBytes || job.config.dynamicSharedBytes)
    return 1;
  return static_cast<uint32_t>(
      std::min<uint64_t>({blocksLeft, job.config.grid.x - blockIdx.x, KILN_CPU_MAX_BLOCK_RUN}));
}

uint32_t BlockRunner::run(LaunchJob &job, uint64_t block, const Dim3 &blockIdx, uint32_t runLimit) {
  currentJob = &job;
  currentBlock = block;
  const LaunchConfig &config = job.config;
  const KernelImage &image = job.image;

  KilnCpuThread thread = launchThread(job);
  thread.blockIdx[0] = blockIdx.x;
  thread.blockIdx[1] = blockIdx.y;
  thread.blockIdx[2] = blockIdx.z;

  // Zeroed, so that results never depend on what an earlier block left.
  // validateLaunch() bounds the static size by the buffer's, so this
  // cannot overflow.
  size_t staticBytes = paddedStaticSharedBytes(image);
  size_t sharedBytes = staticBytes + config.dynamicSharedBytes;
  if (sharedBytes)
    std::memset(sharedMemory, 0, sharedBytes);
  thread.sharedMemory = sharedMemory;
  thread.dynamicSharedMemory = sharedMemory + staticBytes;

  // A block entry runs on the worker's stack; a kernel whose local arrays
  // would not fit there runs its threads as fibers, whose stacks grow with
  // localBytesPerThread.
  if (runsBlockEntry(image)) {
    thread.services = &blockEntryServices;
    thread.blockRunLimit = runLimit;
    thread.blockRunLength = 1;
    thread.runGlobalX = KILN_NO_GLOBAL_X;
    regions.startBlock();
    bool finished = runBlockEntry(thread);
    uint32_t length = thread.blockRunLength;
    if (!finished && length > 1)
      finishCutRun(thread, blockIdx.x, length);
    return length;
  }
  thread.services = &fiberServices;
  runFibers(thread);
  return 1;
}

bool BlockRunner::runBlockEntry(KilnCpuThread &thread) {
  // A raise (or an ABI violation) in the block entry comes back here through
  // abandonBlockEntry(). Generated code holds no resources to release.
  // `thread` belongs to the caller, so its fields keep what the entry
  // stored in them before it called the service that left.
  if (_setjmp(blockEntryExit) == 0) {
    currentJob->image.blockEntry(&thread, currentJob->args);
    return true;
  }
  regions.abandoned();
  return false;
}

void BlockRunner::finishCutRun(KilnCpuThread &thread, uint32_t firstX, uint32_t length) {
  // The run went row by row across its blocks until a thread failed: blocks
  // before the failing one have finished that row, the ones after it have
  // not started it. Each goes on alone from there, as if the blocks had run
  // one after the other; the failing block ends, as a block does.
  const uint32_t failedX = thread.blockIdx[0];
  const uint32_t failedRow = thread.threadIdx[1] + thread.blockDim[1] * thread.threadIdx[2];
  const uint32_t rows = thread.blockDim[1] * thread.blockDim[2];
  const Dim3 &grid = currentJob->config.grid;
  for (uint32_t x = firstX; x < firstX + length; ++x) {
    uint32_t row = x < failedX ? failedRow + 1 : failedRow;
    if (x == failedX || row == rows)
      continue;
    uint64_t block =
        x + uint64_t(grid.x) * (thread.blockIdx[1] + uint64_t(grid.y) * thread.blockIdx[2]);
    if (!currentJob->shouldRun(block))
      return;
    thread.blockIdx[0] = x;
    thread.threadIdx[0] = 0;
    thread.threadIdx[1] = row % thread.blockDim[1];
    thread.threadIdx[2] = row / thread.blockDim[1];
    thread.laneId = 0;
    thread.blockRunLimit = 1;
    thread.blockRunLength = 1;
    thread.runGlobalX = KILN_NO_GLOBAL_X;
    currentBlock = block;
    regions.startBlock();
    runBlockEntry(thread);
  }
}

void BlockRunner::abandonBlockEntry() {
  _longjmp(blockEntryExit, 1);
}

KilnCpuThread BlockRunner::launchThread(const LaunchJob &job) {
  const LaunchConfig &config = job.config;
  KilnCpuThread thread{};
  thread.blockDim[0] = config.block.x;
  thread.blockDim[1] = config.block.y;
  thread.blockDim[2] = config.block.z;
  thread.gridDim[0] = config.grid.x;
  thread.gridDim[1] = config.grid.y;
  thread.gridDim[2] = config.grid.z;
  thread.warpSize = DeviceLimits::warpSize;
  thread.flags = config.threadFlags;
  thread.interrupt = job.interruptWord();
  thread.dynamicSharedBytes = config.dynamicSharedBytes;
  thread.engine = this;
  return thread;
}

void BlockRunner::runFibers(const KilnCpuThread &prototype) {
  LaunchJob &launch = *currentJob;
  std::string problem;
  FiberScheduler::Outcome outcome = scheduler.run(prototype, launch.image.threadEntry, launch.args,
                                                  launch.image.localBytesPerThread, problem);
  if (outcome == FiberScheduler::Outcome::AtGridBarrier) { // syncGrid refuses outside them
    launch.recordFailure(LaunchErrorKind::Internal, currentBlock,
                         std::string("kernel '") + launch.kernelName() +
                             "' waits at a grid barrier outside a cooperative launch");
    return;
  }
  fibersWentOn(outcome, {prototype.blockIdx[0], prototype.blockIdx[1], prototype.blockIdx[2]},
               problem);
}

bool BlockRunner::fibersWentOn(FiberScheduler::Outcome outcome, const Dim3 &blockIdx,
                               const std::string &problem) {
  LaunchJob &launch = *currentJob;
  switch (outcome) {
  case FiberScheduler::Outcome::Completed:
  case FiberScheduler::Outcome::AtGridBarrier:
    return true;
  case FiberScheduler::Outcome::Deadlocked:
    launch.recordFailure(LaunchErrorKind::Deadlock, currentBlock,
                         std::string("deadlock in kernel '") + launch.kernelName() + "', block " +
                             blockName(blockIdx) + ": " + problem);
    return false;
  case FiberScheduler::Outcome::NoStacks:
    launch.recordFailure(LaunchErrorKind::ResourceFailure, currentBlock,
                         std::string("cannot run kernel '") + launch.kernelName() +
                             "': " + problem);
    return false;
  }
  return false;
}

} // namespace kiln::cpu_engine
