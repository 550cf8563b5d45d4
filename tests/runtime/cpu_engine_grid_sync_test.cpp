//===- tests/runtime/cpu_engine_grid_sync_test.cpp - this_grid().sync() ---===//
//
// Cooperative launches: every block resident at once, the grid barrier,
// each block's shared memory its own across it, exited threads counting as
// arrived, and the launches and kernels the engine must refuse.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::cpu_engine::test {
namespace {

KernelImage cooperativeKernel(KilnCpuKernelEntry entry, const char *name,
                              uint32_t staticShared = 0) {
  KernelImage image = threadKernel(entry, name, staticShared);
  image.cooperative = true;
  return image;
}

// def sequential_rows(M):           # numba-cuda's grid sync example
//     col = cuda.grid(1)
//     g = cuda.cg.this_grid()
//     for row in range(1, M.shape[0]):
//         M[row, col] = M[row - 1, M.shape[1] - col - 1] + 1
//         g.sync()
extern "C" void sequentialRowsThread(KilnCpuThread *t, void *const *args) {
  auto *m = arg<int32_t *>(args, 0);
  auto rows = arg<int64_t>(args, 1), cols = arg<int64_t>(args, 2);
  int64_t col = globalId(t);
  for (int64_t row = 1; row < rows; ++row) {
    m[row * cols + col] = m[(row - 1) * cols + (cols - col - 1)] + 1;
    t->services->syncGrid(t);
  }
}

std::string runSequentialRows(Engine &engine, uint32_t blocks, uint32_t threads, int64_t rows,
                              std::vector<int32_t> &m) {
  int64_t cols = int64_t(blocks) * threads;
  m.assign(size_t(rows * cols), 0);
  int32_t *data = m.data();
  void *args[] = {&data, &rows, &cols};
  return outcome(engine.launch(cooperativeKernel(sequentialRowsThread, "sequential_rows"),
                               config1d(blocks, threads), args));
}

TEST(GridSync, EveryRowSeesTheRowBeforeItFromEveryBlock) {
  for (bool reference : {false, true}) {
    EngineOptions options;
    options.reference = reference;
    Engine engine(options);
    std::vector<int32_t> m;
    ASSERT_EQ(runSequentialRows(engine, 32, 32, 64, m), "ok");
    for (int64_t row = 0; row < 64; ++row)
      for (int64_t col = 0; col < 1024; ++col)
        ASSERT_EQ(m[size_t(row * 1024 + col)], row)
            << "M[" << row << ", " << col << "] (reference mode: " << reference << ")";
  }
}

TEST(GridSync, LaunchesFromTheCallingThreadAndThePoolAgree) {
  Engine engine;
  std::vector<int32_t> small, large;
  ASSERT_EQ(runSequentialRows(engine, 1, 32, 40, small), "ok"); // small enough for the caller
  ASSERT_EQ(runSequentialRows(engine, 64, 128, 8, large), "ok");
  for (int64_t row = 0; row < 40; ++row)
    ASSERT_EQ(small[size_t(row * 32)], row);
  for (int64_t row = 0; row < 8; ++row)
    ASSERT_EQ(large[size_t(row * 8192 + 8191)], row);
}

// Each block keeps its own shared memory across the grid barrier, and sees
// what the other blocks wrote to global memory before it.
extern "C" void sharedAcrossGridSyncThread(KilnCpuThread *t, void *const *args) {
  auto *global = arg<int64_t *>(args, 0);
  auto *out = arg<int64_t *>(args, 1);
  auto *shared = static_cast<int64_t *>(t->sharedMemory);
  uint32_t tid = t->threadIdx[0];
  shared[tid] = int64_t(t->blockIdx[0]) * 1000 + tid;
  global[globalId(t)] = int64_t(t->blockIdx[0]);
  t->services->syncGrid(t);
  int64_t total = 0;
  for (int64_t i = 0; i < gridSize(t); ++i)
    total += global[i];
  out[globalId(t)] = shared[tid] * 1000000 + total;
}

TEST(GridSync, SharedMemoryStaysEachBlocksOwn) {
  constexpr uint32_t blocks = 12, threads = 64;
  std::vector<int64_t> global(blocks * threads, -1), out(blocks * threads, -1);
  int64_t *pg = global.data(), *po = out.data();
  void *args[] = {&pg, &po};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(cooperativeKernel(sharedAcrossGridSyncThread, "shared_across",
                                                    threads * sizeof(int64_t)),
                                  config1d(blocks, threads), args)),
            "ok");
  int64_t total = int64_t(threads) * (blocks - 1) * blocks / 2;
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t i = 0; i < threads; ++i)
      ASSERT_EQ(out[b * threads + i], (int64_t(b) * 1000 + i) * 1000000 + total)
          << "block " << b << " thread " << i;
}

// Threads past the end return before the barrier, whole blocks included.
extern "C" void exitBeforeGridSyncThread(KilnCpuThread *t, void *const *args) {
  auto *x = arg<int64_t *>(args, 0);
  auto *reversed = arg<int64_t *>(args, 1);
  auto n = arg<int64_t>(args, 2);
  int64_t i = globalId(t);
  if (i >= n)
    return;
  x[i] = i;
  t->services->syncGrid(t);
  reversed[i] = x[n - 1 - i];
}

TEST(GridSync, ExitedThreadsCountAsArrived) {
  constexpr int64_t n = 100;
  std::vector<int64_t> x(n, -1), reversed(n, -1);
  int64_t *px = x.data(), *pr = reversed.data();
  int64_t count = n;
  void *args[] = {&px, &pr, &count};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(cooperativeKernel(exitBeforeGridSyncThread, "exit_before"),
                                  config1d(5, 32), args)),
            "ok");
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(reversed[size_t(i)], n - 1 - i) << "reversed[" << i << "]";
}

TEST(GridSync, AGridLargerThanCanBeResidentIsRefused) {
  EXPECT_EQ(maxCooperativeBlocks(32), DeviceLimits::maxCooperativeBlocks);
  EXPECT_EQ(maxCooperativeBlocks(256), DeviceLimits::maxCooperativeThreads / 256);
  EXPECT_EQ(maxCooperativeBlocks(2048), 0u);
  std::vector<int32_t> m;
  Engine engine;
  std::string message = runSequentialRows(engine, 65, 1024, 2, m);
  EXPECT_NE(message.find("a cooperative grid of 65 blocks of 1024 threads is above the 16 blocks "
                         "that can be resident at once"),
            std::string::npos)
      << message;
}

TEST(GridSync, AKernelNotDeclaredCooperativeCannotSyncTheGrid) {
  std::vector<int32_t> m(4 * 64);
  int32_t *data = m.data();
  int64_t rows = 4, cols = 64;
  void *args[] = {&data, &rows, &cols};
  Engine engine;
  std::string message = outcome(
      engine.launch(threadKernel(sequentialRowsThread, "not_declared"), config1d(2, 32), args));
  EXPECT_NE(message.find("kernel 'not_declared' synchronized the grid, but its image does not "
                         "declare it cooperative"),
            std::string::npos)
      << message;
}

// Half of each block waits at syncthreads, the other half at the grid
// barrier: neither can complete.
extern "C" void mixedBarriersThread(KilnCpuThread *t, void *const *) {
  if (t->threadIdx[0] < 16)
    t->services->syncthreads(t);
  else
    t->services->syncGrid(t);
}

TEST(GridSync, ABlockBarrierAgainstTheGridBarrierIsReportedAsADeadlock) {
  Engine engine;
  std::string message = outcome(
      engine.launch(cooperativeKernel(mixedBarriersThread, "mixed"), config1d(2, 32), nullptr));
  EXPECT_NE(message.find("deadlock in kernel 'mixed', block (0, 0, 0)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("wait in this_grid().sync()"), std::string::npos) << message;
  EXPECT_NE(message.find("wait in syncthreads"), std::string::npos) << message;
}

} // namespace
} // namespace kiln::cpu_engine::test
