//===- tests/runtime/cpu_engine_warp_test.cpp - Warp collectives ----------===//
//
// shfl/vote/match/syncwarp/activemask against scalar references of their PTX
// semantics, on full warps, partial warps and warps split by masks.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/warp_collectives.h"
#include "tests/runtime/kernel_helpers.h"

#include <gtest/gtest.h>

#include <bit>
#include <vector>

namespace kiln::cpu_engine::test {
namespace {

constexpr uint32_t fullMask = 0xffffffffu;

/// How the tests choose each lane's mask.
enum MaskPattern : int32_t {
  FullWarp = 0,  // 0xffffffff
  HalfWarps = 1, // 0x0000ffff for lanes 0-15, 0xffff0000 for lanes 16-31
};

uint32_t maskFor(int32_t pattern, uint32_t lane) {
  if (pattern == HalfWarps)
    return lane < 16 ? 0x0000ffffu : 0xffff0000u;
  return fullMask;
}

struct ShuffleCase {
  uint32_t mode;
  uint32_t operand; // source lane, delta or xor mask
  uint32_t perLane; // added times the lane (IDX with a per-lane source)
};

const ShuffleCase shuffleCases[] = {
    {KILN_SHFL_IDX, 0, 0},   {KILN_SHFL_IDX, 5, 0},   {KILN_SHFL_IDX, 31, 0},
    {KILN_SHFL_IDX, 33, 0},  {KILN_SHFL_IDX, 3, 7},   {KILN_SHFL_UP, 1, 0},
    {KILN_SHFL_UP, 2, 0},    {KILN_SHFL_UP, 16, 0},   {KILN_SHFL_UP, 31, 0},
    {KILN_SHFL_DOWN, 1, 0},  {KILN_SHFL_DOWN, 4, 0},  {KILN_SHFL_DOWN, 16, 0},
    {KILN_SHFL_DOWN, 31, 0}, {KILN_SHFL_BFLY, 1, 0},  {KILN_SHFL_BFLY, 8, 0},
    {KILN_SHFL_BFLY, 16, 0}, {KILN_SHFL_BFLY, 31, 0}, {KILN_SHFL_DOWN, 0, 0},
};
constexpr uint32_t caseCount = sizeof shuffleCases / sizeof shuffleCases[0];

template <typename T> T valueOf(uint32_t tid) {
  if constexpr (std::is_floating_point_v<T>)
    return T(tid) * T(1.5) - T(17.25);
  else if constexpr (sizeof(T) == 8)
    return T((uint64_t(tid) << 33) ^ (0x5555ull * tid)) - T(1000);
  else
    return T(tid * 2654435761u);
}

template <typename T> uint64_t bitsOf(T value) {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<uint32_t>(value);
  else
    return std::bit_cast<uint64_t>(value);
}

template <typename T> T fromBits(uint64_t bits) {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<T>(static_cast<uint32_t>(bits));
  else
    return std::bit_cast<T>(bits);
}

// Each thread shuffles its value through every case: out[tid * caseCount + k].
template <typename T> void shuffleKernel(KilnCpuThread *t, void *const *args) {
  auto *out = arg<T *>(args, 0);
  auto pattern = arg<int32_t>(args, 1);
  uint32_t tid = linearThreadId(t), lane = t->laneId;
  T value = valueOf<T>(tid);
  for (uint32_t k = 0; k < caseCount; ++k) {
    const ShuffleCase &c = shuffleCases[k];
    uint32_t clamp = c.mode == KILN_SHFL_UP ? 0 : 0x1f; // as Numba passes it
    uint64_t bits = t->services->shuffle(t, maskFor(pattern, lane), c.mode, bitsOf(value),
                                         c.operand + c.perLane * lane, clamp);
    out[tid * caseCount + k] = fromBits<T>(bits);
  }
}

/// The scalar reference: PTX shfl.sync with Numba's clamp on 32-lane warps.
/// Lanes outside the group (not named by the mask, or not in the block)
/// leave the lane with its own value.
template <typename T>
T expectedShuffle(uint32_t tid, uint32_t threads, int32_t pattern, const ShuffleCase &c) {
  uint32_t lane = tid % 32, base = tid - lane;
  uint32_t operand = (c.operand + c.perLane * lane) % 32;
  int source = int(lane);
  switch (c.mode) {
  case KILN_SHFL_IDX:
    source = int(operand);
    break;
  case KILN_SHFL_UP:
    source = int(lane) - int(operand);
    break;
  case KILN_SHFL_DOWN:
    source = int(lane) + int(operand);
    break;
  case KILN_SHFL_BFLY:
    source = int(lane ^ operand);
    break;
  }
  bool inWarp = source >= 0 && source < 32;
  bool inGroup = inWarp && (maskFor(pattern, lane) >> source & 1u) && base + source < threads;
  return valueOf<T>(inGroup ? base + uint32_t(source) : tid);
}

template <typename T> void checkShuffles(uint32_t threads, int32_t pattern) {
  std::vector<T> out(threads * caseCount);
  T *data = out.data();
  void *args[] = {&data, &pattern};
  Engine engine;
  ASSERT_EQ(
      outcome(engine.launch(threadKernel(shuffleKernel<T>, "shuffle"), config1d(1, threads), args)),
      "ok");
  for (uint32_t tid = 0; tid < threads; ++tid)
    for (uint32_t k = 0; k < caseCount; ++k)
      ASSERT_EQ(bitsOf(out[tid * caseCount + k]),
                bitsOf(expectedShuffle<T>(tid, threads, pattern, shuffleCases[k])))
          << "thread " << tid << " case " << k << " (mode " << shuffleCases[k].mode << ", operand "
          << shuffleCases[k].operand << ")";
}

template <typename T> class ShuffleTest : public ::testing::Test {};
using ShuffleTypes = ::testing::Types<int32_t, int64_t, float, double>;
TYPED_TEST_SUITE(ShuffleTest, ShuffleTypes);

TYPED_TEST(ShuffleTest, FullWarps) {
  checkShuffles<TypeParam>(64, FullWarp);
}
TYPED_TEST(ShuffleTest, PartialWarp) {
  checkShuffles<TypeParam>(48, FullWarp);
}
TYPED_TEST(ShuffleTest, HalfWarpMasks) {
  checkShuffles<TypeParam>(96, HalfWarps);
}
TYPED_TEST(ShuffleTest, HalfWarpMasksInPartialWarp) {
  checkShuffles<TypeParam>(40, HalfWarps);
}

TEST(ShuffleSemantics, SubWarpWidthThroughTheClampOperand) {
  // shfl(..., width=8): c = ((32 - 8) << 8) | clamp, segments of 8 lanes.
  uint64_t values[32];
  for (uint32_t lane = 0; lane < 32; ++lane)
    values[lane] = 100 + lane;
  uint32_t idx = (24u << 8) | 0x1f, up = 24u << 8, down = (24u << 8) | 0x1f;
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_IDX, 3, idx), 100u + 11);
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_IDX, 10, idx), 100u + 10);
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_UP, 2, up), 100u + 11);
  EXPECT_EQ(shuffleLane(fullMask, values, 9, KILN_SHFL_UP, 2, up), 100u + 9);
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_DOWN, 2, down), 100u + 15);
  EXPECT_EQ(shuffleLane(fullMask, values, 14, KILN_SHFL_DOWN, 2, down), 100u + 14);
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_BFLY, 4, down), 100u + 9);
  // xor may reach earlier segments but not later ones (as CUDA documents).
  EXPECT_EQ(shuffleLane(fullMask, values, 13, KILN_SHFL_BFLY, 8, down), 100u + 5);
  EXPECT_EQ(shuffleLane(fullMask, values, 5, KILN_SHFL_BFLY, 8, down), 100u + 5);
  // A source outside the group keeps the lane's own value.
  EXPECT_EQ(shuffleLane(0x0000ffffu, values, 3, KILN_SHFL_IDX, 20, 0x1f), 100u + 3);
}

// A warp reduction as Numba code writes it: for offset in (16, 8, 4, 2, 1):
// v += shfl_down_sync(0xffffffff, v, offset).
extern "C" void warpReduceThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int64_t *>(args, 0);
  int64_t v = globalId(t);
  for (uint32_t offset = 16; offset > 0; offset /= 2)
    v += int64_t(t->services->shuffle(t, fullMask, KILN_SHFL_DOWN, uint64_t(v), offset, 0x1f));
  if (t->laneId == 0)
    out[globalId(t) / 32] = v;
}

TEST(Shuffle, WarpReductionOverManyBlocks) {
  constexpr uint32_t blocks = 50, threads = 256;
  std::vector<int64_t> out(blocks * threads / 32, -1);
  int64_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(warpReduceThread, "warp_reduce"),
                                  config1d(blocks, threads), args)),
            "ok");
  for (size_t warp = 0; warp < out.size(); ++warp) {
    int64_t first = int64_t(warp) * 32;
    EXPECT_EQ(out[warp], 32 * first + 31 * 32 / 2) << "warp " << warp;
  }
}

// --- Votes --------------------------------------------------------------===//

bool votePredicate(int32_t which, uint32_t tid) {
  switch (which) {
  case 0:
    return tid % 3 == 0;
  case 1:
    return true;
  case 2:
    return false;
  default:
    return tid % 32 >= 16; // uniform within half warps
  }
}

// out[tid * 4 + mode] = vote(mode).
extern "C" void voteThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint32_t *>(args, 0);
  auto which = arg<int32_t>(args, 1);
  auto pattern = arg<int32_t>(args, 2);
  uint32_t tid = linearThreadId(t);
  int32_t predicate = votePredicate(which, tid) ? 3 : 0;
  for (uint32_t mode : {KILN_VOTE_ALL, KILN_VOTE_ANY, KILN_VOTE_UNI, KILN_VOTE_BALLOT})
    out[tid * 4 + mode] = t->services->vote(t, maskFor(pattern, t->laneId), mode, predicate);
}

TEST(Vote, AllAnyUniBallot) {
  Engine engine;
  for (uint32_t threads : {64u, 45u})
    for (int32_t pattern : {FullWarp, HalfWarps})
      for (int32_t which = 0; which < 4; ++which) {
        std::vector<uint32_t> out(threads * 4, 0xdeadbeef);
        uint32_t *data = out.data();
        void *args[] = {&data, &which, &pattern};
        ASSERT_EQ(
            outcome(engine.launch(threadKernel(voteThread, "vote"), config1d(1, threads), args)),
            "ok");
        for (uint32_t tid = 0; tid < threads; ++tid) {
          uint32_t lane = tid % 32, base = tid - lane;
          uint32_t group = 0, ballot = 0;
          for (uint32_t other = 0; other < 32; ++other)
            if ((maskFor(pattern, lane) >> other & 1u) && base + other < threads) {
              group |= 1u << other;
              if (votePredicate(which, base + other))
                ballot |= 1u << other;
            }
          SCOPED_TRACE("threads " + std::to_string(threads) + " pattern " +
                       std::to_string(pattern) + " predicates " + std::to_string(which) +
                       " thread " + std::to_string(tid));
          EXPECT_EQ(out[tid * 4 + KILN_VOTE_ALL], uint32_t(ballot == group));
          EXPECT_EQ(out[tid * 4 + KILN_VOTE_ANY], uint32_t(ballot != 0));
          EXPECT_EQ(out[tid * 4 + KILN_VOTE_UNI], uint32_t(ballot == group || ballot == 0));
          EXPECT_EQ(out[tid * 4 + KILN_VOTE_BALLOT], ballot);
        }
      }
}

// --- Match --------------------------------------------------------------===//

// out[tid * 4 + {0..3}] = match_any(lane % 4 in the high bits), match_all of
// an equal value and its predicate, match_all of lane % 2.
extern "C" void matchThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint32_t *>(args, 0);
  auto pattern = arg<int32_t>(args, 1);
  uint32_t tid = linearThreadId(t), mask = maskFor(pattern, t->laneId);
  out[tid * 4] = t->services->matchAny(t, mask, uint64_t(t->laneId % 4) << 40);
  int32_t predicate = -1;
  out[tid * 4 + 1] = t->services->matchAll(t, mask, 0x123456789ull, &predicate);
  out[tid * 4 + 2] = uint32_t(predicate);
  int32_t unequal = -1;
  uint32_t result = t->services->matchAll(t, mask, t->laneId % 2, &unequal);
  out[tid * 4 + 3] = result | (uint32_t(unequal) << 31);
}

TEST(Match, AnyAndAll) {
  Engine engine;
  for (uint32_t threads : {64u, 50u})
    for (int32_t pattern : {FullWarp, HalfWarps}) {
      std::vector<uint32_t> out(threads * 4, 0xdeadbeef);
      uint32_t *data = out.data();
      void *args[] = {&data, &pattern};
      ASSERT_EQ(
          outcome(engine.launch(threadKernel(matchThread, "match"), config1d(1, threads), args)),
          "ok");
      for (uint32_t tid = 0; tid < threads; ++tid) {
        uint32_t lane = tid % 32, base = tid - lane, group = 0, same = 0;
        for (uint32_t other = 0; other < 32; ++other)
          if ((maskFor(pattern, lane) >> other & 1u) && base + other < threads) {
            group |= 1u << other;
            if (other % 4 == lane % 4)
              same |= 1u << other;
          }
        SCOPED_TRACE("threads " + std::to_string(threads) + " pattern " + std::to_string(pattern) +
                     " thread " + std::to_string(tid));
        EXPECT_EQ(out[tid * 4], same);
        EXPECT_EQ(out[tid * 4 + 1], group);
        EXPECT_EQ(out[tid * 4 + 2], 1u);
        bool single = std::popcount(group) == 1; // one lane always agrees with itself
        EXPECT_EQ(out[tid * 4 + 3], single ? group | 1u << 31 : 0u);
      }
    }
}

// --- syncwarp and activemask ---------------------------------------------===//

// Lanes publish a value, syncwarp, then read their neighbour's. Without the
// rendezvous, lane 0 (which runs first) would read an unwritten slot.
extern "C" void syncwarpThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<int32_t *>(args, 0);
  auto pattern = arg<int32_t>(args, 1);
  auto *slots = static_cast<int32_t *>(t->sharedMemory);
  uint32_t tid = linearThreadId(t), lane = t->laneId, base = tid - lane;
  slots[tid] = int32_t(tid) + 1;
  uint32_t mask = maskFor(pattern, lane);
  // Divergent halves reach syncwarp at different call sites.
  if (lane < 16)
    t->services->syncwarp(t, mask);
  else
    t->services->syncwarp(t, mask);
  uint32_t neighbour = pattern == HalfWarps ? (lane & 16) | ((lane + 1) % 16) : (lane + 1) % 32;
  out[tid] = slots[base + neighbour];
}

TEST(Syncwarp, PublishesWritesWithinTheGroup) {
  Engine engine;
  for (int32_t pattern : {FullWarp, HalfWarps}) {
    std::vector<int32_t> out(128, 0);
    int32_t *data = out.data();
    void *args[] = {&data, &pattern};
    ASSERT_EQ(outcome(engine.launch(threadKernel(syncwarpThread, "syncwarp", 128 * 4),
                                    config1d(1, 128), args)),
              "ok");
    for (uint32_t tid = 0; tid < 128; ++tid) {
      uint32_t lane = tid % 32, base = tid - lane;
      uint32_t neighbour = pattern == HalfWarps ? (lane & 16) | ((lane + 1) % 16) : (lane + 1) % 32;
      EXPECT_EQ(out[tid], int32_t(base + neighbour + 1))
          << "pattern " << pattern << " thread " << tid;
    }
  }
}

// Lanes 4 and up of every warp exit; once a barrier has let them go, the
// others see only themselves in activemask() (the second barrier keeps them
// all alive until each has looked).
extern "C" void activeMaskThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint32_t *>(args, 0);
  uint32_t tid = linearThreadId(t);
  out[tid * 2] = t->services->activeMask(t);
  if (t->laneId >= 4)
    return;
  t->services->syncthreads(t);
  out[tid * 2 + 1] = t->services->activeMask(t);
  t->services->syncthreads(t);
}

TEST(ActiveMask, LiveLanesOfTheWarp) {
  constexpr uint32_t threads = 40;
  std::vector<uint32_t> out(threads * 2, 0);
  uint32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  ASSERT_EQ(
      outcome(engine.launch(threadKernel(activeMaskThread, "active"), config1d(1, threads), args)),
      "ok");
  EXPECT_EQ(out[0], fullMask);
  EXPECT_EQ(out[32 * 2], 0xffu); // the partial warp has 8 lanes
  for (uint32_t tid = 0; tid < threads; ++tid) {
    if (tid % 32 < 4) {
      EXPECT_EQ(out[tid * 2 + 1], 0xfu) << "thread " << tid;
    }
  }
}

// Each call site is its own function, so that the compiler cannot merge
// the calls of the two branches into one.
[[gnu::noinline]] uint32_t activeMaskInThen(KilnCpuThread *t) {
  return t->services->activeMask(t);
}
[[gnu::noinline]] uint32_t activeMaskInElse(KilnCpuThread *t) {
  return t->services->activeMask(t);
}
[[gnu::noinline]] uint32_t activeMaskAfter(KilnCpuThread *t) {
  return t->services->activeMask(t);
}

// if lane % 3 == 0: out[3 tid] = activemask() else: out[3 tid + 1] = ...;
// then out[3 tid + 2] = activemask() once the branches have joined.
extern "C" void activeMaskBranchesThread(KilnCpuThread *t, void *const *args) {
  auto *out = arg<uint32_t *>(args, 0);
  uint32_t tid = linearThreadId(t);
  if (t->laneId % 3 == 0)
    out[tid * 3] = activeMaskInThen(t);
  else
    out[tid * 3 + 1] = activeMaskInElse(t);
  out[tid * 3 + 2] = activeMaskAfter(t);
}

TEST(ActiveMask, LanesOfTheSameBranch) {
  constexpr uint32_t threads = 44;
  std::vector<uint32_t> out(threads * 3, 0);
  uint32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(threadKernel(activeMaskBranchesThread, "branches"),
                                  config1d(1, threads), args)),
            "ok");
  for (uint32_t tid = 0; tid < threads; ++tid) {
    uint32_t lanes = tid < 32 ? fullMask : 0xfffu;
    uint32_t then = 0;
    for (uint32_t lane = 0; lane < 32; lane += 3)
      then |= 1u << lane;
    then &= lanes;
    if (tid % 32 % 3 == 0)
      EXPECT_EQ(out[tid * 3], then) << "thread " << tid;
    else
      EXPECT_EQ(out[tid * 3 + 1], lanes & ~then) << "thread " << tid;
    EXPECT_EQ(out[tid * 3 + 2], lanes) << "thread " << tid << " after the branches";
  }
}

extern "C" void activeMaskLoopThread(KilnCpuThread *t, void *const *args) {
  arg<uint32_t *>(args, 0)[linearThreadId(t)] = t->services->activeMask(t);
}

extern "C" void activeMaskLoopBlock(KilnCpuThread *t, void *const *args) {
  forEachThread(t, args, activeMaskLoopThread);
}

TEST(ActiveMask, InBlockEntries) {
  std::vector<uint32_t> out(70, 0);
  uint32_t *data = out.data();
  void *args[] = {&data};
  Engine engine;
  ASSERT_EQ(outcome(engine.launch(blockKernel(activeMaskLoopThread, activeMaskLoopBlock, "active"),
                                  config1d(1, 70), args)),
            "ok");
  EXPECT_EQ(out[0], fullMask);
  EXPECT_EQ(out[63], fullMask);
  EXPECT_EQ(out[64], 0x3fu);
  EXPECT_EQ(out[69], 0x3fu);
}

} // namespace
} // namespace kiln::cpu_engine::test
