//===- tests/backend/interrupt_polls_test.cpp -----------------------------===//
//
// Kernel code written by hand as the optimizer leaves it: which loops poll
// the engine's interrupt word (every loop that can run long, whatever its
// shape, and no loop whose iterations the launch limits bound), and a
// function the optimizer took the thread from gets it back to poll with.
//
//===----------------------------------------------------------------------===//

#include "backend/host/host_interrupt_polls.h"
#include "tests/backend/llvm_ir_testing.h"

#include <string>

namespace {

using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

/// How many polls of the interrupt word `text` has.
size_t pollsIn(const std::string &text) {
  size_t polls = 0;
  for (size_t at = 0; (at = text.find("load volatile i32", at)) != std::string::npos; ++at)
    ++polls;
  return polls;
}

// The thread loops' trip counts come from blockDim loads with the ranges
// the launch limits give them, as the block entries load them.
constexpr const char *kernels = R"(
define void @bounded_thread_loop(ptr "kiln-thread-context" %thread, ptr %out) "kiln-takes-thread" {
entry:
  %dim = load i32, ptr %thread, !range !0
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %slot = getelementptr inbounds i32, ptr %out, i32 %i
  store i32 %i, ptr %slot
  %next = add nuw i32 %i, 1
  %more = icmp ult i32 %next, %dim
  br i1 %more, label %loop, label %done
done:
  ret void
}

define void @while_on_data(ptr "kiln-thread-context" %thread, ptr %x) "kiln-takes-thread" {
entry:
  br label %loop
loop:
  %count = phi i64 [ 0, %entry ], [ %next, %loop ]
  %next = add i64 %count, 1
  %value = load i64, ptr %x
  %more = icmp sge i64 %value, 0
  br i1 %more, label %loop, label %done
done:
  %slot = getelementptr inbounds i64, ptr %x, i64 1
  store i64 %next, ptr %slot
  ret void
}

define void @data_loop_in_thread_loop(ptr "kiln-thread-context" %thread, ptr %x) "kiln-takes-thread" {
entry:
  %dim = load i32, ptr %thread, !range !0
  br label %threads
threads:
  %i = phi i32 [ 0, %entry ], [ %next.thread, %latch ]
  br label %spin
spin:
  %value = load volatile i64, ptr %x
  %more = icmp sge i64 %value, 0
  br i1 %more, label %spin, label %latch
latch:
  %next.thread = add nuw i32 %i, 1
  %more.threads = icmp ult i32 %next.thread, %dim
  br i1 %more.threads, label %threads, label %done
done:
  ret void
}

define void @bounded_in_bounded(ptr "kiln-thread-context" %thread, ptr %out) "kiln-takes-thread" {
entry:
  %dim = load i32, ptr %thread, !range !0
  br label %outer
outer:
  %i = phi i32 [ 0, %entry ], [ %next.i, %outer.latch ]
  br label %inner
inner:
  %j = phi i32 [ 0, %outer ], [ %next.j, %inner ]
  %sum = add i32 %i, %j
  %slot = getelementptr inbounds i32, ptr %out, i32 %sum
  store volatile i32 %j, ptr %slot
  %next.j = add nuw i32 %j, 1
  %more.j = icmp ult i32 %next.j, %dim
  br i1 %more.j, label %inner, label %outer.latch
outer.latch:
  %next.i = add nuw i32 %i, 1
  %more.i = icmp ult i32 %next.i, %dim
  br i1 %more.i, label %outer, label %done
done:
  ret void
}

!0 = !{i32 1, i32 1025}
)";

/// The text of each function of `kernels` after insertInterruptPolls.
std::string afterPolls(const std::string &function) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(kernels, context);
  if (!module)
    return "";
  kiln::backend::insertInterruptPolls(*module);
  if (!isValidAfter(*module, "interrupt polls"))
    return "";
  return textOf(*module->getFunction(function));
}

TEST(InterruptPolls, ALoopTheLaunchLimitsBoundDoesNotPoll) {
  std::string text = afterPolls("bounded_thread_loop");
  EXPECT_EQ(pollsIn(text), 0u) << "a loop over at most 1,024 threads needs no poll:\n" << text;
}

TEST(InterruptPolls, AWhileOnDataPolls) {
  std::string text = afterPolls("while_on_data");
  EXPECT_EQ(pollsIn(text), 1u) << "while x[0] >= 0 may never end:\n" << text;
  EXPECT_TRUE(contains(text, "call void %")) << "a set word calls the `interrupted` service:\n"
                                             << text;
}

TEST(InterruptPolls, ADataLoopInsideAThreadLoopPollsItselfAlone) {
  std::string text = afterPolls("data_loop_in_thread_loop");
  EXPECT_EQ(pollsIn(text), 1u) << "the inner loop polls, the loop over threads need not:\n" << text;
}

TEST(InterruptPolls, NestedBoundedLoopsPollWhereTheirProductIsLong) {
  std::string text = afterPolls("bounded_in_bounded");
  // 1,024 x 1,024 iterations: the outer loop polls once per inner loop.
  EXPECT_EQ(pollsIn(text), 1u) << text;
}

TEST(InterruptPolls, AFunctionTheOptimizerTookTheThreadFromGetsItBack) {
  // @spin once took the thread (its function attribute says so), but the
  // optimizer removed the unused parameter; its caller still has it.
  constexpr const char *source = R"(
define internal i64 @spin(ptr %x) "kiln-takes-thread" {
entry:
  br label %loop
loop:
  %value = load i64, ptr %x
  %more = icmp sge i64 %value, 0
  br i1 %more, label %loop, label %done
done:
  ret i64 %value
}

define void @entry(ptr "kiln-thread-context" %thread, ptr %x) "kiln-takes-thread" {
  %result = call i64 @spin(ptr noundef %x)
  store i64 %result, ptr %x
  ret void
}
)";
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(source, context);
  ASSERT_TRUE(module);
  kiln::backend::insertInterruptPolls(*module);
  ASSERT_TRUE(isValidAfter(*module, "restoring the thread"));
  llvm::Function *spin = module->getFunction("spin");
  ASSERT_TRUE(spin);
  std::string text = textOf(*spin);
  EXPECT_EQ(spin->arg_size(), 2u) << text;
  EXPECT_TRUE(contains(text, "ptr \"kiln-thread-context\" %0, ptr %x")) << text;
  EXPECT_EQ(pollsIn(text), 1u) << "the loop polls through the thread it got back:\n" << text;
  std::string caller = textOf(*module->getFunction("entry"));
  EXPECT_TRUE(contains(caller, "call i64 @spin(ptr %thread, ptr noundef %x)"))
      << "the caller passes its thread and keeps the argument's attributes:\n"
      << caller;
}

} // namespace
