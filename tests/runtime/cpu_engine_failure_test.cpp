//===- tests/runtime/cpu_engine_failure_test.cpp - Raises and deadlocks ---===//
//
// Exceptions raised by kernels are reported as Numba reports them; blocks
// whose threads can never all proceed fail the launch instead of hanging;
// block entries that break the ABI fail it too.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <unistd.h>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

// @cuda.jit(debug=True)
// def divide(out, at_block, at_thread):
//     i = cuda.grid(1)
//     if cuda.blockIdx.x == at_block and cuda.threadIdx.x == at_thread:
//         out[i] = 1 // 0          # ZeroDivisionError
//     else:
//         out[i] = 1
extern "C" void divideThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int8_t *>(args, 0);
  auto atBlock = arg<uint32_t>(args, 1);
  auto atThread = arg<uint32_t>(args, 2);
  if (t->blockIdx[0] == atBlock && t->threadIdx[0] == atThread)
    t->services->raiseException(t, "ZeroDivisionError", "division by zero");
  out[globalId(t)] = 1;
}

TEST(KernelExceptions, ReportedAsNumbaDoes) {
  constexpr uint32_t blocks = 3907, threads = 257;
  std::vector<int8_t> out(size_t(blocks) * threads, 0);
  int8_t *data = out.data();
  uint32_t atBlock = 3906, atThread = 256;
  void *args[] = {&data, &atBlock, &atThread};
  Engine engine;
  LaunchResult result =
      engine.launch(threadKernel(divideThread, "divide"), config1d(blocks, threads), args);
  ASSERT_EQ(result.kind(), LaunchErrorKind::KernelException);
  EXPECT_EQ(result.message(),
            "ZeroDivisionError: tid=[0, 0, 256] ctaid=[0, 0, 3906]: division by zero");
  ASSERT_NE(result.exception(), nullptr);
  EXPECT_EQ(result.exception()->className, "ZeroDivisionError");
  EXPECT_EQ(result.exception()->argument, "tid=[0, 0, 256] ctaid=[0, 0, 3906]: division by zero");
  EXPECT_EQ(result.exception()->threadIdx.x, 256u);
  EXPECT_EQ(result.exception()->blockIdx.x, 3906u);
  // The raising thread ended there; every other thread ran to completion.
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], i == out.size() - 1 ? 0 : 1) << "at " << i;
}

// Every thread with threadIdx.x % 50 == 7 raises, then the others meet at a
// barrier: it completes without them.
extern "C" void manyRaisersThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  if (t->threadIdx[0] % 50 == 7)
    t->services->raiseException(t, "IndexError", nullptr);
  t->services->syncthreads(t);
  uint32_t block =
      t->blockIdx[0] + t->gridDim[0] * (t->blockIdx[1] + t->gridDim[1] * t->blockIdx[2]);
  out[block * t->blockDim[0] + t->threadIdx[0]] = 1;
}

TEST(KernelExceptions, LowestBlockAndThreadIsReported) {
  for (unsigned workers : {1u, 4u}) {
    EngineOptions options;
    options.workerCount = workers;
    Engine engine(options);
    std::vector<int32_t> out(40 * 128, 0);
    int32_t *data = out.data();
    void *args[] = {&data};
    LaunchConfig config;
    config.grid = {10, 2, 2};
    config.block = {128, 1, 1};
    LaunchResult result = engine.launch(threadKernel(manyRaisersThread, "raisers"), config, args);
    // No message: Numba's format is just the position.
    EXPECT_EQ(result.message(), "IndexError: tid=[0, 0, 7] ctaid=[0, 0, 0]");
    int32_t finished = 0;
    for (int32_t value : out)
      finished += value;
    EXPECT_EQ(finished, 40 * (128 - 3));
  }
}

extern "C" void raiseInBlockEntryThread(KilnCpuThread *t, void *const *args) {
  if (t->threadIdx[0] == 3)
    t->services->raiseException(t, "AssertionError", "x > 0");
  arg<int32_t *>(args, 0)[globalId(t)] = 1;
}

extern "C" void raiseInBlockEntryBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, raiseInBlockEntryThread);
}

TEST(KernelExceptions, InABlockEntryEndTheBlock) {
  // Not something generated code does (kernels that raise get no block
  // entry), but it must not crash: the rest of that block is skipped.
  std::vector<int32_t> out(2 * 8, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  LaunchResult result = engine.launch(
      blockKernel(raiseInBlockEntryThread, raiseInBlockEntryBlock, "assert"), config1d(2, 8), args);
  EXPECT_EQ(result.message(), "AssertionError: tid=[0, 0, 3] ctaid=[0, 0, 0]: x > 0");
  EXPECT_EQ(out, (std::vector<int32_t>{1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0}));
}

// A raise without debug=True: every thread with threadIdx.x % 5 == 2 ends
// before the barrier, silently; the others meet there without it.
extern "C" void exitEarlyThread(KilnCpuThread *t, void *const *args) {
  if (t->threadIdx[0] % 5 == 2)
    t->services->exitThread(t);
  t->services->syncthreads(t);
  arg<int32_t *>(args, 0)[globalId(t)] = 1;
}

TEST(KernelExceptions, ExitThreadEndsTheThreadUnreported) {
  std::vector<int32_t> out(4 * 96, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  EXPECT_EQ(outcome(engine.launch(threadKernel(exitEarlyThread, "exit"), config1d(4, 96), args)),
            "ok");
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], i % 96 % 5 == 2 ? 0 : 1) << "at " << i;
}

extern "C" void exitInBlockEntryBlock(KilnCpuThread *t, void *const *) {
  t->services->exitThread(t);
}

TEST(AbiViolations, ExitThreadInABlockEntry) {
  Engine engine;
  LaunchResult result = engine.launch(blockKernel(exitEarlyThread, exitInBlockEntryBlock, "bad"),
                                      config1d(2, 32), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Internal);
  EXPECT_EQ(result.message(), "kernel 'bad' called exitThread from its block entry, which must "
                              "not end a thread early");
}

TEST(KernelExceptions, EngineIsReusableAfterwards) {
  Engine engine;
  std::vector<int8_t> out(64, 0);
  int8_t *data = out.data();
  uint32_t atBlock = 1, atThread = 3;
  void *args[] = {&data, &atBlock, &atThread};
  EXPECT_FALSE(engine.launch(threadKernel(divideThread, "divide"), config1d(2, 32), args).ok());
  atBlock = 5;
  EXPECT_EQ(outcome(engine.launch(threadKernel(divideThread, "divide"), config1d(2, 32), args)),
            "ok");
}

// --- Deadlocks -----------------------------------------------------------===//

LaunchResult launchWithTimeLimit(Engine &engine, const KernelImage &image, LaunchConfig config,
                                 void *const *args) {
  auto start = std::chrono::steady_clock::now();
  LaunchResult result = engine.launch(image, config, args);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  return result;
}

// Lanes 0-15 wait for the whole warp in syncwarp; lanes 16-31 wait for the
// whole block in syncthreads. Neither can finish.
extern "C" void warpVersusBlockThread(KilnCpuThread *t, void *const *) {
  if (t->laneId < 16)
    t->services->syncwarp(t, 0xffffffffu);
  else
    t->services->syncthreads(t);
}

TEST(Deadlocks, HalfAWarpInSyncwarpHalfInSyncthreads) {
  Engine engine;
  LaunchResult result = launchWithTimeLimit(engine, threadKernel(warpVersusBlockThread, "mismatch"),
                                            config1d(1, 32), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Deadlock);
  EXPECT_EQ(result.message(),
            "deadlock in kernel 'mismatch', block (0, 0, 0): no thread can make progress (32 of 32 "
            "threads alive); threads (0, 0, 0) to (15, 0, 0) wait in syncwarp(mask=0xffffffff) of "
            "warp 0 for lanes 16-31 to reach the same collective; threads (16, 0, 0) to (31, 0, "
            "0) wait in syncthreads (16 of 32 live threads arrived)");
}

// Lanes 0-15 sync among themselves and go on to syncthreads; lanes 16-31 ask
// for the whole warp, which the first half never joins again.
extern "C" void mismatchedSyncwarpMasksThread(KilnCpuThread *t, void *const *) {
  if (t->laneId < 16) {
    t->services->syncwarp(t, 0x0000ffffu);
    t->services->syncthreads(t);
  } else {
    t->services->syncwarp(t, 0xffffffffu);
  }
}

TEST(Deadlocks, MismatchedSyncwarpMasks) {
  Engine engine;
  LaunchConfig config;
  config.grid = {3, 2, 1};
  config.block = {8, 4, 1};
  LaunchResult result = launchWithTimeLimit(
      engine, threadKernel(mismatchedSyncwarpMasksThread, "masks"), config, nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Deadlock);
  // Every block deadlocks; the lowest one is reported.
  EXPECT_EQ(result.message(),
            "deadlock in kernel 'masks', block (0, 0, 0): no thread can make progress (32 of 32 "
            "threads alive); threads (0, 0, 0) to (7, 1, 0) wait in syncthreads (16 of 32 live "
            "threads arrived); threads (0, 2, 0) to (7, 3, 0) wait in syncwarp(mask=0xffffffff) "
            "of warp 0 for lanes 0-15 to reach the same collective");
}

// Half a warp shuffles, the other half votes: not the same collective.
extern "C" void shuffleVersusVoteThread(KilnCpuThread *t, void *const *) {
  if (t->laneId % 2)
    t->services->shuffle(t, 0xffffffffu, KILN_SHFL_IDX, 1, 0, 0x1f);
  else
    t->services->vote(t, 0xffffffffu, KILN_VOTE_ANY, 1);
}

TEST(Deadlocks, DifferentCollectivesInOneWarp) {
  Engine engine;
  LaunchResult result = launchWithTimeLimit(
      engine, threadKernel(shuffleVersusVoteThread, "collectives"), config1d(1, 64), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Deadlock);
  EXPECT_NE(result.message().find("thread (0, 0, 0) waits in any_sync(mask=0xffffffff) of warp 0 "
                                  "for lanes 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, "
                                  "29, 31 to reach the same collective; thread (1, 0, 0) waits in "
                                  "shfl_sync(mask=0xffffffff) of warp 0 for lanes 0, 2, 4,"),
            std::string::npos)
      << result.message();
  EXPECT_NE(result.message().find("; and 56 more threads"), std::string::npos) << result.message();
}

// Thread 0 waits at a barrier nobody else reaches: the rest of its warp
// waits in a syncwarp that needs it. (The second warp's syncwarp completes,
// and its threads exit.)
extern "C" void loneBarrierThread(KilnCpuThread *t, void *const *) {
  if (linearThreadId(t) == 0)
    t->services->syncthreadsReduce(t, KILN_BARRIER_OR, 1);
  else
    t->services->syncwarp(t, 0xffffffffu);
}

TEST(Deadlocks, OnASingleWorkerToo) {
  EngineOptions options;
  options.workerCount = 1;
  Engine engine(options);
  LaunchResult result = launchWithTimeLimit(engine, threadKernel(loneBarrierThread, "lone"),
                                            config1d(200, 64), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Deadlock);
  EXPECT_EQ(result.message(),
            "deadlock in kernel 'lone', block (0, 0, 0): no thread can make progress (32 of 64 "
            "threads alive); thread (0, 0, 0) waits in syncthreads_or (1 of 32 live threads "
            "arrived); threads (1, 0, 0) to (31, 0, 0) wait in syncwarp(mask=0xffffffff) of warp "
            "0 for lane 0 to reach the same collective");
}

TEST(Deadlocks, EngineIsReusableAfterwards) {
  Engine engine;
  EXPECT_FALSE(
      engine.launch(threadKernel(warpVersusBlockThread, "mismatch"), config1d(4, 32), nullptr)
          .ok());
  std::vector<int8_t> out(64, 0);
  int8_t *data = out.data();
  uint32_t atBlock = 9, atThread = 0;
  void *args[] = {&data, &atBlock, &atThread};
  EXPECT_EQ(outcome(engine.launch(threadKernel(divideThread, "divide"), config1d(2, 32), args)),
            "ok");
  EXPECT_EQ(out, std::vector<int8_t>(64, 1));
}

TEST(Deadlocks, LargeGridsFailFast) {
  Engine engine;
  LaunchResult result = launchWithTimeLimit(engine, threadKernel(warpVersusBlockThread, "mismatch"),
                                            config1d(1'000'000, 32), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Deadlock);
  EXPECT_TRUE(result.message().starts_with("deadlock in kernel 'mismatch', block (0, 0, 0):"))
      << result.message();
}

// Block `deadlockAt` deadlocks, block `raiseAt` raises, the others finish.
extern "C" void mixedFailuresThread(KilnCpuThread *t, void *const *args) {
  auto deadlockAt = arg<uint32_t>(args, 0);
  auto raiseAt = arg<uint32_t>(args, 1);
  if (t->blockIdx[0] == raiseAt && t->threadIdx[0] == 5)
    t->services->raiseException(t, "ValueError", "bad");
  if (t->blockIdx[0] == deadlockAt)
    warpVersusBlockThread(t, args);
}

TEST(Failures, TheLowestBlockIsReportedWhateverTheSchedule) {
  for (unsigned workers : {1u, 2u, 4u}) {
    EngineOptions options;
    options.workerCount = workers;
    Engine engine(options);
    for (int round = 0; round < 10; ++round) {
      uint32_t deadlockAt = 37, raiseAt = 12;
      void *args[] = {&deadlockAt, &raiseAt};
      KernelImage image = threadKernel(mixedFailuresThread, "mixed");
      EXPECT_EQ(engine.launch(image, config1d(100, 32), args).message(),
                "ValueError: tid=[0, 0, 5] ctaid=[0, 0, 12]: bad");
      deadlockAt = 12;
      raiseAt = 37;
      EXPECT_TRUE(engine.launch(image, config1d(100, 32), args)
                      .message()
                      .starts_with("deadlock in kernel 'mixed', block (12, 0, 0):"));
      // In one block, the deadlock is reported rather than the exception.
      raiseAt = 12;
      EXPECT_EQ(engine.launch(image, config1d(100, 32), args).kind(), LaunchErrorKind::Deadlock);
    }
  }
}

// --- Faults ----------------------------------------------------------------===//

/// Recurses until `limit`, which is far more than any stack holds.
[[gnu::noinline]] int recurse(volatile char *previous, int depth, int limit) {
  volatile char frame[1024];
  frame[0] = char(previous ? previous[0] + 1 : depth);
  if (depth == limit)
    return frame[0];
  return recurse(frame, depth + 1, limit) + frame[0];
}

extern "C" void overflowThread(KilnCpuThread *t, void *const *) {
  t->services->syncthreads(t);
  if (linearThreadId(t) == 3)
    recurse(nullptr, 0, 1 << 30);
}

void reportFault(int) {
  const char message[] = "fault handled on the alternate stack\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(3);
}

TEST(Faults, FiberStackOverflowReachesTheProcessHandler) {
  // As Python's faulthandler does: a SIGSEGV handler on an alternate stack.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction action{};
        action.sa_handler = reportFault;
        action.sa_flags = SA_ONSTACK;
        sigaction(SIGSEGV, &action, nullptr);
        Engine engine;
        (void)engine.launch(threadKernel(overflowThread, "overflow"), config1d(1, 8), nullptr);
      },
      ::testing::ExitedWithCode(3), "fault handled on the alternate stack");
}

// --- Index errors and interrupts --------------------------------------===//

// What checked code does at a[i] with i outside a's 10 elements: the
// subscript is site 1 of the kernel's table.
extern "C" void indexErrorThread(KilnCpuThread *t, void *const *args) {
  int64_t i = globalId(t);
  int64_t shape[] = {10};
  if (i >= 10)
    t->services->raiseIndexError(t, "array 'a'", 1, i, 0, 1, shape);
  arg<int32_t *>(args, 0)[i] = 1;
}

extern "C" void indexErrorBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, indexErrorThread);
}

TEST(IndexErrors, NameTheArrayIndexShapeKernelAndLine) {
  for (bool byBlock : {false, true}) {
    std::vector<int32_t> out(16, 0);
    int32_t *data = out.data();
    void *args[] = {&data};
    Engine engine;
    KernelImage image = byBlock ? blockKernel(indexErrorThread, indexErrorBlock, "scale")
                                : threadKernel(indexErrorThread, "scale");
    const std::string sites[] = {"kernels.py:3", "kernels.py:7"};
    image.sites = sites;
    image.siteCount = 2;
    LaunchResult result = engine.launch(image, config1d(2, 8), args);
    ASSERT_EQ(result.kind(), LaunchErrorKind::KernelException) << result.message();
    EXPECT_EQ(result.message(),
              "IndexError: tid=[0, 0, 2] ctaid=[0, 0, 1]: index 10 is out of bounds for axis 0 "
              "with size 10 (array 'a' of shape (10,), in kernel 'scale' at kernels.py:7)");
    for (size_t i = 10; i < out.size(); ++i)
      EXPECT_EQ(out[i], 0) << "thread " << i << " wrote past the array";
  }
}

TEST(IndexErrors, OfASiteOutsideTheTableNameNoLine) {
  std::vector<int32_t> out(16, 0);
  int32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  KernelImage image = threadKernel(indexErrorThread, "scale");
  const std::string sites[] = {"kernels.py:3"};
  image.sites = sites;
  image.siteCount = 1;
  LaunchResult result = engine.launch(image, config1d(2, 8), args);
  ASSERT_EQ(result.kind(), LaunchErrorKind::KernelException) << result.message();
  EXPECT_EQ(result.message(),
            "IndexError: tid=[0, 0, 2] ctaid=[0, 0, 1]: index 10 is out of bounds for axis 0 "
            "with size 10 (array 'a' of shape (10,), in kernel 'scale')");
}

// Generated code's loop back-edge: poll the engine's word.
extern "C" void spinThread(KilnCpuThread *t, void *const *) {
  for (;;)
    if (*t->interrupt)
      t->services->interrupted(t);
}

extern "C" void spinBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, spinThread);
}

TEST(Interrupts, AStopCheckEndsALaunchThatNeverFinishes) {
  struct Polls {
    int count = 0;
  } polls;
  StopCheck stop{[](void *context) { return ++static_cast<Polls *>(context)->count == 3; }, &polls};
  for (bool byBlock : {false, true}) {
    polls.count = 0;
    Engine engine;
    KernelImage image =
        byBlock ? blockKernel(spinThread, spinBlock, "spin") : threadKernel(spinThread, "spin");
    LaunchResult result = engine.launch(image, config1d(1000, 64), nullptr, stop);
    ASSERT_EQ(result.kind(), LaunchErrorKind::Interrupted) << result.message();
    EXPECT_EQ(result.message(), "launch of kernel 'spin' interrupted");
    EXPECT_EQ(polls.count, 3) << "the launch must stop once the check says so";
    std::vector<int32_t> out(16, 0);
    int32_t *data = out.data();
    void *args[] = {&data};
    ASSERT_EQ(engine.launch(threadKernel(indexErrorThread, "after"), config1d(1, 10), args).kind(),
              LaunchErrorKind::None)
        << "the engine must run the next launch";
  }
}

// --- ABI violations ------------------------------------------------------===//

extern "C" void barrierInBlockEntryThread(KilnCpuThread *t, void *const *) {
  t->services->syncthreads(t);
}

extern "C" void barrierInBlockEntryBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, barrierInBlockEntryThread);
}

TEST(AbiViolations, BarrierInABlockEntry) {
  Engine engine;
  LaunchResult result =
      engine.launch(blockKernel(barrierInBlockEntryThread, barrierInBlockEntryBlock, "bad"),
                    config1d(3, 32), nullptr);
  ASSERT_EQ(result.kind(), LaunchErrorKind::Internal);
  EXPECT_EQ(result.message(), "kernel 'bad' called syncthreads from its block entry, which must "
                              "not wait for other threads");
}

} // namespace
} // namespace kiln::cpu_engine::test
