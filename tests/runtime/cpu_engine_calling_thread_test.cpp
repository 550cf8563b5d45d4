//===- tests/runtime/cpu_engine_calling_thread_test.cpp - Small grids -----===//
//
// Grids too small to be worth waking the worker pool run on the thread that
// launches them: where they run, that a long one still answers its
// StopCheck (and goes on when the check says so), barriers, exceptions and
// launches from several host threads at once.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <pthread.h>
#include <thread>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

// Every thread writes the host thread it runs on.
extern "C" void whereRunThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<pthread_t *>(args, 0);
  uint64_t block = t->blockIdx[0] + uint64_t(t->gridDim[0]) * t->blockIdx[1];
  out[block * threadsPerBlock(t) + linearThreadId(t)] = pthread_self();
}

extern "C" void whereRunBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, whereRunThread);
}

std::vector<pthread_t> hostThreadsOf(Engine &engine, const KernelImage &image,
                                     const LaunchConfig &config) {
  size_t threads = size_t(config.grid.x) * config.grid.y * config.block.x * config.block.y;
  std::vector<pthread_t> out(threads, pthread_t());
  pthread_t *data = out.data();
  void *args[] = {&data};
  EXPECT_EQ(outcome(engine.launch(image, config, args)), "ok");
  return out;
}

TEST(CallingThread, OneBlockGridsRunOnTheCallingThread) {
  Engine engine;
  LaunchConfig config;
  config.block = {8, 4, 1};
  for (const KernelImage &image :
       {blockKernel(whereRunThread, whereRunBlock, "where"), threadKernel(whereRunThread, "where")})
    for (pthread_t host : hostThreadsOf(engine, image, config))
      EXPECT_TRUE(pthread_equal(host, pthread_self()))
          << "a one-block launch of '" << image.name
          << "' (block entry: " << (image.blockEntry != nullptr)
          << ") ran on a worker instead of the calling thread";
}

TEST(CallingThread, LargeGridsRunOnTheWorkers) {
  Engine engine;
  LaunchConfig config = config1d(256, 64);
  for (pthread_t host :
       hostThreadsOf(engine, blockKernel(whereRunThread, whereRunBlock, "where"), config))
    ASSERT_FALSE(pthread_equal(host, pthread_self()))
        << "a grid of 256 blocks of 64 threads must run on the worker pool";
}

TEST(CallingThread, BlockEntriesWithLargeLocalArraysRunOnTheWorkers) {
  // The calling thread's stack is not the engine's to size.
  Engine engine;
  KernelImage image = blockKernel(whereRunThread, whereRunBlock, "where");
  image.localBytesPerThread = 1 << 20;
  for (pthread_t host : hostThreadsOf(engine, image, config1d(1, 32)))
    ASSERT_FALSE(pthread_equal(host, pthread_self()))
        << "a block entry with 1 MiB of local memory per thread must run on a worker's stack";
}

// Generated code's loop back-edge: while the engine's word is set, call
// `interrupted`, which returns when the launch is to go on. Spins until it
// has been asked to poll `args[1]` times, or for at most 10 s.
extern "C" void pollCountingThread(KilnCpuThread *t, void *const *args) {
  auto *polls = arg<std::atomic<int> *>(args, 0);
  int wanted = arg<int>(args, 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (polls->load() < wanted && std::chrono::steady_clock::now() < deadline)
    if (*t->interrupt) {
      t->services->interrupted(t);
      ++*polls;
    }
}

extern "C" void pollCountingBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, pollCountingThread);
}

TEST(CallingThread, ALongLaunchAsksItsStopCheckAndGoesOnWhenToldTo) {
  struct Checks {
    std::atomic<int> count{0};
    pthread_t caller = pthread_self();
    std::atomic<bool> elsewhere{false};
  };
  for (bool byBlock : {false, true}) {
    Checks checks;
    StopCheck stop{[](void *context) {
                     auto *seen = static_cast<Checks *>(context);
                     ++seen->count;
                     if (!pthread_equal(pthread_self(), seen->caller))
                       seen->elsewhere = true;
                     return false;
                   },
                   &checks};
    Engine engine;
    std::atomic<int> polls{0};
    std::atomic<int> *pollsPointer = &polls;
    int wanted = 3;
    void *args[] = {&pollsPointer, &wanted};
    KernelImage image = byBlock ? blockKernel(pollCountingThread, pollCountingBlock, "poll")
                                : threadKernel(pollCountingThread, "poll");
    EXPECT_EQ(outcome(engine.launch(image, config1d(1, 1), args, stop)), "ok")
        << "a StopCheck that says go on must let the launch finish";
    EXPECT_EQ(polls.load(), wanted)
        << "the kernel must be asked to poll while it runs, and go on after each poll";
    EXPECT_GE(checks.count.load(), wanted);
    EXPECT_FALSE(checks.elsewhere.load())
        << "the StopCheck must run on the thread that launched (Python handles signals there)";
  }
}

extern "C" void spinUntilStoppedThread(KilnCpuThread *t, void *const *) {
  for (;;)
    if (*t->interrupt)
      t->services->interrupted(t);
}

extern "C" void spinUntilStoppedBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, spinUntilStoppedThread);
}

TEST(CallingThread, AStopCheckEndsAOneBlockLaunchThatNeverFinishes) {
  struct Polls {
    int count = 0;
  } polls;
  StopCheck stop{[](void *context) { return ++static_cast<Polls *>(context)->count == 3; }, &polls};
  for (bool byBlock : {false, true}) {
    polls.count = 0;
    Engine engine;
    KernelImage image = byBlock ? blockKernel(spinUntilStoppedThread, spinUntilStoppedBlock, "spin")
                                : threadKernel(spinUntilStoppedThread, "spin");
    LaunchResult result = engine.launch(image, config1d(1, 64), nullptr, stop);
    ASSERT_EQ(result.kind(), LaunchErrorKind::Interrupted) << result.message();
    EXPECT_EQ(result.message(), "launch of kernel 'spin' interrupted");
    EXPECT_EQ(polls.count, 3) << "the launch must stop once the check says so";
  }
}

// @cuda.jit
// def reverse(out):
//     s = cuda.shared.array(64, int32)
//     s[threadIdx.x] = threadIdx.x
//     cuda.syncthreads()
//     out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x]
extern "C" void reverseThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  auto *shared = static_cast<int32_t *>(t->sharedMemory);
  shared[t->threadIdx[0]] = int32_t(t->threadIdx[0]);
  t->services->syncthreads(t);
  out[t->threadIdx[0]] = shared[t->blockDim[0] - 1 - t->threadIdx[0]];
}

TEST(CallingThread, OneBlockWithABarrierRunsAsFibers) {
  Engine engine;
  std::vector<int32_t> out(64, -1);
  int32_t *data = out.data();
  void *args[] = {&data};
  ASSERT_EQ(
      outcome(engine.launch(threadKernel(reverseThread, "reverse", 256), config1d(1, 64), args)),
      "ok");
  for (int32_t i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], 63 - i) << "thread " << i << " read its mirror before the barrier";
}

extern "C" void raiseInThreadFiveThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  if (t->threadIdx[0] == 5)
    t->services->raiseException(t, "ZeroDivisionError", "division by zero");
  out[t->threadIdx[0]] = 1;
}

TEST(CallingThread, AnExceptionInTheOnlyBlockFailsTheLaunchAndTheOtherThreadsRun) {
  Engine engine;
  std::vector<int32_t> out(8, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  LaunchResult result =
      engine.launch(threadKernel(raiseInThreadFiveThread, "raiser"), config1d(1, 8), args);
  ASSERT_EQ(result.kind(), LaunchErrorKind::KernelException) << result.message();
  EXPECT_EQ(result.message(), "ZeroDivisionError: tid=[0, 0, 5] ctaid=[0, 0, 0]: division by zero");
  for (int32_t i = 0; i < 8; ++i)
    EXPECT_EQ(out[i], i == 5 ? 0 : 1) << "thread " << i;
  EXPECT_EQ(
      outcome(engine.launch(threadKernel(reverseThread, "reverse", 256), config1d(1, 8), args)),
      "ok")
      << "the engine must run the next launch";
}

TEST(CallingThread, OneBlockLaunchesFromSeveralHostThreadsAtOnce) {
  Engine engine;
  std::atomic<int> failures{0};
  std::vector<std::thread> hosts;
  for (int host = 0; host < 4; ++host)
    hosts.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        std::vector<int32_t> out(32, -1);
        int32_t *data = out.data();
        void *args[] = {&data};
        KernelImage image = threadKernel(reverseThread, "reverse", 256);
        if (!engine.launch(image, config1d(1, 32), args).ok())
          ++failures;
        for (int32_t i = 0; i < 32; ++i)
          if (out[i] != 31 - i) {
            ++failures;
            break;
          }
      }
    });
  for (std::thread &host : hosts)
    host.join();
  EXPECT_EQ(failures.load(), 0) << "concurrent one-block launches interfered";
}

} // namespace
} // namespace kiln::cpu_engine::test
