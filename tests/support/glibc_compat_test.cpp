//===- tests/support/glibc_compat_test.cpp --------------------------------===//
//
// The functions support/glibc_compat.c defines over glibc 2.28, linked in
// here as in a binary of the compiler's wheel, against glibc's own (this
// machine's glibc has them all), found by dlsym past the test's hidden
// definitions.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <set>
#include <stdexcept>
#include <stdlib.h>
#include <thread>
#include <time.h>

namespace {

template <typename Function> Function *glibcs(const char *name) {
  auto *function = reinterpret_cast<Function *>(dlsym(RTLD_DEFAULT, name));
  EXPECT_NE(function, nullptr) << "this machine's glibc has no " << name;
  return function;
}

[[gnu::noinline]] int throwThrough(int depth) {
  if (depth == 0)
    throw std::runtime_error("unwound");
  return throwThrough(depth - 1) + 1;
}

void expectSameObject(void *address) {
  dl_find_object ours = {}, theirs = {};
  int ourResult = _dl_find_object(address, &ours);
  int theirResult = glibcs<int(void *, dl_find_object *)>("_dl_find_object")(address, &theirs);
  ASSERT_EQ(ourResult, theirResult) << "for address " << address;
  if (theirResult != 0)
    return;
  EXPECT_EQ(ours.dlfo_map_start, theirs.dlfo_map_start) << "for address " << address;
  EXPECT_EQ(ours.dlfo_map_end, theirs.dlfo_map_end) << "for address " << address;
  EXPECT_EQ(ours.dlfo_eh_frame, theirs.dlfo_eh_frame) << "for address " << address;
}

TEST(GlibcCompat, FindsTheObjectAndFrameTablesOfAnAddressAsGlibcDoes) {
  expectSameObject(reinterpret_cast<void *>(&throwThrough));
  expectSameObject(dlsym(RTLD_DEFAULT, "printf"));
  expectSameObject(dlsym(RTLD_DEFAULT, "pthread_create"));
  static int onTheStack;
  expectSameObject(&onTheStack);
  expectSameObject(reinterpret_cast<void *>(16));
}

TEST(GlibcCompat, ExceptionsUnwindThroughFramesItFinds) {
  // libgcc's unwinder, linked in statically, asks _dl_find_object for each
  // frame's tables: here, the definition over dl_iterate_phdr.
  try {
    throwThrough(20);
    FAIL() << "nothing was thrown";
  } catch (const std::runtime_error &error) {
    EXPECT_STREQ(error.what(), "unwound");
  }
}

TEST(GlibcCompat, ClockWaitsTimeOutOnTheClockAsked) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t condition = PTHREAD_COND_INITIALIZER;
  timespec start, deadline;
  clock_gettime(CLOCK_MONOTONIC, &start);
  deadline = start;
  deadline.tv_nsec += 30'000'000;
  if (deadline.tv_nsec >= 1'000'000'000) {
    deadline.tv_nsec -= 1'000'000'000;
    ++deadline.tv_sec;
  }
  pthread_mutex_lock(&mutex);
  int result = pthread_cond_clockwait(&condition, &mutex, CLOCK_MONOTONIC, &deadline);
  pthread_mutex_unlock(&mutex);
  EXPECT_EQ(result, ETIMEDOUT);
  timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  double waited = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
  EXPECT_GE(waited, 0.029) << "the wait ended before its deadline";

  // A deadline already past returns at once, as glibc's does.
  pthread_mutex_lock(&mutex);
  EXPECT_EQ(pthread_cond_clockwait(&condition, &mutex, CLOCK_MONOTONIC, &start), ETIMEDOUT);
  pthread_mutex_unlock(&mutex);
}

TEST(GlibcCompat, ClockWaitsWakeWhenSignalled) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t condition = PTHREAD_COND_INITIALIZER;
  bool ready = false;
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pthread_mutex_lock(&mutex);
    ready = true;
    pthread_cond_signal(&condition);
    pthread_mutex_unlock(&mutex);
  });
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += 60;
  pthread_mutex_lock(&mutex);
  int result = 0;
  while (!ready && result == 0)
    result = pthread_cond_clockwait(&condition, &mutex, CLOCK_MONOTONIC, &deadline);
  pthread_mutex_unlock(&mutex);
  signaller.join();
  EXPECT_EQ(result, 0);
  EXPECT_TRUE(ready);
}

TEST(GlibcCompat, RandomNumbersVary) {
  std::set<uint32_t> seen;
  for (int i = 0; i < 1000; ++i)
    seen.insert(arc4random());
  EXPECT_GT(seen.size(), 990u) << "arc4random repeats itself";
}

TEST(GlibcCompat, MemoryStatisticsAreGlibcs) {
  void *held = malloc(1 << 16);
  struct mallinfo2 ours = mallinfo2();
  struct mallinfo2 theirs = glibcs<struct mallinfo2()>("mallinfo2")();
  free(held);
  EXPECT_EQ(ours.arena, theirs.arena);
  EXPECT_EQ(ours.uordblks, theirs.uordblks);
  EXPECT_EQ(ours.hblkhd, theirs.hblkhd);
  EXPECT_GT(ours.uordblks + ours.hblkhd, 0u);
}

} // namespace
