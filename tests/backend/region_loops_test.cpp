//===- tests/backend/region_loops_test.cpp --------------------------------===//
//
// Kernel bodies with barriers, written by hand as the block entry's loop
// takes them, turned into region loops: what is kept per thread across a
// barrier, what is computed again, and which kernels are left to the
// coroutines.
//
//===----------------------------------------------------------------------===//

#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_region_loops.h"
#include "module/cpu_kernel_abi.h"
#include "tests/backend/llvm_ir_testing.h"

#include <cstddef>
#include <regex>
#include <string>

namespace {

using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

/// What makeRegionLoops makes of the function @body in `source` (in which
/// SHARED stands for the offset of KilnCpuThread::sharedMemory), as text;
/// empty when it leaves the kernel to the coroutines.
std::string regionLoopsOf(std::string source) {
  for (size_t at; (at = source.find("SHARED")) != std::string::npos;)
    source.replace(at, 6, std::to_string(offsetof(KilnCpuThread, sharedMemory)));
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(source, context);
  if (!module)
    return "";
  llvm::Function *regions = kiln::backend::makeRegionLoops(module->getFunction("body"));
  if (!regions || !isValidAfter(*module, "region loops"))
    return "";
  return textOf(*regions);
}

/// `source` with its one `from` replaced by `to`.
void replaceOnce(std::string &source, const std::string &from, const std::string &to) {
  size_t at = source.find(from);
  ASSERT_NE(at, std::string::npos) << "no " << from;
  source.replace(at, from.size(), to);
}

size_t countOf(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

// Each thread stores x[tid] + 1 in shared memory, waits, and stores its
// neighbour's value and its own sum to out.
constexpr const char *exchange = R"(
declare void @syncthreads(ptr)

define internal void @body(ptr %thread, i32 %tx, i32 %ty, i32 %tz, i32 %lane, ptr %x, ptr %out) {
entry:
  %shared.field = getelementptr inbounds i8, ptr %thread, i64 SHARED
  %shared = load ptr, ptr %shared.field
  %i = zext i32 %tx to i64
  %slot = getelementptr inbounds float, ptr %shared, i64 %i
  %x.i = getelementptr inbounds float, ptr %x, i64 %i
  %value = load float, ptr %x.i
  %sum = fadd float %value, 1.0
  store float %sum, ptr %slot
  call void @syncthreads(ptr %thread), !kiln.barrier !0
  %j = add i64 %i, 1
  %next = getelementptr inbounds float, ptr %shared, i64 %j
  %neighbour = load float, ptr %next
  %both = fadd float %neighbour, %sum
  %out.i = getelementptr inbounds float, ptr %out, i64 %i
  store float %both, ptr %out.i
  ret void
}

!0 = !{i32 3}
)";

TEST(RegionLoops, AValueLiveAcrossABarrierIsKeptPerThread) {
  std::string result = regionLoopsOf(exchange);
  ASSERT_FALSE(result.empty()) << "the kernel must become region loops";
  EXPECT_TRUE(
      contains(result, "define internal void @body.regions(ptr noalias %0, ptr %1, ptr %2)"))
      << result;
  // %sum: one float per thread of the block, on the stack.
  EXPECT_TRUE(contains(result, "%sum.reg2mem.threads = alloca float, i32 %")) << result;
  EXPECT_FALSE(contains(result, "@syncthreads")) << "the barrier must be gone:\n" << result;
}

TEST(RegionLoops, WhatIsTheSameForTheWholeBlockIsComputedAgainNotKept) {
  std::string result = regionLoopsOf(exchange);
  ASSERT_FALSE(result.empty());
  // The shared memory pointer and the thread's index are read again after
  // the barrier; only %sum needs an array.
  EXPECT_EQ(countOf(result, ".threads = "), 1u) << result;
}

TEST(RegionLoops, AReducingBarrierReducesOverTheWaitingThreads) {
  std::string source = exchange;
  source.replace(source.find("declare void @syncthreads(ptr)"), 30,
                 "declare i32 @syncthreads_count(ptr, i32, i32)");
  source.replace(source.find("call void @syncthreads(ptr %thread), !kiln.barrier !0"), 53,
                 "%count = call i32 @syncthreads_count(ptr %thread, i32 0, i32 %tx), "
                 "!kiln.barrier !1\n  %count.f = sitofp i32 %count to float");
  source.replace(source.find("fadd float %neighbour, %sum"), 27, "fadd float %neighbour, %count.f");
  source += "!1 = !{i32 0}\n";
  std::string result = regionLoopsOf(source);
  ASSERT_FALSE(result.empty()) << "a reducing barrier must become region loops";
  EXPECT_TRUE(contains(result, "reduce:")) << result;
  EXPECT_FALSE(contains(result, "@syncthreads_count")) << result;
}

/// `exchange` with a private array of `floats` floats per thread, written
/// before the barrier and read after it.
std::string withPrivateArray(unsigned floats) {
  std::string source = exchange;
  std::string type = "[" + std::to_string(floats) + " x float]";
  source.replace(source.find("entry:\n"), 7,
                 "entry:\n  %private = alloca " + type + ", align 16\n" +
                     "  %p.i = getelementptr inbounds " + type +
                     ", ptr %private, i64 0, i32 %tx\n"
                     "  store volatile float 2.0, ptr %p.i\n");
  source.replace(source.find("  ret void"), 0,
                 "  %kept = load volatile float, ptr %p.i\n  store float %kept, ptr %x.i\n");
  return source;
}

TEST(RegionLoops, PrivateArraysLiveAcrossABarrierAreKeptPerThreadAtTheirAlignment) {
  // 3 floats, aligned to 16: each thread's copy starts 16 bytes after the
  // last one's.
  std::string result = regionLoopsOf(withPrivateArray(3));
  ASSERT_FALSE(result.empty()) << "a small private array must become region loops";
  EXPECT_TRUE(contains(result, "private.threads = getelementptr inbounds i8, ptr")) << result;
  EXPECT_TRUE(std::regex_search(result, std::regex("mul nuw i64 %[0-9]+, 16\n")))
      << "each thread's copy must start 16 bytes after the last one's:\n"
      << result;
}

TEST(RegionLoops, ArraysOfMoreThanTheStackTakesComeFromTheEngine) {
  // 64 floats per thread: 256 bytes, more than region loops keep on the
  // stack.
  std::string result = regionLoopsOf(withPrivateArray(64));
  ASSERT_FALSE(result.empty()) << "a 256-byte private array must become region loops";
  EXPECT_TRUE(contains(result, "call noalias ptr")) << "the arrays come from allocateFrame:\n"
                                                    << result;
  EXPECT_TRUE(contains(result, "private.threads = getelementptr inbounds i8, ptr")) << result;
}

TEST(RegionLoops, LargePrivateArraysLiveAcrossABarrierStayCoroutines) {
  EXPECT_EQ(regionLoopsOf(withPrivateArray(2048)), "")
      << "8 KiB per thread across a barrier are more than region loops keep";
}

// A tree over shared memory whose step starts from 128: each level adds
// the element `step` on to the threads' own, for the threads below step,
// then waits.
constexpr const char *tree = R"(
declare void @syncthreads(ptr)
declare void @fail(ptr)

define internal void @body(ptr %thread, i32 %tx, i32 %ty, i32 %tz, i32 %lane, ptr %x, ptr %out) {
entry:
  %shared.field = getelementptr inbounds i8, ptr %thread, i64 SHARED
  %shared = load ptr, ptr %shared.field
  %i = zext i32 %tx to i64
  %slot = getelementptr inbounds float, ptr %shared, i64 %i
  %x.i = getelementptr inbounds float, ptr %x, i64 %i
  %value = load float, ptr %x.i
  store float %value, ptr %slot
  br label %level

level:
  %step = phi i64 [ 128, %entry ], [ %half, %level.end ]
  %active = icmp ult i64 %i, %step
  br i1 %active, label %add, label %level.end

add:
  %j = add i64 %i, %step
  %other = getelementptr inbounds float, ptr %shared, i64 %j
  %a = load float, ptr %other
  %b = load float, ptr %slot
  %sum = fadd float %a, %b
  store float %sum, ptr %slot
  br label %level.end

level.end:
  call void @syncthreads(ptr %thread), !kiln.barrier !0
  %half = lshr i64 %step, 1
  %more = icmp ne i64 %half, 0
  br i1 %more, label %level, label %done

done:
  ret void
}

!0 = !{i32 3}
)";

TEST(RegionLoops, AValueEveryThreadHoldsAcrossABarrierIsOneVariableForTheBlock) {
  std::string result = regionLoopsOf(tree);
  ASSERT_FALSE(result.empty()) << "the tree must become region loops";
  // %step, the same for every thread, in one variable the threads read and
  // one they write, which the next round reads.
  EXPECT_TRUE(contains(result, "%step.uniform.threads = alloca i64, align 8")) << result;
  EXPECT_TRUE(contains(result, "%step.uniform.next.threads = alloca i64, align 8")) << result;
  EXPECT_FALSE(contains(result, "step.reg2mem")) << "no element per thread:\n" << result;
  // The threads wait together: no round asks where each one waits.
  EXPECT_FALSE(contains(result, "last.run")) << result;
}

TEST(RegionLoops, ThreadsOnEitherSideOfAGuardOnTheThreadIndexRunInLoopsOfTheirOwn) {
  std::string result = regionLoopsOf(tree);
  ASSERT_FALSE(result.empty());
  // `tid < step` is decided in each loop, from the bound the round
  // computes once: 128 in the first round, then the step read after the
  // barrier, in the copy of the region for the rounds the level loop goes
  // on in (`step / 2 != 0`, which picks a copy per round).
  EXPECT_TRUE(contains(result, "call i64 @llvm.umin.i64(i64 128, i64 ")) << result;
  size_t goesOn = result.find("\nregion.switch.taken:");
  ASSERT_NE(goesOn, std::string::npos) << result;
  std::string copy = result.substr(goesOn, result.find("\nregion.switch.other:") - goesOn);
  EXPECT_TRUE(std::regex_search(
      copy,
      std::regex("%(step\\.reload[0-9]*) = load i64, ptr %step\\.uniform\\.threads, align [0-9]+\n"
                 "  %(half[0-9]*) = lshr i64 %\\1, 1\n"
                 "[\\s\\S]*call i64 @llvm\\.umin\\.i64\\(i64 %\\2, ")))
      << copy;
  // The round decides the loop's condition once; the copies do not.
  EXPECT_TRUE(
      contains(result, "br i1 %more, label %region.switch.taken, label %region.switch.other"))
      << result;
  EXPECT_EQ(countOf(result, "icmp ne i64 %half"), 1u) << result;
}

TEST(RegionLoops, AThreadThatFailsEndsAloneWhereTheOthersWaitTogether) {
  // An index check before the add: a thread that fails it calls the error
  // service and ends, which leaves the others waiting together.
  std::string source = tree;
  replaceOnce(source, "  br i1 %active, label %add, label %level.end",
              "  br i1 %active, label %check, label %level.end\n"
              "check:\n"
              "  %bad = icmp ugt i64 %i, 200\n"
              "  br i1 %bad, label %error, label %add\n"
              "error:\n"
              "  call void @fail(ptr %thread)\n"
              "  unreachable");
  std::string result = regionLoopsOf(source);
  ASSERT_FALSE(result.empty());
  EXPECT_FALSE(contains(result, "last.run")) << "the threads must still wait together:\n" << result;
  EXPECT_TRUE(contains(result, "store i32 1, ptr %some.ended")) << "a failed thread is noted:\n"
                                                                << result;
}

TEST(RegionLoops, ABarrierOnlySomeThreadsReachKeepsEachThreadsState) {
  // The barrier inside `if tid < step`: the threads from step on skip it.
  std::string source = tree;
  replaceOnce(source, "level.end:\n  call void @syncthreads(ptr %thread), !kiln.barrier !0\n",
              "level.end:\n");
  replaceOnce(source, "  store float %sum, ptr %slot\n",
              "  store float %sum, ptr %slot\n"
              "  call void @syncthreads(ptr %thread), !kiln.barrier !0\n");
  std::string result = regionLoopsOf(source);
  ASSERT_FALSE(result.empty());
  EXPECT_TRUE(contains(result, "last.run")) << "each thread's state must be kept:\n" << result;
  EXPECT_TRUE(contains(result, "step.reg2mem.threads = alloca i64")) << result;
}

TEST(RegionLoops, MoreBarriersThanTheMaskCountsStayCoroutines) {
  std::string source = exchange;
  std::string barriers;
  for (int i = 0; i < 63; ++i)
    barriers += "  call void @syncthreads(ptr %thread), !kiln.barrier !0\n";
  source.replace(source.find("  ret void"), 0, barriers);
  EXPECT_EQ(regionLoopsOf(source), "");
}

} // namespace
