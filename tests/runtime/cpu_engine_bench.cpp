//===- tests/runtime/cpu_engine_bench.cpp - What the CPU engine costs -----===//
//
// Prints the cost of a fiber switch, of a barrier and a warp shuffle in a
// 256-thread block, of a block in the block-entry path, and of a launch.
// All on one worker, so that the numbers are per core:
//
//   build/tests/runtime/cpu_engine_bench
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/fiber_context.h"
#include "runtime/cpu_engine/fiber_stack.h"
#include "tests/runtime/kernel_helpers.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace kiln::cpu_engine;
using namespace kiln::cpu_engine::test;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The best of a few runs of `run`, in seconds.
template <typename Run> double best(Run run, int repetitions = 20) {
  double fastest = 1e30;
  for (int i = 0; i < repetitions; ++i) {
    Clock::time_point start = Clock::now();
    run();
    fastest = std::min(fastest, secondsSince(start));
  }
  return fastest;
}

Engine &oneWorker() {
  static Engine engine([] {
    EngineOptions options;
    options.workerCount = 1;
    return options;
  }());
  return engine;
}

void check(const LaunchResult &result) {
  if (!result.ok()) {
    std::fprintf(stderr, "launch failed: %s\n", result.message().c_str());
    std::exit(1);
  }
}

// --- Raw switches ---------------------------------------------------------===//

struct PingPong {
  FiberContext main, fiber;
};

void pingPongEntry(void *argument) {
  auto &state = *static_cast<PingPong *>(argument);
  for (;;)
    FiberContext::switchTo(state.fiber, state.main);
}

void measureSwitch() {
  FiberStack stack;
  std::string error;
  if (!stack.allocate(64 * 1024, error))
    std::exit(1);
  PingPong state;
  state.fiber.prepare(stack.low(), stack.size(), pingPongEntry, &state);
  constexpr int rounds = 2'000'000;
  double seconds = best([&] {
    for (int i = 0; i < rounds; ++i)
      FiberContext::switchTo(state.main, state.fiber);
  });
  std::printf("fiber switch (%s): %.1f ns\n", FiberContext::implementationName(),
              seconds * 1e9 / (2.0 * rounds));
}

// --- Barriers and shuffles in a 256-thread block -------------------------===//

constexpr int barrierRounds = 2000;

extern "C" void barrierLoopThread(KilnCpuThread *t, void *const *) {
  for (int i = 0; i < barrierRounds; ++i)
    t->services->syncthreads(t);
}

extern "C" void shuffleLoopThread(KilnCpuThread *t, void *const *args) {
  uint64_t value = t->laneId;
  for (int i = 0; i < barrierRounds; ++i)
    value += t->services->shuffle(t, 0xffffffffu, KILN_SHFL_DOWN, value, 1, 0x1f);
  arg<uint64_t *>(args, 0)[linearThreadId(t)] = value;
}

extern "C" void emptyThread(KilnCpuThread *, void *const *) {}

void measureBlockWaits() {
  constexpr uint32_t threads = 256, blocks = 200;
  double empty = best([&] {
    check(
        oneWorker().launch(threadKernel(emptyThread, "empty"), config1d(blocks, threads), nullptr));
  });
  double barriers = best([&] {
    check(oneWorker().launch(threadKernel(barrierLoopThread, "barrier"), config1d(1, threads),
                             nullptr));
  });
  std::vector<uint64_t> out(threads);
  uint64_t *data = out.data();
  void *args[] = {&data};
  double shuffles = best([&] {
    check(
        oneWorker().launch(threadKernel(shuffleLoopThread, "shuffle"), config1d(1, threads), args));
  });
  double start = empty / blocks;
  std::printf("256-thread fiber block that never waits: %.2f us per block (%.1f ns per thread)\n",
              start * 1e6, start * 1e9 / threads);
  std::printf("syncthreads in a 256-thread block: %.2f us per barrier (%.1f ns per thread)\n",
              (barriers - start) * 1e6 / barrierRounds,
              (barriers - start) * 1e9 / barrierRounds / threads);
  std::printf("shfl_down_sync in a 256-thread block: %.2f us per round (%.1f ns per thread)\n",
              (shuffles - start) * 1e6 / barrierRounds,
              (shuffles - start) * 1e9 / barrierRounds / threads);
}

// --- The block-entry path ----------------------------------------------===//

extern "C" void emptyBlock(KilnCpuThread *, void *const *) {}

extern "C" void saxpyThread(KilnCpuThread *t, void *const *args) {
  auto *x = arg<const float *>(args, 0);
  auto *y = arg<float *>(args, 1);
  auto n = arg<int64_t>(args, 2);
  int64_t i = globalId(t);
  if (i < n)
    y[i] = 2.0f * x[i] + y[i];
}

// Not inlined into saxpyAllBlocks, where the stores to a local
// KilnCpuThread would vanish: generated code is in another object file.
extern "C" [[gnu::noinline]] void saxpyBlock(KilnCpuThread *t, void *const *args) {
  auto *x = arg<const float *>(args, 0);
  auto *y = arg<float *>(args, 1);
  auto n = arg<int64_t>(args, 2);
  // What generated code does: the thread body inlined in the block's loop.
  int64_t base = int64_t(t->blockIdx[0]) * t->blockDim[0];
  for (uint32_t tx = 0; tx < t->blockDim[0]; ++tx) {
    t->threadIdx[0] = tx;
    t->laneId = tx % 32;
    int64_t i = base + tx;
    if (i < n)
      y[i] = 2.0f * x[i] + y[i];
  }
}

uint32_t directThreads = 0;

/// Runs every block of saxpy by hand: blockDim.x = directThreads.
extern "C" void saxpyAllBlocks(KilnCpuThread *, void *const *args) {
  auto n = arg<int64_t>(args, 2);
  KilnCpuThread thread{};
  thread.blockDim[0] = directThreads;
  thread.gridDim[0] = uint32_t(n / directThreads);
  for (uint32_t block = 0; block < thread.gridDim[0]; ++block) {
    thread.blockIdx[0] = block;
    saxpyBlock(&thread, args);
  }
}

void measureBlockEntries() {
  constexpr uint32_t emptyBlocks = 1'000'000;
  double empty = best([&] {
    check(oneWorker().launch(blockKernel(emptyThread, emptyBlock, "empty"),
                             config1d(emptyBlocks, 1), nullptr));
  });
  std::printf("block entry, empty kernel: %.1f ns per block\n", empty * 1e9 / emptyBlocks);

  // Small enough to stay in cache: the kernel is compute, not memory, bound.
  constexpr int64_t n = 1 << 18;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  const float *px = x.data();
  float *py = y.data();
  int64_t count = n;
  void *args[] = {&px, &py, &count};
  for (uint32_t threads : {128u, 256u, 1024u}) {
    uint32_t blocks = uint32_t(n / threads);
    directThreads = threads;
    double engine = best([&] {
      check(oneWorker().launch(blockKernel(saxpyThread, saxpyBlock, "saxpy"),
                               config1d(blocks, threads), args));
    });
    // The same block entry called directly for every block, on a worker
    // too (so with the same caches): what the kernel itself costs.
    double direct = best([&] {
      check(oneWorker().launch(blockKernel(emptyThread, saxpyAllBlocks, "direct"), config1d(1, 1),
                               args));
    });
    std::printf("saxpy over 256K floats, %u-thread blocks: engine %.1f us, direct calls %.1f us: "
                "%.1f ns per block\n",
                threads, engine * 1e6, direct * 1e6, (engine - direct) * 1e9 / blocks);
  }
  double plain = best([&] {
    for (int64_t i = 0; i < n; ++i)
      py[i] = 2.0f * px[i] + py[i];
  });
  std::printf("saxpy over 256K floats as one vectorized loop: %.1f us\n", plain * 1e6);
}

extern "C" void oneThreadBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, emptyThread);
}

void measureLaunch() {
  constexpr int launches = 20000;
  double single = best([&] {
    for (int i = 0; i < launches; ++i)
      check(oneWorker().launch(blockKernel(emptyThread, oneThreadBlock, "empty"), config1d(1, 1),
                               nullptr));
  });
  Engine engine;
  double pool = best([&] {
    for (int i = 0; i < launches; ++i)
      check(engine.launch(blockKernel(emptyThread, oneThreadBlock, "empty"), config1d(1, 1),
                          nullptr));
  });
  std::printf("launch of one empty block: %.2f us (1 worker), %.2f us (%u workers)\n",
              single * 1e6 / launches, pool * 1e6 / launches, engine.workerCount());
}

} // namespace

int main() {
  measureSwitch();
  measureBlockWaits();
  measureBlockEntries();
  measureLaunch();
  return 0;
}
