//===- runtime/cpu_engine/calling_thread.h - Small grids in place -*- C++ -*-===//
//
// Waking a worker and waiting for it costs several microseconds, more than
// a small grid takes to run. So grids too small to gain from the pool run
// their blocks in order on the thread that launches them, through a
// BlockRunner borrowed for the launch (several host threads may launch at
// once, each with its own).
//
// That thread cannot wait for the launch and poll its StopCheck (Ctrl-C) at
// the same time, and only it may poll: Python handles signals on its main
// thread alone. So a watcher thread asks every launch that has run for a
// poll interval to poll: it sets the launch's interrupt word, the kernel's
// next loop back-edge calls the `interrupted` service, which asks the
// StopCheck right there, on the calling thread, and returns to the loop
// unless the launch is to stop. The watcher sleeps for good once no launch
// has run here for a while, so an idle process has no thread waking up.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cpu_engine/block_runner.h"
#include "runtime/cpu_engine/engine.h"
#include "runtime/cpu_engine/launch_job.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <utility>
#include <vector>

namespace kiln::cpu_engine {

/// Whether `config` is better run on the calling thread than on a pool of
/// `workerCount` workers (see docs/benchmarks.md for the measurements).
bool runsOnCallingThread(const KernelImage &image, const LaunchConfig &config,
                         unsigned workerCount);

class CallingThreadLaunches {
public:
  explicit CallingThreadLaunches(const EngineOptions &options);
  /// Stops and joins the watcher; no launch may be in flight.
  ~CallingThreadLaunches();
  CallingThreadLaunches(const CallingThreadLaunches &) = delete;
  CallingThreadLaunches &operator=(const CallingThreadLaunches &) = delete;

  /// Starts the watcher; false if the host refuses a thread.
  bool start();
  /// Runs every block of `job` on this thread, polling `stop` when asked.
  void run(LaunchJob &job, StopCheck stop);

private:
  static void *watcherMain(void *self);
  void watch();
  std::unique_ptr<BlockRunner> enter(LaunchJob &job);
  void leave(LaunchJob &job, std::unique_ptr<BlockRunner> runner);

  const EngineOptions options;
  pthread_t watcher{};
  bool watching = false;

  std::mutex mutex; // guards everything below
  std::condition_variable wake;
  std::vector<std::unique_ptr<BlockRunner>> idleRunners;
  /// Launches in flight, with the watcher's ticks each has been seen at.
  std::vector<std::pair<LaunchJob *, unsigned>> inFlight;
  unsigned launchesSinceTick = 0;
  bool watcherAsleep = false;
  bool stopping = false;
};

} // namespace kiln::cpu_engine
