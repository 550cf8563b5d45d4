//===- tests/runtime/cpu_engine_launch_test.cpp - Grids, blocks, workers --===//
//
// Launches without barriers: indices, the two entry points, shared memory,
// atomics, launch validation, and launches from several host threads.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

// @cuda.jit
// def vector_add(a, b, out, n):
//     for i in range(cuda.grid(1), n, cuda.gridsize(1)):
//         out[i] = a[i] + b[i]
extern "C" void vectorAddThread(KilnCpuThread *t, void *const *args) {
  auto *a = arg<const float *>(args, 0);
  auto *b = arg<const float *>(args, 1);
  auto *out = arg<float *>(args, 2);
  auto n = arg<int64_t>(args, 3);
  for (int64_t i = globalId(t); i < n; i += gridSize(t))
    out[i] = a[i] + b[i];
}

extern "C" void vectorAddBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, vectorAddThread);
}

// Every thread writes where it is: out[global linear id] = packed indices.
extern "C" void whereAmIThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint64_t *>(args, 0);
  uint64_t bx = t->blockIdx[0], by = t->blockIdx[1], bz = t->blockIdx[2];
  uint64_t block = bx + t->gridDim[0] * (by + uint64_t(t->gridDim[1]) * bz);
  uint64_t id = block * threadsPerBlock(t) + linearThreadId(t);
  out[id] = (bx << 40) | (by << 32) | (bz << 24) | (uint64_t(t->threadIdx[0]) << 16) |
            (uint64_t(t->threadIdx[1]) << 8) | (uint64_t(t->threadIdx[2]) << 4) | t->laneId;
  EXPECT_EQ(t->warpSize, 32u);
}

extern "C" void whereAmIBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, whereAmIThread);
}

// Many blocks incrementing counters: out[0] counts threads, out[1 + tid % 16]
// a histogram.
extern "C" void atomicCountThread(KilnCpuThread *t, void *const *args) {
  auto *counters = arg<uint64_t *>(args, 0);
  std::atomic_ref<uint64_t>(counters[0]).fetch_add(1, std::memory_order_relaxed);
  std::atomic_ref<uint64_t>(counters[1 + globalId(t) % 16]).fetch_add(1, std::memory_order_relaxed);
}

extern "C" void atomicCountBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, atomicCountThread);
}

// Shared memory: static bytes at sharedMemory, dynamic ones after them.
// Thread 0 checks both are zeroed and separate, each thread then writes its
// id to both (after a barrier, its neighbour's is read back).
extern "C" void sharedLayoutThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  auto *staticShared = static_cast<int32_t *>(t->sharedMemory);
  auto *dynamicShared = static_cast<int32_t *>(t->dynamicSharedMemory);
  uint32_t id = linearThreadId(t), n = threadsPerBlock(t);
  if (dynamicShared[id] != 0 || staticShared[id % 3] < 0)
    out[0] = -1;
  staticShared[id % 3] = 1;
  dynamicShared[id] = static_cast<int32_t>(id * 10 + t->blockIdx[0]);
  t->services->syncthreads(t);
  out[1 + t->blockIdx[0] * n + id] = dynamicShared[(id + 1) % n];
}

class LaunchTest : public ::testing::Test {
protected:
  Engine engine;
};

void checkVectorAdd(Engine &engine, const KernelImage &image, LaunchConfig config, int64_t n) {
  std::vector<float> a(n), b(n), out(n, -1.0f);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = float(2 * i + 1);
  }
  const float *pa = a.data(), *pb = b.data();
  float *po = out.data();
  void *args[] = {&pa, &pb, &po, &n};
  ASSERT_EQ(outcome(engine.launch(image, config, args)), "ok");
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], float(3 * i + 1)) << "at " << i;
}

TEST_F(LaunchTest, VectorAddThroughBlockEntry) {
  checkVectorAdd(engine, blockKernel(vectorAddThread, vectorAddBlock, "vector_add"),
                 config1d(40, 128), 100000);
}

TEST_F(LaunchTest, VectorAddThroughABlockEntryAlone) {
  KernelImage image = blockKernel(vectorAddThread, vectorAddBlock, "vector_add");
  image.threadEntry = nullptr;
  checkVectorAdd(engine, image, config1d(40, 128), 100000);
}

TEST_F(LaunchTest, VectorAddThroughFibersAgreesWithBlockEntry) {
  checkVectorAdd(engine, threadKernel(vectorAddThread, "vector_add"), config1d(7, 96), 100000);
}

TEST_F(LaunchTest, GridStrideCoversMoreElementsThanThreads) {
  checkVectorAdd(engine, blockKernel(vectorAddThread, vectorAddBlock, "vector_add"),
                 config1d(3, 33), 12345);
}

void checkIndices(Engine &engine, const KernelImage &image, LaunchConfig config) {
  uint64_t blocks = uint64_t(config.grid.x) * config.grid.y * config.grid.z;
  uint64_t threads = uint64_t(config.block.x) * config.block.y * config.block.z;
  std::vector<uint64_t> out(blocks * threads, ~uint64_t(0));
  uint64_t *data = out.data();
  void *args[] = {&data};
  ASSERT_EQ(outcome(engine.launch(image, config, args)), "ok");
  uint64_t id = 0;
  for (uint64_t bz = 0; bz < config.grid.z; ++bz)
    for (uint64_t by = 0; by < config.grid.y; ++by)
      for (uint64_t bx = 0; bx < config.grid.x; ++bx)
        for (uint64_t tz = 0, lane = 0; tz < config.block.z; ++tz)
          for (uint64_t ty = 0; ty < config.block.y; ++ty)
            for (uint64_t tx = 0; tx < config.block.x; ++tx, ++lane, ++id)
              ASSERT_EQ(out[id], (bx << 40) | (by << 32) | (bz << 24) | (tx << 16) | (ty << 8) |
                                     (tz << 4) | (lane % 32))
                  << "block (" << bx << ", " << by << ", " << bz << ") thread (" << tx << ", " << ty
                  << ", " << tz << ")";
}

TEST_F(LaunchTest, ThreeDimensionalGridThroughBlockEntry) {
  LaunchConfig config;
  config.grid = {3, 4, 5};
  config.block = {4, 3, 2};
  checkIndices(engine, blockKernel(whereAmIThread, whereAmIBlock, "where_am_i"), config);
}

TEST_F(LaunchTest, ThreeDimensionalGridThroughFibers) {
  LaunchConfig config;
  config.grid = {2, 3, 4};
  config.block = {5, 7, 3};
  checkIndices(engine, threadKernel(whereAmIThread, "where_am_i"), config);
}

TEST_F(LaunchTest, TwoDimensionalGrid) {
  LaunchConfig config;
  config.grid = {6, 5, 1};
  config.block = {16, 8, 1};
  checkIndices(engine, blockKernel(whereAmIThread, whereAmIBlock, "where_am_i"), config);
}

TEST_F(LaunchTest, LargeGridYAndZ) {
  LaunchConfig config;
  config.grid = {1, 65535, 2};
  config.block = {1, 1, 1};
  checkIndices(engine, blockKernel(whereAmIThread, whereAmIBlock, "where_am_i"), config);
}

TEST_F(LaunchTest, AtomicsFromManyBlocksCountExactly) {
  for (bool fibers : {false, true}) {
    std::vector<uint64_t> counters(17, 0);
    uint64_t *data = counters.data();
    void *args[] = {&data};
    KernelImage image = fibers ? threadKernel(atomicCountThread, "count")
                               : blockKernel(atomicCountThread, atomicCountBlock, "count");
    uint32_t blocks = fibers ? 200 : 2000;
    ASSERT_EQ(outcome(engine.launch(image, config1d(blocks, 256), args)), "ok");
    EXPECT_EQ(counters[0], uint64_t(blocks) * 256);
    for (int bucket = 0; bucket < 16; ++bucket)
      EXPECT_EQ(counters[1 + bucket], uint64_t(blocks) * 16) << "bucket " << bucket;
  }
}

TEST_F(LaunchTest, StaticAndDynamicSharedMemoryAreSeparateZeroedAndPerBlock) {
  constexpr uint32_t threads = 200, blocks = 9;
  std::vector<int32_t> out(1 + threads * blocks, -7);
  out[0] = 0;
  int32_t *data = out.data();
  void *args[] = {&data};
  // 12 bytes of static shared memory, padded to 16 before the dynamic part.
  KernelImage image = threadKernel(sharedLayoutThread, "shared_layout", 12);
  ASSERT_EQ(outcome(engine.launch(image, config1d(blocks, threads, threads * 4), args)), "ok");
  EXPECT_EQ(out[0], 0) << "shared memory was not zeroed";
  for (uint32_t block = 0; block < blocks; ++block)
    for (uint32_t id = 0; id < threads; ++id)
      ASSERT_EQ(out[1 + block * threads + id], int32_t((id + 1) % threads * 10 + block));
}

TEST_F(LaunchTest, MaximumSharedMemoryIsUsable) {
  std::vector<int32_t> out(1 + 32, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  KernelImage image = threadKernel(sharedLayoutThread, "shared_layout", 16);
  EXPECT_EQ(outcome(engine.launch(image, config1d(1, 32, 48 * 1024 - 16), args)), "ok");
}

TEST(EngineWorkers, SingleWorkerRunsEverything) {
  EngineOptions options;
  options.workerCount = 1;
  Engine engine(options);
  EXPECT_EQ(engine.workerCount(), 1u);
  checkVectorAdd(engine, blockKernel(vectorAddThread, vectorAddBlock, "vector_add"),
                 config1d(64, 64), 5000);
  checkVectorAdd(engine, threadKernel(vectorAddThread, "vector_add"), config1d(8, 64), 5000);
}

TEST(EngineWorkers, DefaultIsHardwareConcurrency) {
  Engine engine;
  EXPECT_EQ(engine.workerCount(), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(EngineWorkers, MoreWorkersThanCores) {
  EngineOptions options;
  options.workerCount = 9;
  Engine engine(options);
  checkVectorAdd(engine, threadKernel(vectorAddThread, "vector_add"), config1d(31, 64), 10000);
}

TEST(EngineWorkers, ConcurrentLaunchesFromSeveralHostThreads) {
  EngineOptions options;
  options.workerCount = 3;
  Engine engine(options);
  std::atomic<int> failures{0};
  std::vector<std::thread> hosts;
  for (int host = 0; host < 4; ++host)
    hosts.emplace_back([&, host] {
      for (int round = 0; round < 15; ++round) {
        int64_t n = 1000 + host * 517 + round * 33;
        std::vector<float> a(n, float(host)), b(n, float(round)), out(n, -1.0f);
        const float *pa = a.data(), *pb = b.data();
        float *po = out.data();
        void *args[] = {&pa, &pb, &po, &n};
        KernelImage image = round % 2 ? threadKernel(vectorAddThread, "vector_add")
                                      : blockKernel(vectorAddThread, vectorAddBlock, "vector_add");
        if (!engine.launch(image, config1d(1 + round % 5, 64), args).ok())
          ++failures;
        for (float value : out)
          if (value != float(host + round)) {
            ++failures;
            break;
          }
      }
    });
  for (std::thread &host : hosts)
    host.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(EngineWorkers, ForkedChildStartsItsOwnWorkers) {
  Engine engine;
  checkVectorAdd(engine, blockKernel(vectorAddThread, vectorAddBlock, "vector_add"),
                 config1d(8, 64), 1000);
  pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // The parent's workers do not exist here.
    int64_t n = 5000;
    std::vector<float> a(n, 1.0f), b(n, 2.0f), out(n, 0.0f);
    const float *pa = a.data(), *pb = b.data();
    float *po = out.data();
    void *args[] = {&pa, &pb, &po, &n};
    bool ok =
        engine.launch(threadKernel(vectorAddThread, "vector_add"), config1d(10, 64), args).ok();
    for (float value : out)
      ok = ok && value == 3.0f;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  checkVectorAdd(engine, threadKernel(vectorAddThread, "vector_add"), config1d(8, 64), 1000);
}

// A kernel with a 1 MiB local array.
extern "C" void bigLocalThread(KilnCpuThread *t, void *const *args) {
  volatile uint8_t local[1 << 20];
  for (size_t i = 0; i < sizeof local; i += 4096)
    local[i] = uint8_t(i >> 12);
  auto *out = arg<uint32_t *>(args, 0);
  out[globalId(t)] = local[4096 * 17] + local[sizeof local - 4096];
}

std::atomic<int> bigLocalBlockCalls{0};

extern "C" void bigLocalBlock(KilnCpuThread *t, void *const *args) {
  ++bigLocalBlockCalls;
  forEachThread(t, args, bigLocalThread);
}

void checkBigLocal(Engine &engine, const KernelImage &image) {
  std::vector<uint32_t> out(64, 0);
  uint32_t *data = out.data();
  void *args[] = {&data};
  ASSERT_EQ(outcome(engine.launch(image, config1d(2, 32), args)), "ok");
  for (uint32_t value : out)
    EXPECT_EQ(value, 17u + 255u);
}

TEST(EngineWorkers, LocalArraysFitOnWorkerAndFiberStacks) {
  // Fibers get localBytesPerThread more stack; block entries run on the
  // workers' 16 MiB stacks.
  Engine engine;
  KernelImage image = blockKernel(bigLocalThread, bigLocalBlock, "big_local");
  image.localBytesPerThread = 1 << 20;
  bigLocalBlockCalls = 0;
  checkBigLocal(engine, image);
  EXPECT_EQ(bigLocalBlockCalls.load(), 2);
  image.blockEntry = nullptr;
  checkBigLocal(engine, image);
}

TEST(EngineWorkers, LocalArraysTooBigForWorkerStacksRunOnFibers) {
  EngineOptions options;
  options.workerStackBytes = size_t(3) << 19; // 1.5 MiB
  Engine engine(options);
  KernelImage image = blockKernel(bigLocalThread, bigLocalBlock, "big_local");
  image.localBytesPerThread = 1 << 20;
  bigLocalBlockCalls = 0;
  checkBigLocal(engine, image);
  EXPECT_EQ(bigLocalBlockCalls.load(), 0);
}

// --- Launch validation --------------------------------------------------===//

std::string rejection(KernelImage image, Dim3 grid, Dim3 block, uint32_t dynamicShared = 0) {
  LaunchConfig config;
  config.grid = grid;
  config.block = block;
  config.dynamicSharedBytes = dynamicShared;
  Engine engine;
  LaunchResult result = engine.launch(image, config, nullptr);
  EXPECT_EQ(result.kind(), LaunchErrorKind::InvalidConfiguration) << result.message();
  return result.message();
}

TEST(LaunchValidation, RejectsZeroDimensions) {
  KernelImage image = threadKernel(vectorAddThread, "k");
  EXPECT_EQ(rejection(image, {1, 0, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': grid dimension y is 0; every dimension must be at "
            "least 1");
  EXPECT_EQ(rejection(image, {0, 1, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': grid dimension x is 0; every dimension must be at "
            "least 1");
  EXPECT_EQ(rejection(image, {1, 1, 1}, {32, 1, 0}),
            "invalid launch of kernel 'k': block dimension z is 0; every dimension must be at "
            "least 1");
}

TEST(LaunchValidation, RejectsOversizedBlocks) {
  KernelImage image = threadKernel(vectorAddThread, "k");
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1025, 1, 1}),
            "invalid launch of kernel 'k': block dimension x is 1025, above the limit of 1024");
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 2048, 1}),
            "invalid launch of kernel 'k': block dimension y is 2048, above the limit of 1024");
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 1, 65}),
            "invalid launch of kernel 'k': block dimension z is 65, above the limit of 64");
  EXPECT_EQ(rejection(image, {1, 1, 1}, {32, 33, 1}),
            "invalid launch of kernel 'k': a block of 32 x 33 x 1 = 1056 threads is above the "
            "limit of 1024 threads per block");
}

TEST(LaunchValidation, RejectsBlocksAboveTheKernelsLaunchBounds) {
  KernelImage image = threadKernel(vectorAddThread, "k");
  image.maxThreadsPerBlock = 128;
  EXPECT_EQ(rejection(image, {1, 1, 1}, {16, 16, 1}),
            "invalid launch of kernel 'k': a block of 256 threads is above the kernel's "
            "launch_bounds of 128 threads per block (a GPU refuses it: CUDA_ERROR_INVALID_VALUE)");
}

TEST(LaunchValidation, RejectsOversizedGrids) {
  KernelImage image = threadKernel(vectorAddThread, "k");
  EXPECT_EQ(rejection(image, {0x80000000u, 1, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': grid dimension x is 2147483648, above the limit of "
            "2147483647");
  EXPECT_EQ(rejection(image, {1, 65536, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': grid dimension y is 65536, above the limit of 65535");
  EXPECT_EQ(rejection(image, {1, 1, 70000}, {1, 1, 1}),
            "invalid launch of kernel 'k': grid dimension z is 70000, above the limit of 65535");
}

TEST(LaunchValidation, RejectsTooMuchSharedMemory) {
  KernelImage image = threadKernel(vectorAddThread, "k", 40000);
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 1, 1}, 10000),
            "invalid launch of kernel 'k': 40000 bytes of static and 10000 bytes of dynamic "
            "shared memory (50000 bytes) are above the limit of 49152 bytes per block");
  EXPECT_EQ(rejection(threadKernel(vectorAddThread, "k"), {1, 1, 1}, {1, 1, 1}, 49153),
            "invalid launch of kernel 'k': 0 bytes of static and 49153 bytes of dynamic shared "
            "memory (49153 bytes) are above the limit of 49152 bytes per block");
}

TEST(LaunchValidation, RejectsAnImageWithoutEntries) {
  KernelImage image;
  image.name = "k";
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': the kernel image has no entry point");
}

TEST(LaunchValidation, RejectsABlockEntryAloneWithLocalMemory) {
  KernelImage image;
  image.name = "k";
  image.blockEntry = vectorAddThread;
  image.localBytesPerThread = 64;
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 1, 1}),
            "invalid launch of kernel 'k': the kernel image has a block entry alone but 64 "
            "bytes of local memory per thread, which need a thread entry");
}

TEST(LaunchValidation, AcceptsTheLimits) {
  KernelImage image = threadKernel(vectorAddThread, "k", 48 * 1024);
  LaunchConfig config;
  config.block = {1024, 1, 1};
  EXPECT_TRUE(validateLaunch(image, config).ok());
  config.block = {1, 1024, 1};
  EXPECT_TRUE(validateLaunch(image, config).ok());
  config.block = {16, 1, 64};
  config.grid = {0x7fffffff, 65535, 65535};
  EXPECT_TRUE(validateLaunch(image, config).ok());
}

TEST(LaunchValidation, UnnamedKernels) {
  KernelImage image;
  EXPECT_EQ(rejection(image, {1, 1, 1}, {1, 1, 1}),
            "invalid launch of kernel '<unnamed kernel>': the kernel image has no entry point");
}

// --- nanosleep ----------------------------------------------------------===//

extern "C" void sleeperThread(KilnCpuThread *t, void *const *) {
  t->services->nanosleep(t, 200000);
}

extern "C" void sleeperBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, sleeperThread);
}

TEST(Nanosleep, SleepsAboutThatLong) {
  EngineOptions options;
  options.workerCount = 1;
  Engine engine(options);
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(outcome(engine.launch(blockKernel(sleeperThread, sleeperBlock, "sleep"),
                                  config1d(1, 10), nullptr)),
            "ok");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::microseconds(10 * 200));
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

// Thread 0 polls a flag in shared memory that thread 1 sets, sleeping in
// between; a barrier makes it a fiber kernel. nanosleep lets thread 1 run.
extern "C" void pollFlagThread(KilnCpuThread *t, void *const *args) {
  auto *flag = static_cast<volatile int32_t *>(t->sharedMemory);
  auto *out = arg<int32_t *>(args, 0);
  uint32_t id = linearThreadId(t);
  if (id == 0) {
    int32_t polls = 0;
    while (*flag == 0) {
      t->services->nanosleep(t, 100);
      ++polls;
    }
    out[0] = polls;
  } else if (id == 1) {
    *flag = 1;
  }
  t->services->syncthreads(t);
}

TEST(Nanosleep, YieldsToOtherThreadsOfTheBlock) {
  Engine engine;
  int32_t polls = -1;
  int32_t *data = &polls;
  void *args[] = {&data};
  ASSERT_EQ(outcome(engine.launch(threadKernel(pollFlagThread, "poll", 4), config1d(1, 2), args)),
            "ok");
  EXPECT_EQ(polls, 1);
}

} // namespace
} // namespace kiln::cpu_engine::test
