//===- runtime/cpu_engine/engine.cpp - Running kernels on the host --------===//

#include "runtime/cpu_engine/engine.h"

#include "runtime/cpu_engine/calling_thread.h"
#include "runtime/cpu_engine/launch_job.h"
#include "runtime/cpu_engine/print_output.h"
#include "runtime/cpu_engine/worker_pool.h"

#include <atomic>
#include <mutex>
#include <pthread.h>

namespace kiln::cpu_engine {

LaunchResult LaunchResult::failure(LaunchErrorKind kind, std::string message) {
  LaunchResult result;
  result.errorKind = kind;
  result.text = std::move(message);
  return result;
}

LaunchResult LaunchResult::kernelException(KernelException exception) {
  LaunchResult result;
  result.errorKind = LaunchErrorKind::KernelException;
  result.text = exception.className + ": " + exception.argument;
  result.raised = std::move(exception);
  return result;
}

namespace {

/// How many forks separate this process from the one that loaded the
/// engine: a child has none of its parent's worker threads.
std::atomic<uint64_t> forkGeneration{0};

uint64_t currentForkGeneration() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr,
                   [] { forkGeneration.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return forkGeneration.load(std::memory_order_relaxed);
}

/// The options an engine runs with: a reference engine has one worker.
EngineOptions effectiveOptions(EngineOptions options) {
  if (options.reference)
    options.workerCount = 1;
  return options;
}

} // namespace

struct Engine::State {
  explicit State(const EngineOptions &requested)
      : options(effectiveOptions(requested)), output(options.printStream),
        pool(std::make_unique<WorkerPool>(options)), workerCount(pool->size()) {}

  /// The pool, started. A child forked after the start gets a new pool; the
  /// parent's is leaked, as its locks may have been held by threads that do
  /// not exist in the child.
  WorkerPool *startedPool(LaunchResult &result) {
    uint64_t generation = currentForkGeneration();
    std::lock_guard<std::mutex> lock(mutex);
    if (started && startedGeneration != generation) {
      (void)pool.release();
      pool = std::make_unique<WorkerPool>(options);
      started = false;
    }
    if (!started) {
      result = pool->start();
      started = result.ok();
      startedGeneration = generation;
    }
    return started ? pool.get() : nullptr;
  }

  /// Where small grids run, its watcher started; null if the host refuses
  /// a thread (the pool then runs them). A child forked after the start
  /// gets a new one, as for the pool.
  CallingThreadLaunches *startedCallingThread() {
    uint64_t generation = currentForkGeneration();
    std::lock_guard<std::mutex> lock(mutex);
    if (callingThread && callingThreadGeneration != generation)
      (void)callingThread.release();
    if (!callingThread) {
      callingThread = std::make_unique<CallingThreadLaunches>(options);
      callingThreadGeneration = generation;
    }
    return callingThread->start() ? callingThread.get() : nullptr;
  }

  const EngineOptions options;
  PrintOutput output;
  std::mutex mutex; // guards everything below but workerCount
  std::unique_ptr<WorkerPool> pool;
  const unsigned workerCount; // the same for every pool of this engine
  bool started = false;
  uint64_t startedGeneration = 0;
  std::unique_ptr<CallingThreadLaunches> callingThread;
  uint64_t callingThreadGeneration = 0;
};

Engine::Engine(const EngineOptions &options) : state(std::make_unique<State>(options)) {}

Engine::~Engine() = default;

unsigned Engine::workerCount() const {
  return state->workerCount;
}

bool Engine::reference() const {
  return state->options.reference;
}

LaunchResult Engine::launch(const KernelImage &image, const LaunchConfig &config, void *const *args,
                            StopCheck stop) {
  LaunchResult result = validateLaunch(image, config);
  if (!result.ok())
    return result;
  if (state->options.reference) {
    if (!image.threadEntry)
      return LaunchResult::failure(
          LaunchErrorKind::InvalidConfiguration,
          std::string("invalid launch of kernel '") +
              (image.name ? image.name : "<unnamed kernel>") +
              "': the engine's reference mode runs threads through the kernel's thread entry, "
              "and its image has none");
    KernelImage plain = image;
    plain.blockEntry = nullptr;
    return runOnPool(plain, config, args, stop);
  }
  if (runsOnCallingThread(image, config, state->workerCount))
    if (CallingThreadLaunches *here = state->startedCallingThread()) {
      LaunchJob job(image, config, args, state->output, state->workerCount);
      here->run(job, stop);
      state->output.flush();
      return job.result();
    }
  return runOnPool(image, config, args, stop);
}

LaunchResult Engine::runOnPool(const KernelImage &image, const LaunchConfig &config,
                               void *const *args, StopCheck stop) {
  LaunchResult result;
  WorkerPool *pool = state->startedPool(result);
  if (!pool)
    return result;
  LaunchJob job(image, config, args, state->output, state->workerCount);
  pool->run(job, stop);
  state->output.flush();
  return job.result();
}

} // namespace kiln::cpu_engine
