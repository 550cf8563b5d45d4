//===- runtime/cpu_engine/services.cpp - What generated code calls --------===//

#include "runtime/cpu_engine/services.h"

#include "runtime/cpu_engine/block_runner.h"
#include "runtime/cpu_engine/print_output.h"

#include <chrono>
#include <thread>

namespace kiln::cpu_engine {

namespace {

BlockRunner &runnerOf(KilnCpuThread *thread) {
  return *static_cast<BlockRunner *>(thread->engine);
}

FiberThread &fiberOf(KilnCpuThread *thread) {
  return *reinterpret_cast<FiberThread *>(thread);
}

/// The fiber's own scheduler: the runner's, or in a cooperative launch the
/// one of the fiber's block.
FiberScheduler &schedulerOf(KilnCpuThread *thread) {
  return *fiberOf(thread).scheduler;
}

uint64_t linearThread(const KilnCpuThread &thread) {
  return thread.threadIdx[0] +
         uint64_t(thread.blockDim[0]) *
             (thread.threadIdx[1] + uint64_t(thread.blockDim[1]) * thread.threadIdx[2]);
}

// Shared by both tables.

void printLine(KilnCpuThread *thread, const KilnPrintItem *items, uint32_t count) {
  runnerOf(thread).job().output.writeLine(formatPrintLine(items, count));
}

/// From the thread's own blockIdx, not the block the runner entered: in a
/// run of blocks, blockIndexError derives the failing thread's.
uint64_t linearBlock(const KilnCpuThread &thread) {
  return thread.blockIdx[0] +
         uint64_t(thread.gridDim[0]) *
             (thread.blockIdx[1] + uint64_t(thread.gridDim[1]) * thread.blockIdx[2]);
}

void recordException(KilnCpuThread *thread, const char *className, const char *message) {
  runnerOf(thread).job().recordException(linearBlock(*thread), linearThread(*thread), *thread,
                                         className, message);
}

/// "index 10 is out of bounds for axis 0 with size 10 (array 'a' of shape
/// (10,), in kernel 'k' at kernels.py:7)": NumPy's words, then what the
/// kernel indexed and where.
std::string indexErrorMessage(KilnCpuThread *thread, const char *array, uint32_t site,
                              int64_t index, uint32_t axis, uint32_t rank, const int64_t *shape) {
  std::string shapeText = "(";
  for (uint32_t d = 0; d < rank; ++d)
    shapeText += std::to_string(shape[d]) + (rank == 1 ? "," : d + 1 < rank ? ", " : "");
  shapeText += ")";
  int64_t extent = axis < rank ? shape[axis] : 0;
  std::string message = "index " + std::to_string(index) + " is out of bounds for axis " +
                        std::to_string(axis) + " with size " + std::to_string(extent) + " (" +
                        (array && *array ? array : "an array") + " of shape " + shapeText +
                        ", in kernel '" + runnerOf(thread).job().kernelName() + "'";
  if (const char *location = runnerOf(thread).job().image.site(site); location && *location)
    message += std::string(" at ") + location;
  return message + ")";
}

/// Out of line so that its strings are gone before a block entry's longjmp.
[[gnu::noinline]] void recordIndexError(KilnCpuThread *thread, const char *array, uint32_t site,
                                        int64_t index, uint32_t axis, uint32_t rank,
                                        const int64_t *shape) {
  std::string message = indexErrorMessage(thread, array, site, index, axis, rank, shape);
  recordException(thread, "IndexError", message.c_str());
}

// Fibers.

void fiberSyncthreads(KilnCpuThread *thread) {
  schedulerOf(thread).barrier(fiberOf(thread), BarrierOp::Sync, false);
}

int32_t fiberSyncthreadsReduce(KilnCpuThread *thread, uint32_t mode, int32_t predicate) {
  return schedulerOf(thread).barrier(fiberOf(thread), barrierOpOf(mode), predicate != 0);
}

FiberThread &request(KilnCpuThread *thread, CollectiveKind kind, uint32_t mask) {
  FiberThread &self = fiberOf(thread);
  self.collective = kind;
  self.mask = mask;
  self.mode = 0;
  self.value = 0;
  self.predicate = false;
  return self;
}

void fiberSyncwarp(KilnCpuThread *thread, uint32_t mask) {
  FiberThread &self = request(thread, CollectiveKind::Syncwarp, mask);
  schedulerOf(thread).warpCollective(self);
}

uint64_t fiberShuffle(KilnCpuThread *thread, uint32_t mask, uint32_t mode, uint64_t value,
                      uint32_t lane, uint32_t clamp) {
  FiberThread &self = request(thread, CollectiveKind::Shuffle, mask);
  self.mode = mode;
  self.value = value;
  self.laneOperand = lane;
  self.clamp = clamp;
  schedulerOf(thread).warpCollective(self);
  return self.result;
}

uint32_t fiberVote(KilnCpuThread *thread, uint32_t mask, uint32_t mode, int32_t predicate) {
  FiberThread &self = request(thread, CollectiveKind::Vote, mask);
  self.mode = mode;
  self.predicate = predicate != 0;
  schedulerOf(thread).warpCollective(self);
  return static_cast<uint32_t>(self.result);
}

uint32_t fiberMatchAny(KilnCpuThread *thread, uint32_t mask, uint64_t value) {
  FiberThread &self = request(thread, CollectiveKind::MatchAny, mask);
  self.value = value;
  schedulerOf(thread).warpCollective(self);
  return static_cast<uint32_t>(self.result);
}

uint32_t fiberMatchAll(KilnCpuThread *thread, uint32_t mask, uint64_t value, int32_t *predicate) {
  FiberThread &self = request(thread, CollectiveKind::MatchAll, mask);
  self.value = value;
  schedulerOf(thread).warpCollective(self);
  if (predicate)
    *predicate = self.resultFlag;
  return static_cast<uint32_t>(self.result);
}

uint32_t fiberActiveMask(KilnCpuThread *thread) {
  // The address the kernel calls from stands for the branch it is in: lanes
  // that call from elsewhere do not run this call together on a GPU.
  FiberThread &self = request(thread, CollectiveKind::ActiveMask, 0);
  self.value = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  schedulerOf(thread).warpCollective(self);
  return static_cast<uint32_t>(self.result);
}

void fiberNanosleep(KilnCpuThread *thread, uint32_t nanoseconds) {
  // Let the block's other threads run first: a thread polling a flag that
  // another thread of its block sets would otherwise spin forever.
  if (!schedulerOf(thread).yield(fiberOf(thread)))
    sleepNanoseconds(nanoseconds);
}

void fiberRaise(KilnCpuThread *thread, const char *className, const char *message) {
  recordException(thread, className, message);
  schedulerOf(thread).exit(fiberOf(thread));
}

void fiberExitThread(KilnCpuThread *thread) {
  schedulerOf(thread).exit(fiberOf(thread));
}

void fiberIndexError(KilnCpuThread *thread, const char *array, uint32_t site, int64_t index,
                     uint32_t axis, uint32_t rank, const int64_t *shape) {
  recordIndexError(thread, array, site, index, axis, rank, shape);
  schedulerOf(thread).exit(fiberOf(thread));
}

/// The launch was interrupted (it has recorded that): the thread ends, and
/// the threads waiting for it at a barrier go on to their own next poll.
/// A launch on the calling thread that was only asked to poll goes on.
void fiberInterrupted(KilnCpuThread *thread) {
  if (runnerOf(thread).job().pollStop())
    schedulerOf(thread).exit(fiberOf(thread));
}

/// Only block entries run barrier regions; a thread entry that asks is
/// generated code breaking the ABI.
void fiberMisuse(KilnCpuThread *thread, const char *service) {
  BlockRunner &runner = runnerOf(thread);
  runner.job().recordFailure(LaunchErrorKind::Internal, runner.block(),
                             std::string("kernel '") + runner.job().kernelName() + "' called " +
                                 service + " from a thread entry");
  schedulerOf(thread).exit(fiberOf(thread));
}
void *fiberAllocateFrame(KilnCpuThread *thread, uint64_t, uint64_t) {
  fiberMisuse(thread, "allocateFrame");
  return nullptr;
}
void fiberRunBarrierRegions(KilnCpuThread *thread, void *const *, KilnCpuRegionStart,
                            KilnCpuRegionRound, uint32_t) {
  fiberMisuse(thread, "runBarrierRegions");
}

/// Only a cooperative launch keeps every block resident, so a kernel whose
/// manifest does not say "cooperative" cannot wait for the grid.
void fiberSyncGrid(KilnCpuThread *thread) {
  BlockRunner &runner = runnerOf(thread);
  if (runner.job().image.cooperative) {
    schedulerOf(thread).gridSync(fiberOf(thread));
    return;
  }
  runner.job().recordFailure(LaunchErrorKind::Internal, runner.block(),
                             std::string("kernel '") + runner.job().kernelName() +
                                 "' synchronized the grid, but its image does not declare it "
                                 "cooperative");
  schedulerOf(thread).exit(fiberOf(thread));
}
// Block entries.

/// Out of line so that its strings are gone before the longjmp.
[[gnu::noinline]] void recordMisuse(KilnCpuThread *thread, const char *service, const char *rule) {
  BlockRunner &runner = runnerOf(thread);
  runner.job().recordFailure(LaunchErrorKind::Internal, runner.block(),
                             std::string("kernel '") + runner.job().kernelName() + "' called " +
                                 service + " from its block entry, which must not " + rule);
}

/// Out of line so that its strings are gone before the longjmp.
[[gnu::noinline]] void recordOutOfFrames(KilnCpuThread *thread, uint64_t bytes) {
  BlockRunner &runner = runnerOf(thread);
  runner.job().recordFailure(LaunchErrorKind::ResourceFailure, runner.block(),
                             std::string("cannot run kernel '") + runner.job().kernelName() +
                                 "': out of memory for the " + std::to_string(bytes) +
                                 "-byte state of a thread between barriers");
}
[[noreturn]] void misuse(KilnCpuThread *thread, const char *service,
                         const char *rule = "wait for other threads") {
  recordMisuse(thread, service, rule);
  runnerOf(thread).abandonBlockEntry();
}

void blockSyncthreads(KilnCpuThread *thread) {
  misuse(thread, "syncthreads");
}

int32_t blockSyncthreadsReduce(KilnCpuThread *thread, uint32_t, int32_t) {
  misuse(thread, "syncthreads_count/and/or");
}

void blockSyncwarp(KilnCpuThread *thread, uint32_t) {
  misuse(thread, "syncwarp");
}

void blockSyncGrid(KilnCpuThread *thread) {
  misuse(thread, "syncGrid");
}

uint64_t blockShuffle(KilnCpuThread *thread, uint32_t, uint32_t, uint64_t, uint32_t, uint32_t) {
  misuse(thread, "a warp shuffle");
}

uint32_t blockVote(KilnCpuThread *thread, uint32_t, uint32_t, int32_t) {
  misuse(thread, "a warp vote");
}

uint32_t blockMatchAny(KilnCpuThread *thread, uint32_t, uint64_t) {
  misuse(thread, "match_any_sync");
}

uint32_t blockMatchAll(KilnCpuThread *thread, uint32_t, uint64_t, int32_t *) {
  misuse(thread, "match_all_sync");
}

/// The lanes of the calling thread's warp that exist (none has exited while
/// the loop is still running it).
uint32_t blockActiveMask(KilnCpuThread *thread) {
  uint64_t count = uint64_t(thread->blockDim[0]) * thread->blockDim[1] * thread->blockDim[2];
  uint64_t warpStart = linearThread(*thread) / 32 * 32;
  uint64_t lanes = count - warpStart;
  return lanes >= 32 ? ~0u : (1u << lanes) - 1;
}

void blockNanosleep(KilnCpuThread *, uint32_t nanoseconds) {
  sleepNanoseconds(nanoseconds);
}

void blockRaise(KilnCpuThread *thread, const char *className, const char *message) {
  recordException(thread, className, message);
  runnerOf(thread).abandonBlockEntry();
}

/// As a GPU ends the launch at a bad address, the block's remaining
/// threads do not run. Barrier regions and region loops end just the
/// thread, as fibers do: the others may be waiting for it at a barrier.
void blockIndexError(KilnCpuThread *thread, const char *array, uint32_t site, int64_t index,
                     uint32_t axis, uint32_t rank, const int64_t *shape) {
  // A run of blocks stores only the global x index.
  if (thread->runGlobalX != KILN_NO_GLOBAL_X) {
    thread->blockIdx[0] = static_cast<uint32_t>(thread->runGlobalX / thread->blockDim[0]);
    thread->threadIdx[0] = static_cast<uint32_t>(thread->runGlobalX % thread->blockDim[0]);
  }
  recordIndexError(thread, array, site, index, axis, rank, shape);
  if (!(thread->flags & KILN_THREAD_REGION_LOOPS) && !runnerOf(thread).barrierRegions().running())
    runnerOf(thread).abandonBlockEntry();
}

void blockInterrupted(KilnCpuThread *thread) {
  if (runnerOf(thread).job().pollStop())
    runnerOf(thread).abandonBlockEntry();
}

void *blockAllocateFrame(KilnCpuThread *thread, uint64_t bytes, uint64_t alignment) {
  BlockRunner &runner = runnerOf(thread);
  if (void *frame = runner.barrierRegions().allocate(bytes, alignment))
    return frame;
  recordOutOfFrames(thread, bytes);
  runner.abandonBlockEntry();
}
void blockRunBarrierRegions(KilnCpuThread *thread, void *const *args, KilnCpuRegionStart start,
                            KilnCpuRegionRound round, uint32_t flags) {
  runnerOf(thread).barrierRegions().run(*thread, args, start, round, flags);
}
/// Generated code gives kernels that may end a thread early no block entry:
/// the loop over the block's threads has no way to skip just one.
void blockExitThread(KilnCpuThread *thread) {
  misuse(thread, "exitThread", "end a thread early");
}

} // namespace

const KilnCpuServices fiberServices = {
    .abiVersion = KILN_CPU_ABI_VERSION,
    .reserved = 0,
    .syncthreads = fiberSyncthreads,
    .syncthreadsReduce = fiberSyncthreadsReduce,
    .syncwarp = fiberSyncwarp,
    .shuffle = fiberShuffle,
    .vote = fiberVote,
    .matchAny = fiberMatchAny,
    .matchAll = fiberMatchAll,
    .activeMask = fiberActiveMask,
    .nanosleep = fiberNanosleep,
    .print = printLine,
    .raiseException = fiberRaise,
    .exitThread = fiberExitThread,
    .raiseIndexError = fiberIndexError,
    .interrupted = fiberInterrupted,
    .allocateFrame = fiberAllocateFrame,
    .runBarrierRegions = fiberRunBarrierRegions,
    .syncGrid = fiberSyncGrid,
};

const KilnCpuServices blockEntryServices = {
    .abiVersion = KILN_CPU_ABI_VERSION,
    .reserved = 0,
    .syncthreads = blockSyncthreads,
    .syncthreadsReduce = blockSyncthreadsReduce,
    .syncwarp = blockSyncwarp,
    .shuffle = blockShuffle,
    .vote = blockVote,
    .matchAny = blockMatchAny,
    .matchAll = blockMatchAll,
    .activeMask = blockActiveMask,
    .nanosleep = blockNanosleep,
    .print = printLine,
    .raiseException = blockRaise,
    .exitThread = blockExitThread,
    .raiseIndexError = blockIndexError,
    .interrupted = blockInterrupted,
    .allocateFrame = blockAllocateFrame,
    .runBarrierRegions = blockRunBarrierRegions,
    .syncGrid = blockSyncGrid,
};

void sleepNanoseconds(uint32_t nanoseconds) {
  using Clock = std::chrono::steady_clock;
  constexpr uint32_t maxSleep = 1'000'000;
  constexpr uint32_t spinLimit = 50'000; // below this, an OS sleep overshoots by far
  uint32_t duration = nanoseconds < maxSleep ? nanoseconds : maxSleep;
  if (duration == 0)
    return;
  if (duration >= spinLimit) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(duration));
    return;
  }
  Clock::time_point end = Clock::now() + std::chrono::nanoseconds(duration);
  while (Clock::now() < end)
    std::this_thread::yield();
}

} // namespace kiln::cpu_engine
