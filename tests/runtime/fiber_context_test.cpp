//===- tests/runtime/fiber_context_test.cpp - Switching stacks ------------===//

#include "runtime/cpu_engine/fiber_context.h"
#include "runtime/cpu_engine/fiber_stack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace kiln::cpu_engine {
namespace {

struct PingPong {
  FiberContext main, fiber;
  int rounds = 0;
  double accumulated = 0; // lives across switches in callee-saved registers
  uintptr_t alignment = 0;
};

void pingPongEntry(void *argument) {
  auto &state = *static_cast<PingPong *>(argument);
  alignas(16) double aligned[2] = {0.5, 0.25};
  state.alignment = reinterpret_cast<uintptr_t>(&aligned[0]) % 16;
  double local = aligned[0] + aligned[1];
  for (;;) {
    ++state.rounds;
    local *= 1.0000001;
    state.accumulated = local;
    FiberContext::switchTo(state.fiber, state.main);
  }
}

TEST(FiberContext, SwitchesBackAndForthKeepingState) {
  FiberStack stack;
  std::string error;
  ASSERT_TRUE(stack.allocate(64 * 1024, error)) << error;
  PingPong state;
  state.fiber.prepare(stack.low(), stack.size(), pingPongEntry, &state);
  double mine = 1.0;
  for (int i = 1; i <= 1000; ++i) {
    FiberContext::switchTo(state.main, state.fiber);
    mine += 1.0; // must survive the switches too
    ASSERT_EQ(state.rounds, i);
  }
  EXPECT_EQ(mine, 1001.0);
  EXPECT_NEAR(state.accumulated, 0.75 * std::pow(1.0000001, 1000), 1e-9);
  EXPECT_EQ(state.alignment, 0u);
}

void printingEntry(void *argument) {
  auto &state = *static_cast<PingPong *>(argument);
  // Variadic calls with doubles need the ABI's stack alignment.
  char text[64];
  std::snprintf(text, sizeof text, "%f %g", 3.25, 1e-3);
  state.rounds = std::string(text) == "3.250000 0.001" ? 1 : -1;
  FiberContext::switchTo(state.fiber, state.main);
}

TEST(FiberContext, StackIsAlignedForTheCAbi) {
  FiberStack stack;
  std::string error;
  ASSERT_TRUE(stack.allocate(64 * 1024, error)) << error;
  PingPong state;
  state.fiber.prepare(stack.low(), stack.size(), printingEntry, &state);
  FiberContext::switchTo(state.main, state.fiber);
  EXPECT_EQ(state.rounds, 1);
}

TEST(FiberStack, GuardPageStopsOverflows) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        FiberStack stack;
        std::string error;
        if (!stack.allocate(16 * 1024, error))
          std::abort();
        // Writing just below the usable stack hits the guard page.
        static_cast<volatile char *>(stack.low())[-1] = 1;
      },
      "");
}

TEST(FiberStack, PoolGrowsStacks) {
  FiberStackPool pool;
  std::string error;
  ASSERT_TRUE(pool.reserve(4, 10000, error)) << error;
  EXPECT_GE(pool[3].size(), 10000u);
  void *low = pool[0].low();
  ASSERT_TRUE(pool.reserve(2, 5000, error)) << error;
  EXPECT_EQ(pool[0].low(), low) << "big enough stacks are kept";
  ASSERT_TRUE(pool.reserve(2, 1 << 20, error)) << error;
  EXPECT_GE(pool[1].size(), size_t(1) << 20);
}

} // namespace
} // namespace kiln::cpu_engine
