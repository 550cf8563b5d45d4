//===- runtime/cpu_engine/calling_thread.cpp - Small grids in place -------===//

#include "runtime/cpu_engine/calling_thread.h"

#include "runtime/cpu_engine/alternate_signal_stack.h"

#include <algorithm>
#include <chrono>
#include <csignal>

namespace kiln::cpu_engine {

namespace {

/// Grids of at most this many threads in all run on the calling thread.
/// Waking the pool and being woken by it costs about 4.5 µs (measured on 2
/// cores: a 544-thread launch of a one-store kernel on the pool takes
/// 5.9 µs, a 512-thread one here 1.4 µs), so a grid with less work than
/// that gains nothing from more cores; with this bound, a kernel whose
/// threads take up to about 10 ns each (a few dozen operations) is no
/// slower here, and a trivial one is four times faster.
constexpr uint64_t smallGridThreads = 512;

/// Block entries run on the calling thread's stack, whose size is not the
/// engine's to choose: kernels with larger local arrays go to the workers,
/// whose stacks are made for them.
constexpr uint64_t callingThreadLocalBytes = 64 * 1024;

/// As often as the waiting thread of a pool launch polls its StopCheck.
constexpr std::chrono::milliseconds pollInterval{20};

/// Ticks without a launch here before the watcher sleeps until the next.
constexpr unsigned idleTicksBeforeSleep = 50;

} // namespace

bool runsOnCallingThread(const KernelImage &image, const LaunchConfig &config,
                         unsigned workerCount) {
  if (image.blockEntry && image.localBytesPerThread > callingThreadLocalBytes)
    return false;
  uint64_t blocks = uint64_t(config.grid.x) * config.grid.y * config.grid.z;
  uint64_t threads = blocks * config.block.x * config.block.y * config.block.z;
  // One block runs on one thread wherever it runs, and a single worker
  // cannot run anything in parallel with the caller.
  return blocks == 1 || workerCount == 1 || threads <= smallGridThreads;
}

CallingThreadLaunches::CallingThreadLaunches(const EngineOptions &options) : options(options) {}

CallingThreadLaunches::~CallingThreadLaunches() {
  if (!watching)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  pthread_join(watcher, nullptr);
}

bool CallingThreadLaunches::start() {
  if (watching)
    return true;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, std::max<size_t>(PTHREAD_STACK_MIN, 64 * 1024));
  // Signals stay with the host process's own threads, as Python expects.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  watching = pthread_create(&watcher, &attributes, &CallingThreadLaunches::watcherMain, this) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attributes);
  return watching;
}

void *CallingThreadLaunches::watcherMain(void *self) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "kiln-cpu-watch");
#endif
  static_cast<CallingThreadLaunches *>(self)->watch();
  return nullptr;
}

void CallingThreadLaunches::watch() {
  std::unique_lock<std::mutex> lock(mutex);
  unsigned idleTicks = 0;
  while (!stopping) {
    if (inFlight.empty() && idleTicks >= idleTicksBeforeSleep) {
      watcherAsleep = true;
      wake.wait(lock, [this] { return stopping || !inFlight.empty(); });
      watcherAsleep = false;
      idleTicks = 0;
      continue;
    }
    wake.wait_for(lock, pollInterval, [this] { return stopping; });
    idleTicks = inFlight.empty() && launchesSinceTick == 0 ? idleTicks + 1 : 0;
    launchesSinceTick = 0;
    // A launch seen at an earlier tick has run for a poll interval at least.
    for (auto &[job, ticks] : inFlight)
      if (ticks++ > 0)
        job->requestPoll();
  }
}

std::unique_ptr<BlockRunner> CallingThreadLaunches::enter(LaunchJob &job) {
  std::unique_ptr<BlockRunner> runner;
  bool wakeWatcher;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!idleRunners.empty()) {
      runner = std::move(idleRunners.back());
      idleRunners.pop_back();
    }
    inFlight.emplace_back(&job, 0);
    ++launchesSinceTick;
    wakeWatcher = watcherAsleep;
  }
  if (wakeWatcher)
    wake.notify_one();
  if (!runner)
    runner = std::make_unique<BlockRunner>(options);
  return runner;
}

void CallingThreadLaunches::leave(LaunchJob &job, std::unique_ptr<BlockRunner> runner) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = std::find_if(inFlight.begin(), inFlight.end(),
                            [&](const auto &entry) { return entry.first == &job; });
  *found = inFlight.back();
  inFlight.pop_back();
  idleRunners.push_back(std::move(runner));
}

void CallingThreadLaunches::run(LaunchJob &job, StopCheck stop) {
  job.pollOnCallingThread(stop);
  ensureAlternateSignalStack();
  std::unique_ptr<BlockRunner> runner = enter(job);
  runner->runBlocks(job, {0, job.blockCount()});
  leave(job, std::move(runner));
}

} // namespace kiln::cpu_engine
