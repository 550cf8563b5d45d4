//===- tests/runtime/cpu_engine_reference_test.cpp - The reference mode ---===//
//
// An engine in reference mode runs every launch as the programming model
// defines it: one thread at a time through the thread entry, block after
// block on one worker, never a block entry and never on the launching
// thread.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <pthread.h>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

std::atomic<int> blockEntryCalls{0};

// out[block * threads + thread] = the order in which the thread ran, from
// a counter every thread takes a ticket of.
extern "C" void ticketThread(KilnCpuThread *t, void *const *args) {
  auto *counter = arg<std::atomic<uint64_t> *>(args, 0);
  auto *out = arg<uint64_t *>(args, 1);
  uint64_t block = t->blockIdx[0] + uint64_t(t->gridDim[0]) * t->blockIdx[1];
  out[block * threadsPerBlock(t) + linearThreadId(t)] = counter->fetch_add(1);
}

extern "C" void ticketBlock(KilnCpuThread *t, void *const *args) {
  blockEntryCalls.fetch_add(1);
  forEachThread(t, args, ticketThread);
}

// out[0] = the host thread the kernel ran on.
extern "C" void hostThreadThread(KilnCpuThread *, void *const *args) {
  *arg<pthread_t *>(args, 0) = pthread_self();
}

// Each thread stores its index to shared memory, waits at the barrier and
// reads its neighbour's: the fibers of a block meet at a barrier.
extern "C" void neighbourThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint32_t *>(args, 0);
  auto *shared = static_cast<uint32_t *>(t->sharedMemory);
  uint32_t id = linearThreadId(t), n = threadsPerBlock(t);
  shared[id] = id;
  t->services->syncthreads(t);
  out[t->blockIdx[0] * n + id] = shared[(id + 1) % n];
}

EngineOptions referenceOptions() {
  EngineOptions options;
  options.reference = true;
  return options;
}

TEST(ReferenceMode, RunsOneThreadAtATimeInOrderAndNeverTheBlockEntry) {
  Engine engine(referenceOptions());
  ASSERT_TRUE(engine.reference());
  EXPECT_EQ(engine.workerCount(), 1u) << "a reference engine runs blocks one after the other";
  LaunchConfig config;
  config.grid = {5, 3, 1};
  config.block = {33, 2, 1};
  uint64_t threads = 5 * 3 * 33 * 2;
  std::vector<uint64_t> out(threads, ~uint64_t(0));
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> *counterAddress = &counter;
  uint64_t *data = out.data();
  void *args[] = {&counterAddress, &data};
  blockEntryCalls = 0;
  ASSERT_EQ(outcome(engine.launch(blockKernel(ticketThread, ticketBlock, "tickets"), config, args)),
            "ok");
  EXPECT_EQ(blockEntryCalls.load(), 0) << "the reference mode must not run the block entry";
  for (uint64_t i = 0; i < threads; ++i)
    ASSERT_EQ(out[i], i) << "thread " << i << " ran out of order: blocks in order, x fastest";
}

TEST(ReferenceMode, AnOptimizedEngineTakesTheBlockEntry) {
  Engine engine;
  ASSERT_FALSE(engine.reference());
  std::vector<uint64_t> out(64);
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> *counterAddress = &counter;
  uint64_t *data = out.data();
  void *args[] = {&counterAddress, &data};
  blockEntryCalls = 0;
  ASSERT_EQ(outcome(engine.launch(blockKernel(ticketThread, ticketBlock, "tickets"),
                                  config1d(2, 32), args)),
            "ok");
  EXPECT_EQ(blockEntryCalls.load(), 2);
}

TEST(ReferenceMode, SmallGridsDoNotRunOnTheLaunchingThread) {
  Engine engine(referenceOptions());
  pthread_t ranOn = pthread_self();
  pthread_t *address = &ranOn;
  void *args[] = {&address};
  ASSERT_EQ(
      outcome(engine.launch(threadKernel(hostThreadThread, "host_thread"), config1d(1, 1), args)),
      "ok");
  EXPECT_FALSE(pthread_equal(ranOn, pthread_self()))
      << "a one-thread grid ran on the calling thread, a fast path the reference mode leaves out";
}

TEST(ReferenceMode, ThreadsMeetAtBarriersAsFibers) {
  Engine engine(referenceOptions());
  std::vector<uint32_t> out(3 * 40, 0);
  uint32_t *data = out.data();
  void *args[] = {&data};
  KernelImage image = threadKernel(neighbourThread, "neighbour", 40 * sizeof(uint32_t));
  ASSERT_EQ(outcome(engine.launch(image, config1d(3, 40), args)), "ok");
  for (uint32_t block = 0; block < 3; ++block)
    for (uint32_t id = 0; id < 40; ++id)
      ASSERT_EQ(out[block * 40 + id], (id + 1) % 40) << "block " << block << " thread " << id;
}

TEST(ReferenceMode, AnImageWithoutAThreadEntryIsRefusedByName) {
  Engine engine(referenceOptions());
  KernelImage image = blockKernel(ticketThread, ticketBlock, "block_only");
  image.threadEntry = nullptr;
  std::vector<uint64_t> out(32);
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> *counterAddress = &counter;
  uint64_t *data = out.data();
  void *args[] = {&counterAddress, &data};
  LaunchResult result = engine.launch(image, config1d(1, 32), args);
  EXPECT_EQ(result.kind(), LaunchErrorKind::InvalidConfiguration);
  EXPECT_NE(result.message().find("'block_only'"), std::string::npos) << result.message();
  EXPECT_NE(result.message().find("reference mode"), std::string::npos) << result.message();
}

} // namespace
} // namespace kiln::cpu_engine::test
