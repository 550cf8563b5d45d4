//===- tests/frontend/semantic_hash_test.cpp - What changes a hash --------===//
//
// The semantic hash is the source half of the compilation cache key: it must
// change with anything that changes compiled code, and nothing else.
//
//===----------------------------------------------------------------------===//

#include "frontend/frontend.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

const char *const base = R"py(from numba import cuda, float32
import math

SCALE = 2.0
UNUSED = 7


@cuda.jit(device=True)
def helper(v):
    return v * SCALE


@cuda.jit("void(float32[::1])")
def first(x):
    """Doubles every element."""
    i = cuda.grid(1)
    if i < x.size:
        x[i] = helper(x[i])  # scale it


@cuda.jit("void(float32[::1])")
def second(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = math.sqrt(x[i])
)py";

/// The hash of `kernel`'s first specialization in `source`.
std::string hashOf(const std::string &source, llvm::StringRef kernel) {
  FrontendOptions options;
  options.readPyproject = false;
  std::unique_ptr<CheckedModule> checked = checkSource("kernels.py", source, options);
  EXPECT_FALSE(checked->hasErrors()) << source;
  for (const CheckedModule::Function &function : checked->functions)
    if (function.decl->name == kernel && !function.specializations.empty())
      return toHex(checked->hashOf(*function.specializations.front()));
  ADD_FAILURE() << "no specialization of " << kernel.str();
  return "";
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the source";
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

TEST(SemanticHashTest, IsStableAcrossRuns) {
  EXPECT_EQ(hashOf(base, "first"), hashOf(base, "first"));
}

TEST(SemanticHashTest, CommentsFormattingAndDocstringsDoNotChangeIt) {
  std::string before = hashOf(base, "first");
  EXPECT_EQ(hashOf(replaced(base, "# scale it", "# times SCALE"), "first"), before);
  EXPECT_EQ(hashOf(replaced(base, "x[i] = helper(x[i])", "x[i]   =   helper( (x[i]) )"), "first"),
            before);
  EXPECT_EQ(hashOf(replaced(base, "Doubles every element.", "Scales x."), "first"), before);
  EXPECT_EQ(hashOf(replaced(base, "\n\n@cuda.jit(\"void(float32[::1])\")\ndef first",
                            "\n\n\n\n@cuda.jit(\"void(float32[::1])\")\ndef first"),
                   "first"),
            before);
}

TEST(SemanticHashTest, EditingAnotherKernelDoesNotChangeIt) {
  EXPECT_EQ(hashOf(replaced(base, "math.sqrt(x[i])", "math.exp(x[i])"), "first"),
            hashOf(base, "first"));
}

TEST(SemanticHashTest, EditingTheKernelChangesIt) {
  EXPECT_NE(hashOf(replaced(base, "if i < x.size:\n        x[i] = helper",
                            "if i <= x.size:\n        x[i] = helper"),
                   "first"),
            hashOf(base, "first"));
}

TEST(SemanticHashTest, EditingACalledDeviceFunctionChangesIt) {
  EXPECT_NE(hashOf(replaced(base, "return v * SCALE", "return v * SCALE + 1"), "first"),
            hashOf(base, "first"));
  // ... but not a kernel that does not call it.
  EXPECT_EQ(hashOf(replaced(base, "return v * SCALE", "return v * SCALE + 1"), "second"),
            hashOf(base, "second"));
}

TEST(SemanticHashTest, TheValueOfAConstantReadChangesIt) {
  // first reads SCALE through helper; second reads no constant.
  EXPECT_NE(hashOf(replaced(base, "SCALE = 2.0", "SCALE = 3.0"), "first"), hashOf(base, "first"));
  EXPECT_EQ(hashOf(replaced(base, "SCALE = 2.0", "SCALE = 3.0"), "second"), hashOf(base, "second"));
  EXPECT_EQ(hashOf(replaced(base, "UNUSED = 7", "UNUSED = 8"), "first"), hashOf(base, "first"));
}

TEST(SemanticHashTest, OptionsAndSignaturesChangeIt) {
  EXPECT_NE(hashOf(replaced(base, "@cuda.jit(\"void(float32[::1])\")\ndef first",
                            "@cuda.jit(\"void(float32[::1])\", fastmath=True)\ndef first"),
                   "first"),
            hashOf(base, "first"));
  EXPECT_NE(hashOf(replaced(base, "@cuda.jit(\"void(float32[::1])\")\ndef first",
                            "@cuda.jit(\"void(float32[:])\")\ndef first"),
                   "first"),
            hashOf(base, "first"));
}

TEST(SemanticHashTest, WithLineInfoSourcePositionsCount) {
  std::string withLineinfo =
      replaced(base, "@cuda.jit(\"void(float32[::1])\")\ndef second",
               "@cuda.jit(\"void(float32[::1])\", lineinfo=True)\ndef second");
  std::string moved = replaced(withLineinfo, "UNUSED = 7\n", "UNUSED = 7\n\n");
  EXPECT_NE(hashOf(moved, "second"), hashOf(withLineinfo, "second"));
  // Without line information, positions do not matter.
  EXPECT_EQ(hashOf(replaced(base, "UNUSED = 7\n", "UNUSED = 7\n\n"), "second"),
            hashOf(base, "second"));
}

} // namespace
} // namespace kiln
