//===- tests/runtime/cpu_engine_barrier_test.cpp - syncthreads ------------===//
//
// Block barriers as on sm_70+: reductions and scans in shared memory,
// syncthreads_count/and/or, and threads that exit early counting as arrived.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

// @cuda.jit
// def block_sum(x, out):
//     s = cuda.shared.array(256, float32)
//     t = cuda.threadIdx.x
//     s[t] = x[cuda.grid(1)]
//     cuda.syncthreads()
//     step = cuda.blockDim.x // 2
//     while step > 0:
//         if t < step:
//             s[t] += s[t + step]
//         cuda.syncthreads()
//         step //= 2
//     if t == 0:
//         out[cuda.blockIdx.x] = s[0]
extern "C" void blockSumThread(KilnCpuThread *t, void *const *args) {
  auto *x = arg<const float *>(args, 0);
  auto *out = arg<float *>(args, 1);
  auto *s = static_cast<float *>(t->sharedMemory);
  uint32_t tid = t->threadIdx[0];
  s[tid] = x[globalId(t)];
  t->services->syncthreads(t);
  for (uint32_t step = t->blockDim[0] / 2; step > 0; step /= 2) {
    if (tid < step)
      s[tid] += s[tid + step];
    t->services->syncthreads(t);
  }
  if (tid == 0)
    out[t->blockIdx[0]] = s[0];
}

// Inclusive Hillis-Steele scan over a block with two buffers.
extern "C" void blockScanThread(KilnCpuThread *t, void *const *args) {
  auto *x = arg<const int64_t *>(args, 0);
  auto *out = arg<int64_t *>(args, 1);
  uint32_t n = t->blockDim[0], tid = t->threadIdx[0];
  auto *buffers = static_cast<int64_t *>(t->sharedMemory);
  int64_t *in = buffers, *next = buffers + n;
  in[tid] = x[globalId(t)];
  t->services->syncthreads(t);
  for (uint32_t offset = 1; offset < n; offset *= 2) {
    next[tid] = tid >= offset ? in[tid] + in[tid - offset] : in[tid];
    t->services->syncthreads(t);
    std::swap(in, next);
  }
  out[globalId(t)] = in[tid];
}

TEST(Barriers, BlockSumReduction) {
  constexpr uint32_t blocks = 64, threads = 256;
  std::vector<float> x(blocks * threads), out(blocks, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 1000);
  const float *px = x.data();
  float *po = out.data();
  void *args[] = {&px, &po};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(blockSumThread, "block_sum", threads * 4),
                                  config1d(blocks, threads), args)),
            "ok");
  for (uint32_t block = 0; block < blocks; ++block) {
    double expected = 0;
    for (uint32_t i = 0; i < threads; ++i)
      expected += x[block * threads + i];
    EXPECT_EQ(out[block], float(expected)) << "block " << block;
  }
}

TEST(Barriers, PrefixScan) {
  constexpr uint32_t blocks = 12, threads = 512;
  std::vector<int64_t> x(blocks * threads), out(x.size(), 0);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int64_t(i * 7919 % 101) - 50;
  const int64_t *px = x.data();
  int64_t *po = out.data();
  void *args[] = {&px, &po};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(blockScanThread, "scan", 2 * threads * 8),
                                  config1d(blocks, threads), args)),
            "ok");
  for (uint32_t block = 0; block < blocks; ++block) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < threads; ++i) {
      sum += x[block * threads + i];
      ASSERT_EQ(out[block * threads + i], sum) << "block " << block << " thread " << i;
    }
  }
}

TEST(Barriers, ResultsDoNotDependOnWorkerCount) {
  constexpr uint32_t blocks = 40, threads = 128;
  std::vector<float> x(blocks * threads);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 1.0f / float(i + 1); // rounding makes the order of additions visible
  std::vector<std::vector<float>> results;
  for (unsigned workers : {1u, 2u, 5u}) {
    EngineOptions options;
    options.workerCount = workers;
    Engine engine(options);
    std::vector<float> out(blocks);
    const float *px = x.data();
    float *po = out.data();
    void *args[] = {&px, &po};
    ASSERT_EQ(outcome(engine.launch(threadKernel(blockSumThread, "block_sum", threads * 4),
                                    config1d(blocks, threads), args)),
              "ok");
    results.push_back(out);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

// out[3 * i + {0,1,2}] = syncthreads_count/and/or of predicates chosen by
// args[1] (0: tid % 3 == 0, 1: all true, 2: all false).
extern "C" void barrierReduceThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  auto pattern = arg<int32_t>(args, 1);
  uint32_t tid = linearThreadId(t);
  int32_t predicate = pattern == 0 ? tid % 3 == 0 : pattern == 1 ? 7 : 0;
  int32_t count = t->services->syncthreadsReduce(t, KILN_BARRIER_COUNT, predicate);
  int32_t all = t->services->syncthreadsReduce(t, KILN_BARRIER_AND, predicate);
  int32_t any = t->services->syncthreadsReduce(t, KILN_BARRIER_OR, predicate);
  out[3 * tid] = count;
  out[3 * tid + 1] = all;
  out[3 * tid + 2] = any;
}

TEST(Barriers, SyncthreadsCountAndOr) {
  constexpr uint32_t threads = 100;
  Engine engine;
  struct Case {
    int32_t pattern, count, all, any;
  } cases[] = {{0, 34, 0, 1}, {1, 100, 1, 1}, {2, 0, 0, 0}};
  for (const Case &c : cases) {
    std::vector<int32_t> out(3 * threads, -1);
    int32_t *data = out.data();
    int32_t pattern = c.pattern;
    void *args[] = {&data, &pattern};
    LaunchConfig config;
    config.block = {10, 5, 2};
    ASSERT_EQ(outcome(engine.launch(threadKernel(barrierReduceThread, "reduce"), config, args)),
              "ok");
    for (uint32_t tid = 0; tid < threads; ++tid) {
      EXPECT_EQ(out[3 * tid], c.count) << "pattern " << c.pattern << " thread " << tid;
      EXPECT_EQ(out[3 * tid + 1], c.all) << "pattern " << c.pattern << " thread " << tid;
      EXPECT_EQ(out[3 * tid + 2], c.any) << "pattern " << c.pattern << " thread " << tid;
    }
  }
}

// Threads at or above `limit` return at once; the others go through three
// barriers, counting arrivals in shared memory. Exited threads count as
// arrived, so nothing deadlocks.
extern "C" void earlyExitThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  auto limit = arg<uint32_t>(args, 1);
  uint32_t tid = linearThreadId(t);
  if (tid >= limit)
    return;
  auto *counter = static_cast<int32_t *>(t->sharedMemory);
  for (int round = 0; round < 3; ++round) {
    ++counter[round];
    t->services->syncthreads(t);
    out[tid * 3 + round] = counter[round];
    t->services->syncthreads(t);
  }
  out[tid * 3] += t->services->syncthreadsReduce(t, KILN_BARRIER_COUNT, 1) * 1000;
}

TEST(Barriers, ExitedThreadsCountAsArrived) {
  constexpr uint32_t threads = 256, limit = 100;
  std::vector<int32_t> out(threads * 3, -1);
  int32_t *data = out.data();
  uint32_t cut = limit;
  void *args[] = {&data, &cut};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(earlyExitThread, "early_exit", 16),
                                  config1d(1, threads), args)),
            "ok");
  for (uint32_t tid = 0; tid < limit; ++tid) {
    EXPECT_EQ(out[tid * 3], int32_t(limit + 1000 * limit));
    EXPECT_EQ(out[tid * 3 + 1], int32_t(limit));
    EXPECT_EQ(out[tid * 3 + 2], int32_t(limit));
  }
  for (uint32_t tid = limit; tid < threads; ++tid)
    EXPECT_EQ(out[tid * 3], -1);
}

// Threads leave a barrier loop after different numbers of rounds: the
// others' barriers complete without them.
extern "C" void unevenLoopThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  uint32_t tid = linearThreadId(t);
  int32_t rounds = 0;
  for (uint32_t i = 0; i <= tid % 5; ++i) {
    t->services->syncthreads(t);
    ++rounds;
  }
  out[tid] = rounds;
}

TEST(Barriers, ThreadsLeavingALoopEarly) {
  std::vector<int32_t> out(64, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(unevenLoopThread, "uneven"), config1d(1, 64), args)),
            "ok");
  for (uint32_t tid = 0; tid < 64; ++tid)
    EXPECT_EQ(out[tid], int32_t(tid % 5 + 1));
}

TEST(Barriers, OneThreadBlocksAndFullBlocks) {
  Engine engine;
  for (uint32_t threads : {1u, 1024u}) {
    std::vector<int32_t> out(3 * threads, -1);
    int32_t *data = out.data();
    int32_t pattern = 1;
    void *args[] = {&data, &pattern};
    ASSERT_EQ(outcome(engine.launch(threadKernel(barrierReduceThread, "reduce"),
                                    config1d(2, threads), args)),
              "ok");
    EXPECT_EQ(out[0], int32_t(threads));
  }
}

} // namespace
} // namespace kiln::cpu_engine::test
