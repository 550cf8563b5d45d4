//===- tests/backend/optimize_test.cpp ------------------------------------===//
//
// What a target's tuning changes in LLVM's -O3 pipeline, on IR written by
// hand for the NVPTX machine Kiln compiles kernels with.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/optimize.h"
#include "backend/codegen/target_machines.h"
#include "tests/backend/llvm_ir_testing.h"

namespace {

using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

// A grid-stride loop whose body, where the element is positive, adds the
// square root of a loop-invariant value: the square root is invariant but
// runs only in the iterations that take the branch.
constexpr const char *invariantBehindBranch = R"(
target triple = "nvptx64-nvidia-cuda"

define void @kernel(ptr addrspace(1) %out, i64 %n, double %angle) {
entry:
  %start = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = zext i32 %start to i64
  %any = icmp slt i64 %first, %n
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [ %first, %entry ], [ %next, %latch ]
  %address = getelementptr double, ptr addrspace(1) %out, i64 %i
  %element = load double, ptr addrspace(1) %address
  %positive = fcmp ogt double %element, 0.0
  br i1 %positive, label %add, label %latch
add:
  %root = call double @llvm.sqrt.f64(double %angle)
  %scaled = fdiv double %root, 7.0
  %sum = fadd double %element, %scaled
  store double %sum, ptr addrspace(1) %address
  br label %latch
latch:
  %next = add nuw nsw i64 %i, 1024
  %again = icmp slt i64 %next, %n
  br i1 %again, label %loop, label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare double @llvm.sqrt.f64(double)
)";

// A loop over bytes: out[i] = in[i] & mask, as a ufunc over int8 arrays
// compiles.
constexpr const char *byteLoop = R"(
target triple = "nvptx64-nvidia-cuda"

define void @kernel(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %in, i64 %n, i8 %mask) {
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %source = getelementptr i8, ptr addrspace(1) %in, i64 %i
  %byte = load i8, ptr addrspace(1) %source
  %masked = and i8 %byte, %mask
  %target = getelementptr i8, ptr addrspace(1) %out, i64 %i
  store i8 %masked, ptr addrspace(1) %target
  %next = add nuw nsw i64 %i, 1
  %again = icmp slt i64 %next, %n
  br i1 %again, label %loop, label %exit
exit:
  ret void
}
)";

/// `source`'s kernel after -O3 for sm_80 as `tuning` changes it, as text;
/// empty (and a test failure) if that fails.
std::string optimized(const kiln::backend::PipelineTuning &tuning,
                      const char *source = invariantBehindBranch) {
  kiln::backend::initializeTargets();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      kiln::backend::createNvptxMachine(80, kiln::JitOptions());
  if (!machine) {
    ADD_FAILURE() << "no NVPTX machine: " << llvm::toString(machine.takeError());
    return "";
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(source, context);
  if (!module)
    return "";
  if (llvm::Error error =
          kiln::backend::optimizeModule(*module, **machine, /*optimize=*/true, tuning)) {
    ADD_FAILURE() << "optimizeModule failed: " << llvm::toString(std::move(error));
    return "";
  }
  if (!isValidAfter(*module, "-O3"))
    return "";
  return textOf(*module);
}

/// The text of the block labelled `label` in `function`, up to the next
/// label; empty (and a test failure) if there is no such block.
std::string block(const std::string &function, const std::string &label) {
  size_t start = function.find("\n" + label + ":");
  if (start == std::string::npos) {
    ADD_FAILURE() << "no block '" << label << "' in:\n" << function;
    return "";
  }
  size_t end = function.find(":", function.find('\n', start + 1));
  return function.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(OptimizePipeline, DefaultPipelineHoistsAnInvariantOutOfABranchOfTheLoop) {
  std::string result = optimized({});
  ASSERT_FALSE(result.empty());
  EXPECT_FALSE(contains(block(result, "add"), "llvm.sqrt.f64")) << result;
  EXPECT_TRUE(contains(result, "llvm.sqrt.f64(double %angle)")) << result;
}

TEST(OptimizePipeline, WithoutSpeculativeHoistingTheInvariantStaysInItsBranch) {
  kiln::backend::PipelineTuning tuning;
  tuning.speculativeHoisting = false;
  std::string result = optimized(tuning);
  ASSERT_FALSE(result.empty());
  EXPECT_TRUE(contains(block(result, "add"), "llvm.sqrt.f64(double %angle)")) << result;
}

TEST(OptimizePipeline, DefaultPipelineVectorizesALoopOverBytes) {
  std::string result = optimized({}, byteLoop);
  ASSERT_FALSE(result.empty());
  EXPECT_TRUE(contains(result, "x i8>")) << result;
}

TEST(OptimizePipeline, WithoutTheLoopVectorizerTheLoopStaysOnBytes) {
  kiln::backend::PipelineTuning tuning;
  tuning.vectorizeLoops = false;
  std::string result = optimized(tuning, byteLoop);
  ASSERT_FALSE(result.empty());
  EXPECT_FALSE(contains(result, "x i8>")) << result;
  EXPECT_TRUE(contains(result, "store i8")) << result;
}

} // namespace
