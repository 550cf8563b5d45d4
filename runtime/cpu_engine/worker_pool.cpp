//===- runtime/cpu_engine/worker_pool.cpp - Host threads for blocks -------===//

#include "runtime/cpu_engine/worker_pool.h"

#include "runtime/cpu_engine/alternate_signal_stack.h"
#include "runtime/cpu_engine/block_runner.h"
#include "runtime/cpu_engine/spin_wait.h"

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

namespace kiln::cpu_engine {

namespace {

unsigned resolveWorkerCount(unsigned requested) {
  if (requested)
    return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

WorkerPool::WorkerPool(const EngineOptions &options)
    : options(options), workerCount(resolveWorkerCount(options.workerCount)) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workAvailable.notify_all();
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
}

LaunchResult WorkerPool::start() {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  size_t stackBytes = std::max<size_t>(options.workerStackBytes, PTHREAD_STACK_MIN);
  int status = pthread_attr_setstacksize(&attributes, stackBytes);
  // Workers leave asynchronous signals (SIGINT...) to the host process's own
  // threads, as Python expects. Faults stay unblocked: a kernel that faults
  // must reach the process's handlers (Python's faulthandler), not be killed
  // outright. Workers inherit the mask in force when they are created.
  sigset_t asynchronous, previous;
  sigfillset(&asynchronous);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS})
    sigdelset(&asynchronous, fault);
  pthread_sigmask(SIG_SETMASK, &asynchronous, &previous);
  threads.reserve(workerCount);
  while (status == 0 && threads.size() < workerCount) {
    pthread_t thread;
    status = pthread_create(&thread, &attributes, &WorkerPool::workerMain, this);
    if (status == 0)
      threads.push_back(thread);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attributes);
  if (status == 0)
    return LaunchResult::success();
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workAvailable.notify_all();
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
  threads.clear();
  stopping = false;
  return LaunchResult::failure(LaunchErrorKind::ResourceFailure,
                               "cannot start " + std::to_string(workerCount) +
                                   " CPU engine worker threads with " + std::to_string(stackBytes) +
                                   "-byte stacks: " + std::strerror(status));
}

void *WorkerPool::workerMain(void *pool) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "kiln-cpu");
#endif
  AlternateSignalStack signalStack;
  static_cast<WorkerPool *>(pool)->work();
  return nullptr;
}

void WorkerPool::work() {
  BlockRunner runner(options);
  BlockRange range;
  while (LaunchJob *job = nextChunk(range)) {
    runner.runBlocks(*job, range);
    job->finishBlocks(range.end - range.begin);
  }
}

LaunchJob *WorkerPool::nextChunk(BlockRange &range) {
  // Launches often come in quick succession: poll for the next one before
  // going to sleep.
  spinUntil([this] { return queued.load(std::memory_order_relaxed) != 0; });
  std::unique_lock<std::mutex> lock(mutex);
  workAvailable.wait(lock, [this] { return stopping || !queue.empty(); });
  if (stopping)
    return nullptr;
  // A job leaves the queue once its last block is claimed, so a job in the
  // queue is alive: its launcher waits for blocks not yet claimed.
  LaunchJob *job = queue.front();
  range = job->claim();
  if (job->fullyClaimed()) {
    queue.pop_front();
    queued.store(queue.size(), std::memory_order_relaxed);
  }
  return job;
}

void WorkerPool::run(LaunchJob &job, StopCheck stop) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(&job);
    queued.store(queue.size(), std::memory_order_relaxed);
  }
  if (job.blockCount() >= workerCount)
    workAvailable.notify_all();
  else
    for (uint64_t i = 0; i < job.blockCount(); ++i)
      workAvailable.notify_one();
  job.waitUntilFinished(stop);
}

} // namespace kiln::cpu_engine
