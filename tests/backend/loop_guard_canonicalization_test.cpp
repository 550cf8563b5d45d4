//===- tests/backend/loop_guard_canonicalization_test.cpp -----------------===//
//
// The rewrites that put a kernel's guards in the shapes LLVM's inductive
// range check elimination reads, on IR written by hand: what changes, what
// stays, and that the function stays valid.
//
//===----------------------------------------------------------------------===//

#include "backend/codegen/loop_guard_canonicalization.h"
#include "backend/codegen/optimize.h"
#include "tests/backend/llvm_ir_testing.h"

namespace {

using kiln::testing::contains;
using kiln::testing::isValidAfter;
using kiln::testing::parseTestIR;
using kiln::testing::textOf;

/// `source` after the pass, as text; empty (and a test failure) when it
/// does not parse or the result does not verify.
std::string canonicalized(const char *source) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parseTestIR(source, context);
  if (!module)
    return "";
  llvm::PassBuilder builder;
  kiln::backend::AnalysisManagers analyses(builder);
  llvm::FunctionPassManager passes;
  passes.addPass(kiln::backend::CanonicalizeLoopGuardsPass());
  for (llvm::Function &function : *module)
    if (!function.isDeclaration())
      passes.run(function, analyses.functions);
  if (!isValidAfter(*module, "the pass"))
    return "";
  return textOf(*module);
}

// A loop over i from 0 to n whose body runs where `%guard` holds.
constexpr const char *guardedLoop = R"(
define void @f(ptr %out, i64 %base, i64 %n, ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %latch ]
  %q = phi ptr [ %p, %entry ], [ %q.next, %latch ]
  %x = add nuw nsw i64 %base.nonneg, %i
  %guard = GUARD
  br i1 %guard, label %body, label %latch
body:
  %address = getelementptr float, ptr %out, i64 %x
  store float 1.0, ptr %address
  br label %latch
latch:
  %next = add nuw nsw i64 %i, 1
  %q.next = getelementptr i8, ptr %q, i64 1
  %again = icmp ult i64 %next, %n
  br i1 %again, label %loop, label %exit
exit:
  ret void
}
)";

std::string withGuard(const std::string &guard) {
  std::string source = guardedLoop;
  source.replace(source.find("GUARD"), 5, guard);
  // base is a non-negative i64: a zero-extended i32.
  source.replace(source.find("%base.nonneg"), 12, "%base");
  source.replace(source.find("i64 %base, i64 %n"), 17, "i32 %base32, i64 %n");
  source.replace(source.find("entry:\n"), 7, "entry:\n  %base = zext i32 %base32 to i64\n");
  return source;
}

TEST(CanonicalizeLoopGuards, ANonNegativeCountUnequalToZeroBecomesARangeCheck) {
  std::string result = canonicalized(withGuard("icmp ne i64 %x, 0").c_str());
  EXPECT_TRUE(contains(result, "%x.less.one = add nsw i64 %x, -1")) << result;
  EXPECT_TRUE(contains(result, "%guard = icmp sge i64 %x.less.one, 0")) << result;
}

TEST(CanonicalizeLoopGuards, ANonNegativeCountEqualToZeroBecomesTheOppositeRangeCheck) {
  std::string result = canonicalized(withGuard("icmp eq i64 %x, 0").c_str());
  EXPECT_TRUE(contains(result, "%guard = icmp slt i64 %x.less.one, 0")) << result;
}

TEST(CanonicalizeLoopGuards, APointerComparedWithNullStaysAsItIs) {
  std::string result = canonicalized(withGuard("icmp ne ptr %q, null").c_str());
  EXPECT_TRUE(contains(result, "%guard = icmp ne ptr %q, null")) << result;
  EXPECT_FALSE(contains(result, "less.one")) << result;
}

TEST(CanonicalizeLoopGuards, AValueThatMayBeNegativeStaysAsItIs) {
  std::string source = withGuard("icmp ne i64 %y, 0");
  source.replace(source.find("  %guard"), 0, "  %y = sub i64 %x, %n\n");
  std::string result = canonicalized(source.c_str());
  EXPECT_TRUE(contains(result, "%guard = icmp ne i64 %y, 0")) << result;
}

// An index check of a 2-D array: the loop is left for the error when
// either index is out of range.
constexpr const char *indexCheck = R"(
define void @g(ptr %out, i64 %rows, i64 %columns, i64 %y, i64 %n) {
entry:
  br label %loop
loop:
  %x = phi i64 [ 0, %entry ], [ %next, %ok ]
  %bad.y = icmp uge i64 %y, %rows
  %bad.x = icmp uge i64 %x, %columns
  %bad = select i1 %bad.y, i1 true, i1 %bad.x
  br i1 %bad, label %error, label %ok
ok:
  %address = getelementptr float, ptr %out, i64 %x
  store float 1.0, ptr %address
  %next = add nuw nsw i64 %x, 1
  %again = icmp ult i64 %next, %n
  br i1 %again, label %loop, label %exit
error:
  ret void
exit:
  ret void
}
)";

TEST(CanonicalizeLoopGuards, AnIndexCheckThatLeavesTheLoopBecomesTestsThatStay) {
  std::string result = canonicalized(indexCheck);
  EXPECT_TRUE(contains(result, "%bad.y.passes = icmp ult i64 %y, %rows")) << result;
  EXPECT_TRUE(contains(result, "%bad.x.passes = icmp ult i64 %x, %columns")) << result;
  EXPECT_TRUE(contains(result, "select i1 %bad.y.passes, i1 %bad.x.passes, i1 false")) << result;
  EXPECT_TRUE(contains(result, "label %ok, label %error")) << result;
  EXPECT_FALSE(contains(result, "%bad = select")) << result;
}

} // namespace
