//===- runtime/cpu_engine/launch_job.cpp - One launch in flight -----------===//

#include "runtime/cpu_engine/launch_job.h"

#include "runtime/cpu_engine/spin_wait.h"

#include <algorithm>
#include <chrono>

namespace kiln::cpu_engine {

namespace {

uint64_t blocksIn(const Dim3 &grid) {
  return uint64_t(grid.x) * grid.y * grid.z;
}

/// Chunks amortize the pool's lock over small blocks while leaving enough
/// chunks (four per worker) to balance uneven ones.
uint64_t chunkSizeFor(uint64_t blocks, unsigned workers) {
  return std::clamp<uint64_t>(blocks / (uint64_t(workers) * 4), 1, 64);
}

/// Which failure a block reports when it has several.
int severity(LaunchErrorKind kind) {
  switch (kind) {
  case LaunchErrorKind::None:
    return 0;
  case LaunchErrorKind::KernelException:
    return 1;
  case LaunchErrorKind::Deadlock:
    return 2;
  case LaunchErrorKind::Internal:
  case LaunchErrorKind::InvalidConfiguration:
    return 3;
  case LaunchErrorKind::ResourceFailure:
  case LaunchErrorKind::Interrupted:
    return 4;
  }
  return 4;
}

std::string indexList(const uint32_t (&index)[3]) {
  return "[" + std::to_string(index[2]) + ", " + std::to_string(index[1]) + ", " +
         std::to_string(index[0]) + "]";
}

} // namespace

LaunchJob::LaunchJob(const KernelImage &image, const LaunchConfig &config, void *const *args,
                     PrintOutput &output, unsigned workerCount)
    : image(image), config(config), args(args), output(output), totalBlocks(blocksIn(config.grid)),
      // A cooperative grid runs on one worker, all its blocks at once.
      chunkSize(image.cooperative ? totalBlocks : chunkSizeFor(totalBlocks, workerCount)) {}

const char *LaunchJob::kernelName() const {
  return image.name && *image.name ? image.name : "<unnamed kernel>";
}

BlockRange LaunchJob::claim() {
  // Blocks past a failure are handed out all at once, to be skipped.
  uint64_t size = nextBlock >= firstSkipped.load(std::memory_order_relaxed)
                      ? totalBlocks - nextBlock
                      : chunkSize;
  BlockRange range{nextBlock, std::min(totalBlocks, nextBlock + size)};
  nextBlock = range.end;
  return range;
}

void LaunchJob::finishBlocks(uint64_t count) {
  if (finishedBlocks.fetch_add(count, std::memory_order_acq_rel) + count != totalBlocks)
    return;
  // The waiter destroys the job once it has seen `finished` and then held
  // the lock, so nothing here touches the job after unlocking.
  std::lock_guard<std::mutex> lock(mutex);
  finished = true;
  finishedFlag.store(true, std::memory_order_release);
  finishedCondition.notify_one();
}

void LaunchJob::waitUntilFinished(StopCheck stop) {
  // Often enough that Ctrl-C feels immediate, rarely enough to cost nothing.
  constexpr std::chrono::milliseconds pollInterval{20};
  spinUntil([this] { return finishedFlag.load(std::memory_order_acquire); });
  std::unique_lock<std::mutex> lock(mutex);
  while (!finishedCondition.wait_for(lock, pollInterval, [this] { return finished; })) {
    if (!stop.requested || interruptFlag)
      continue;
    // The check may take locks of its own (Python's): not under ours.
    lock.unlock();
    bool stopNow = stop.requested(stop.context);
    if (stopNow)
      interrupt();
    lock.lock();
  }
}

namespace {

constexpr uint32_t interruptedValue = 1;
constexpr uint32_t pollRequestedValue = 2;

} // namespace

void LaunchJob::interrupt() {
  __atomic_store_n(&interruptFlag, interruptedValue, __ATOMIC_RELAXED);
  skipFrom(0);
  std::lock_guard<std::mutex> lock(mutex);
  failureKind = LaunchErrorKind::Interrupted;
  failureBlock = 0;
  failureThread = 0;
  failureMessage = std::string("launch of kernel '") + kernelName() + "' interrupted";
}

void LaunchJob::requestPoll() {
  uint32_t idle = 0;
  __atomic_compare_exchange_n(&interruptFlag, &idle, pollRequestedValue, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

bool LaunchJob::pollStop() {
  uint32_t requested = pollRequestedValue;
  if (__atomic_compare_exchange_n(&interruptFlag, &requested, 0, false, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED) &&
      callerStop.requested && callerStop.requested(callerStop.context))
    interrupt();
  return __atomic_load_n(&interruptFlag, __ATOMIC_RELAXED) == interruptedValue;
}

bool LaunchJob::supersedes(LaunchErrorKind kind, uint64_t block, uint64_t thread) const {
  if (failureKind == LaunchErrorKind::None)
    return true;
  // An interrupted launch reports the interrupt, whatever else happened.
  if (failureKind == LaunchErrorKind::Interrupted)
    return false;
  bool resource = kind == LaunchErrorKind::ResourceFailure;
  if (resource != (failureKind == LaunchErrorKind::ResourceFailure))
    return resource;
  if (block != failureBlock)
    return block < failureBlock;
  if (severity(kind) != severity(failureKind))
    return severity(kind) > severity(failureKind);
  return thread < failureThread;
}

void LaunchJob::skipFrom(uint64_t block) {
  uint64_t current = firstSkipped.load(std::memory_order_relaxed);
  while (block < current &&
         !firstSkipped.compare_exchange_weak(current, block, std::memory_order_relaxed))
    ;
}

void LaunchJob::recordException(uint64_t block, uint64_t thread, const KilnCpuThread &where,
                                const char *className, const char *message) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!supersedes(LaunchErrorKind::KernelException, block, thread))
    return;
  failureKind = LaunchErrorKind::KernelException;
  failureBlock = block;
  failureThread = thread;
  // Numba's dispatcher: "tid=[z, y, x] ctaid=[z, y, x]: <message>".
  exception.className = className && *className ? className : "Exception";
  exception.argument = "tid=" + indexList(where.threadIdx) + " ctaid=" + indexList(where.blockIdx);
  if (message && *message)
    exception.argument += std::string(": ") + message;
  exception.threadIdx = {where.threadIdx[0], where.threadIdx[1], where.threadIdx[2]};
  exception.blockIdx = {where.blockIdx[0], where.blockIdx[1], where.blockIdx[2]};
}

void LaunchJob::recordFailure(LaunchErrorKind kind, uint64_t block, std::string message) {
  skipFrom(kind == LaunchErrorKind::ResourceFailure ? 0 : block + 1);
  std::lock_guard<std::mutex> lock(mutex);
  if (!supersedes(kind, block, 0))
    return;
  failureKind = kind;
  failureBlock = block;
  failureThread = 0;
  failureMessage = std::move(message);
}

LaunchResult LaunchJob::result() {
  std::lock_guard<std::mutex> lock(mutex);
  if (failureKind == LaunchErrorKind::None)
    return LaunchResult::success();
  if (failureKind == LaunchErrorKind::KernelException)
    return LaunchResult::kernelException(exception);
  return LaunchResult::failure(failureKind, failureMessage);
}

} // namespace kiln::cpu_engine
