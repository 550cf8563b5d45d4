//===- runtime/cpu_engine/worker_pool.h - Host threads for blocks -*- C++ -*-===//
//
// A fixed set of worker threads, created with an explicit (large) stack and
// every signal blocked, that take chunks of blocks from the queue of
// launches in flight, oldest launch first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cpu_engine/engine.h"
#include "runtime/cpu_engine/launch_job.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace kiln::cpu_engine {

class WorkerPool {
public:
  explicit WorkerPool(const EngineOptions &options);
  /// Stops and joins the workers; no launch may be in flight.
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  unsigned size() const { return workerCount; }

  /// Starts the workers; fails (and starts none) if the host refuses.
  LaunchResult start();
  /// Queues `job` and returns when all its blocks have finished, polling
  /// `stop` meanwhile.
  void run(LaunchJob &job, StopCheck stop);

private:
  static void *workerMain(void *pool);
  void work();
  LaunchJob *nextChunk(BlockRange &range);

  const EngineOptions options;
  const unsigned workerCount;
  std::vector<pthread_t> threads;

  std::mutex mutex; // guards the queue and `stopping`
  std::condition_variable workAvailable;
  std::deque<LaunchJob *> queue;
  std::atomic<size_t> queued{0}; // queue.size(), for polling without the lock
  bool stopping = false;
};

} // namespace kiln::cpu_engine
