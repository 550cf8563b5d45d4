//===- runtime/cpu_engine/launch_job.h - One launch in flight ---*- C++ -*-===//
//
// The state a launch shares between the host thread that waits for it and
// the workers that run its blocks: which blocks are still to be claimed
// (claimed in order, under the worker pool's lock), how many have finished,
// and the failure to report.
//
// Failures are reported deterministically: the one of the lowest block wins
// (within a block, a deadlock or ABI violation over an exception, then the
// lowest thread). An exception lets the other blocks run on, as on a GPU; a
// deadlock or ABI violation in block b skips the blocks after b, which
// cannot change the report: every block before b was claimed earlier and
// still runs. Host resource failures win over everything.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cpu_engine/engine.h"
#include "runtime/cpu_engine/print_output.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace kiln::cpu_engine {

struct BlockRange {
  uint64_t begin = 0, end = 0;
};

class LaunchJob {
public:
  LaunchJob(const KernelImage &image, const LaunchConfig &config, void *const *args,
            PrintOutput &output, unsigned workerCount);

  const KernelImage &image;
  const LaunchConfig config;
  void *const *const args;
  PrintOutput &output;
  /// Name for messages: the image's, else "<unnamed kernel>".
  const char *kernelName() const;
  uint64_t blockCount() const { return totalBlocks; }

  /// The next chunk of blocks to run; called with the pool's lock held.
  BlockRange claim();
  bool fullyClaimed() const { return nextBlock == totalBlocks; }
  /// False for blocks a failure has made pointless.
  bool shouldRun(uint64_t block) const {
    return block < firstSkipped.load(std::memory_order_relaxed);
  }

  /// Workers report finished (or skipped) blocks; the last wakes the waiter.
  void finishBlocks(uint64_t count);
  /// Returns when every block has finished; polls `stop` meanwhile and
  /// interrupts the launch when it asks to.
  void waitUntilFinished(StopCheck stop);

  /// What KilnCpuThread::interrupt points at: non-zero once interrupted, or
  /// when a launch on the calling thread is asked to poll its StopCheck.
  const volatile uint32_t *interruptWord() const { return &interruptFlag; }
  /// Stops the launch: no block starts any more, running threads stop at
  /// their next loop back-edge.
  void interrupt();

  /// For a launch that runs on the thread that made it, which cannot wait
  /// and poll at the same time: `stop` is asked by that thread itself, when
  /// another thread has requested a poll.
  void pollOnCallingThread(StopCheck stop) { callerStop = stop; }
  /// Sets the interrupt word so that the kernel's next loop back-edge calls
  /// pollStop(); called by the thread that watches long launches.
  void requestPoll();
  /// Answers a pending poll request by asking the StopCheck (on the calling
  /// thread); true once the launch is interrupted.
  bool pollStop();

  void recordException(uint64_t block, uint64_t thread, const KilnCpuThread &where,
                       const char *className, const char *message);
  void recordFailure(LaunchErrorKind kind, uint64_t block, std::string message);
  LaunchResult result();

private:
  /// Whether a failure of (kind, block, thread) replaces the recorded one.
  bool supersedes(LaunchErrorKind kind, uint64_t block, uint64_t thread) const;
  void skipFrom(uint64_t block);

  const uint64_t totalBlocks;
  const uint64_t chunkSize;
  uint64_t nextBlock = 0;
  std::atomic<uint64_t> finishedBlocks{0};
  std::atomic<uint64_t> firstSkipped{~uint64_t(0)};
  std::atomic<bool> finishedFlag{false}; // `finished`, for polling without the lock
  // Read by generated code through a plain volatile load on every loop
  // back-edge, so not an std::atomic; an aligned word is read whole.
  // Written with __atomic builtins: 0, pollRequested or interrupted.
  volatile uint32_t interruptFlag = 0;
  StopCheck callerStop;

  std::mutex mutex; // guards everything below
  std::condition_variable finishedCondition;
  bool finished = false;
  LaunchErrorKind failureKind = LaunchErrorKind::None;
  uint64_t failureBlock = 0, failureThread = 0;
  std::string failureMessage;
  KernelException exception;
};

} // namespace kiln::cpu_engine
